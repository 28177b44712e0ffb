#!/usr/bin/env bash
# The README's first command. Until the CosmoFlow app lands, the demo is the halo-exchange benchmark:
# a (1, 16, 64, 64, 64) float tensor split over 2 MPI ranks (grid 1x2x1x1), ghost width 4 (1 MiB per face),
# halo3d's exchange side by side with raw MPI_Sendrecv of the same bytes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build="${HALO3D_BUILD:-$repo/build}"
halo3d_build "$build" > "$build.demo-build.log" 2>&1 || { tail -40 "$build.demo-build.log"; exit 1; }
echo "== halo exchange on 2 ranks (grid 1x2x1x1), 1 MiB per face"
OMP_NUM_THREADS=1 OMP_PROC_BIND=false mpirun "${mpirun_flags[@]}" -np 2 "$build/bench/bench_halo_exchange" \
  --benchmark_filter='(raw_sendrecv|halo_gather)/N1_C16_D64/halo:4/every_dim:1/direct:[01]' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_min_time=0.2
