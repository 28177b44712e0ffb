#!/usr/bin/env bash
# soak.sh: kill training at random and check that nothing is lost (not in CI; a few minutes on 2 cores).
#
# CosmoFlow (32^3, width 0.25, BatchNorm over the whole batch, batch 8) trains for STEPS steps on 4 ranks with a
# checkpoint every EVERY steps. KILLS times, after a random delay, one random rank gets SIGKILL (MPI then ends
# the job); the run is restarted with --resume=if-any, each time on the next of the grids below. The last restart
# runs to the end. Then:
#   1. replay: the same segments (grid g_i from checkpoint c_i to c_i+1, where the soak resumed) without any
#      kill, each stopping cleanly at the step the next one resumes from. Resuming is exact, so the soak's
#      final checkpoint (weights, optimizer state, counters) and its losses must equal the replay's bit for
#      bit. This is the pass/fail check.
#   2. for information, the final weights against one uninterrupted run on the first grid (other grids sum in
#      another order: equal up to float rounding, which 300 Adam steps amplify).
#
#   scripts/soak.sh                     # build/ (HALO3D_BUILD), work in /tmp/halo3d-soak (HALO3D_SOAK_DIR)
#   SOAK_SEED=7 KILLS=10 STEPS=300 EVERY=10 scripts/soak.sh
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mpirun_flags=(--oversubscribe)
[[ $(id -u) -eq 0 ]] && mpirun_flags+=(--allow-run-as-root)

build="${HALO3D_BUILD:-$repo/build}"
work="${HALO3D_SOAK_DIR:-/tmp/halo3d-soak}"
kills="${KILLS:-10}"
steps="${STEPS:-300}"
every="${EVERY:-10}"
RANDOM="${SOAK_SEED:-1}"
grids=(1x4x1x1 1x2x2x1 2x2x1x1 4x1x1x1)
model=(--width 0.25 --batchnorm --bn-stats global --batch 8)
cosmoflow="$build/apps/cosmoflow/cosmoflow"
tool="$build/tests/io/halo3d_io_checkpoint_tool"
for exe in "$cosmoflow" "$tool" "$build/apps/datagen/halo3d-datagen"; do
  [[ -x "$exe" ]] || { echo "soak: $exe is missing (build the cosmoflow, halo3d-datagen and" \
                            "halo3d_io_checkpoint_tool targets)"; exit 1; }
done
export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
rm -rf "$work" && mkdir -p "$work"
"$build/apps/datagen/halo3d-datagen" cosmoflow --size 32 --count 64 --samples-per-file 16 --seed 5 \
  --out "$work/data" > /dev/null || exit 1

train() {  # NAME GRID EXTRA...: one launch; output appended to NAME.log
  local name="$1" grid="$2"; shift 2
  mpirun "${mpirun_flags[@]}" -np 4 "$cosmoflow" train --grid "$grid" --data "$work/data" "${model[@]}" \
    --steps "$steps" --seed 11 --checkpoint-every "$every" --keep-checkpoints 2 --checkpoint-dir "$work/ck_$name" \
    --metrics "$work/$name.jsonl" "$@" >> "$work/$name.log" 2>&1
}
ranks_of() {  # PID: the cosmoflow processes below PID
  local p
  for p in $(pgrep -P "$1"); do
    [[ "$(cat "/proc/$p/comm" 2> /dev/null)" == cosmoflow ]] && echo "$p"
    ranks_of "$p"
  done
}
resumed_at() {  # the step the latest launch of soak.log resumed from (0: from scratch)
  local line
  line="$(grep -E "resuming from .* at step [0-9]+|starting from scratch" "$work/soak.log" | tail -1)"
  [[ "$line" =~ at\ step\ ([0-9]+) ]] && echo "${BASH_REMATCH[1]}" || echo 0
}

