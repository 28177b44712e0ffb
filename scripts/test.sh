#!/usr/bin/env bash
# Bootstraps the dependencies, builds halo3d and runs every test through ctest (MPI tests at 1, 2, 4 and 8
# ranks). Then, when nvcc exists, compiles the library against the CUDA Kokkos (compile only: no GPU is
# needed). This is the README's test command; .ci/run calls exactly this.
#
#   HALO3D_BUILD       build directory (default build/)
#   HALO3D_SKIP_CUDA=1 skip the CUDA compile step
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build="${HALO3D_BUILD:-$repo/build}"
start=$(date +%s)
echo "== configure and build ($build)"
halo3d_build "$build"

echo "== ctest"
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 600)

deps="${HALO3D_DEPS:-$HOME/.cache/halo3d/deps}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [[ "${HALO3D_SKIP_CUDA:-0}" == 1 ]]; then
  echo "== notice: HALO3D_SKIP_CUDA=1: CUDA compile step skipped"
elif [[ -n "${Kokkos_ROOT:-}" ]]; then
  echo "== notice: Kokkos_ROOT is set (user Kokkos): CUDA compile step against the cached CUDA Kokkos skipped"
elif [[ ! -x "$cuda_home/bin/nvcc" ]]; then
  echo "== notice: no nvcc at $cuda_home/bin/nvcc: CUDA compile step skipped"
else
  echo "== CUDA compile of the library (Kokkos CUDA, sm_80, $deps/kokkos-cuda)"
  # nvcc_wrapper 3.4 defaults to sm_35, which CUDA 13 rejects, so -arch goes in explicitly.
  PATH="$cuda_home/bin:$PATH" cmake -S "$repo" -B "$build-cuda" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$deps/kokkos-cuda/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=sm_80" \
    -DKokkos_ROOT="$deps/kokkos-cuda" -DCMAKE_PREFIX_PATH="$deps/kokkos-cuda" \
    -DHALO3D_ENABLE_TESTS=OFF -DHALO3D_ENABLE_BENCHMARKS=OFF
  # The library targets only: the apps and the fp64 build of nn add compile time and no new device code.
  PATH="$cuda_home/bin:$PATH" cmake --build "$build-cuda" -j "$jobs" \
    --target halo3d_core halo3d_kernels halo3d_comm halo3d_io halo3d_nn
  echo "== CUDA compile step passed"
fi
echo "== all done in $(( $(date +%s) - start )) s"
