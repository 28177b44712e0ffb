#!/usr/bin/env bash
# Runs one CosmoFlow training step (64^3, width 0.25, batch 2) in halo3d and in PyTorch 1.13 on this machine, in
# the same run and alternating, and prints the throughputs:
#   halo3d 1 rank x 2 threads; PyTorch 2 threads; halo3d 2 ranks x 1 thread (grid 1x2x1x1).
# Usage: scripts/compare_cosmoflow_torch.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$repo/build}"
rounds="${2:-3}"
bench="$build/bench/nn/bench_cosmoflow_step"
[[ -x "$bench" ]] || { echo "no $bench: build halo3d with benchmarks first" >&2; exit 1; }
python="${PYTHON:-/usr/bin/python3}"
mpi=(mpirun --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)
filter='cosmoflow_step/W0.25_N2/size:64/overlap:1'
ours() { # RANKS THREADS
  # Open MPI binds each rank of a 1-2 rank job to one core: a rank with several threads must be unbound, or
  # its threads share one core; single-threaded ranks keep the binding.
  local bind=(); (( $2 > 1 )) && bind=(--bind-to none)
  OMP_NUM_THREADS=$2 OMP_PROC_BIND=false "${mpi[@]}" "${bind[@]}" -np "$1" "$bench" --benchmark_filter="$filter" \
    --benchmark_min_time=5 2>/dev/null | grep -o 'samples_per_s=[0-9.]*' | head -1 | cut -d= -f2
}
torch_rate() {
  "$python" "$repo/bench/nn/cosmoflow_torch.py" --threads 2 --steps 5 --repeats 1 | grep -o 'samples_per_s=[0-9.]*' |
    cut -d= -f2
}
printf '%-6s %-22s %-22s %-22s\n' round "halo3d 1x2thr" "pytorch 2thr" "halo3d 2 ranks x 1thr"
for r in $(seq "$rounds"); do
  a=$(ours 1 2); t=$(torch_rate); b=$(ours 2 1)
  [[ -n "$a" && -n "$t" && -n "$b" ]] || { echo "a run printed no samples_per_s" >&2; exit 1; }
  printf '%-6s %-22s %-22s %-22s\n' "$r" "$a" "$t" "$b"
  echo "$a $t $b" >> /tmp/halo3d_compare_$$.txt
done
awk '{a+=$1; t+=$2; b+=$3; n++} END {printf "mean samples/s: halo3d %.3f, pytorch %.3f, halo3d 2x1 %.3f\n", a/n, t/n, b/n;
  printf "halo3d / pytorch (2 threads): %.2f;  (2 ranks x 1 thread) / (1 rank x 2 threads): %.2f\n", a/t, b/a}' \
  /tmp/halo3d_compare_$$.txt
rm -f /tmp/halo3d_compare_$$.txt