echo "== soak: $steps steps, checkpoint every $every, $kills kills, grids ${grids[*]}, seed ${SOAK_SEED:-1}"
segments=()  # "grid:first_step" of every launch
for ((k = 0; k <= kills; ++k)); do
  grid="${grids[k % ${#grids[@]}]}"
  echo "== launch $((k + 1)) on grid $grid" >> "$work/soak.log"
  if ((k == kills)); then
    train soak "$grid" --resume=if-any || { tail -30 "$work/soak.log"; echo "soak: the final run failed"; exit 1; }
    segments+=("$grid:$(resumed_at)")
    break
  fi
  train soak "$grid" --resume=if-any &
  job=$!
  delay="$((15 + RANDOM % 41))"  # tenths of a second: 1.5 to 5.5 s, start-up (about 1.5 s) included
  delay="${delay%?}.${delay: -1}"
  sleep "$delay"
  ranks=($(ranks_of "$job"))
  if ((${#ranks[@]} == 0)); then
    wait "$job"
    echo "soak: launch $((k + 1)) ended by itself within ${delay} s (status $?); make STEPS larger"
    exit 1
  fi
  victim=$((RANDOM % ${#ranks[@]}))
  kill -KILL "${ranks[victim]}"
  wait "$job"
  status=$?
  segments+=("$grid:$(resumed_at)")
  done_steps="$(grep -c '"phase":"train"' "$work/soak.jsonl" 2> /dev/null || echo 0)"
  echo "kill $((k + 1)): launch on grid $grid from step ${segments[k]#*:}, killed after ${delay} s: rank $victim" \
       "(pid ${ranks[victim]}), mpirun status $status; train records so far $done_steps"
  ((status != 0)) || { echo "soak: the killed job exited 0"; exit 1; }
done

echo "== replay of the segments without kills: ${segments[*]}"
for ((i = 0; i < ${#segments[@]}; ++i)); do
  grid="${segments[i]%%:*}"
  if ((i + 1 < ${#segments[@]})); then stop="${segments[i + 1]#*:}"; else stop="$steps"; fi
  first="${segments[i]#*:}"
  ((stop > first)) || continue  # a segment that reached no checkpoint: its steps were all redone
  mpirun "${mpirun_flags[@]}" -np 4 "$cosmoflow" train --grid "$grid" --data "$work/data" "${model[@]}" \
    --steps "$stop" --seed 11 --checkpoint-every "$every" --keep-checkpoints 2 --checkpoint-dir "$work/ck_replay" \
    --metrics "$work/replay.jsonl" --resume=if-any >> "$work/replay.log" 2>&1 ||
    { tail -30 "$work/replay.log"; echo "soak: replay segment $i failed"; exit 1; }
done
echo "== uninterrupted run on ${grids[0]}"
train single "${grids[0]}" || { tail -30 "$work/single.log"; echo "soak: the uninterrupted run failed"; exit 1; }

final="checkpoint-$(printf %012d "$steps").h5"
status=0
if "$tool" compare "$work/ck_soak/$final" "$work/ck_replay/$final"; then
  weights="equal"
else
  weights="DIFFERENT"; status=1
fi
losses="$(python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def last_losses(name):
    out = {}
    for line in open(f"{work}/{name}.jsonl"):
        r = json.loads(line)
        if r["phase"] == "train":
            out[r["step"]] = r["loss"]  # a step redone after a kill: the last record counts
    return out
soak, replay = last_losses("soak"), last_losses("replay")
redone = sum(1 for line in open(f"{work}/soak.jsonl") if '"phase":"train"' in line) - len(soak)
print(f"{'equal' if soak == replay else 'DIFFERENT'} ({len(soak)} steps, {redone} steps redone after kills)")
PY
)"
[[ "$losses" == equal* ]] || status=1
values="$(h5ls -r "$work/ck_single/$final/model" | sed -n 's/.*Dataset {\(.*\)}.*/\1/p' |
          awk -F', ' '{ n = 1; for (i = 1; i <= NF; ++i) n *= ($i == "SCALAR" ? 1 : $i); t += n } END { print t }')"
over="$(h5diff -r -p 1e-2 "$work/ck_soak/$final" "$work/ck_single/$final" /model /model | awk '/^\[/ { n++ } END { print n + 0 }')"
last_loss() { grep '"phase":"train"' "$work/$1.jsonl" | grep "\"step\":$((steps - 1))," | tail -1 |
              sed -n 's/.*"loss":\([-0-9.eE+]*\).*/\1/p'; }
echo "== result: $kills kills, $((${#segments[@]} - 1)) resumes on grids ${grids[*]}"
echo "final checkpoint against the replay without kills: $weights (weights, optimizer state, counters)"
echo "losses against the replay: $losses"
echo "for information, against one uninterrupted run on ${grids[0]}: $over of $values model values differ by more" \
     "than 1% (float rounding on other grids, amplified over $steps steps); final loss $(last_loss soak) against" \
     "$(last_loss single)"
[[ $status -eq 0 ]] && echo "PASS" || echo "FAIL"
exit $status
