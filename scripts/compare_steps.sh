#!/usr/bin/env bash
# Before/after timing of the CosmoFlow and U-Net training steps: runs the step benchmarks of two builds in
# turns, round after round, so that the machine's drift falls on both alike, and prints each case's per-round
# times, medians and the ratio new/old.
#
#   scripts/compare_steps.sh OLD_BUILD NEW_BUILD [ROUNDS=5] [OUT=compare-steps]
#
# Cases: CosmoFlow 64^3 width 0.25 (global batch 2) on 1 rank x 2 threads and on 2 ranks x 1 thread
# (grid 1x2x1x1), and the U-Net 64^3 (base 8, depth 3) on 1 rank x 2 threads. Build the old one from a worktree
# of the old commit (git worktree add ../old REV; cmake as for the new; cmake --build --target
# bench_cosmoflow_step bench_unet_step).
set -euo pipefail
old="$1"; new="$2"; rounds="${3:-5}"; out="${4:-compare-steps}"
mkdir -p "$out"
mpi=(mpirun --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
cosmo='cosmoflow_step/W0.25_N2/size:64/overlap:1/'
unet='unetStep/edge:64/base:8/depth:3/batch:1/'
run() {  # build case threads ranks bench filter
  local bind=()
  (($3 > 1)) && bind=(--bind-to none)  # Open MPI binds a small job's ranks to one core each
  OMP_NUM_THREADS="$3" OMP_PROC_BIND=false "${mpi[@]}" "${bind[@]}" -np "$4" "$1/bench/nn/$5" \
    --benchmark_filter="$6" --benchmark_min_time=3 --benchmark_format=json 2> /dev/null
}
for r in $(seq 1 "$rounds"); do
  for v in old new; do
    b="$old"; [[ $v == new ]] && b="$new"
    run "$b" cosmo_np1 2 1 bench_cosmoflow_step "$cosmo" > "$out/cosmo_np1_${v}_$r.json"
    run "$b" cosmo_np2 1 2 bench_cosmoflow_step "$cosmo" > "$out/cosmo_np2_${v}_$r.json"
    run "$b" unet_np1 2 1 bench_unet_step "$unet" > "$out/unet_np1_${v}_$r.json"
  done
  echo "round $r of $rounds done"
done
python3 - "$out" << 'PY'
import glob, json, statistics, sys
out = sys.argv[1]
for case in ("cosmo_np1", "cosmo_np2", "unet_np1"):
    times = {}
    for v in ("old", "new"):
        times[v] = []
        for f in sorted(glob.glob(f"{out}/{case}_{v}_*.json")):
            text = open(f).read()
            b = json.loads(text[text.index("{"):])["benchmarks"][0]
            times[v].append(b["real_time"])
    mo, mn = statistics.median(times["old"]), statistics.median(times["new"])
    print(f"{case}: old {' '.join('%.1f' % t for t in times['old'])} (median {mo:.1f} ms); "
          f"new {' '.join('%.1f' % t for t in times['new'])} (median {mn:.1f} ms); new/old {mn / mo:.3f}")
PY
