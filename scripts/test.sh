#!/usr/bin/env bash
# Bootstraps the dependencies, checks the formatting (scripts/check_format.sh), builds halo3d and runs every
# test through ctest (MPI tests at 1, 2, 4 and 8 ranks); then the sanitizer builds (AddressSanitizer +
# UndefinedBehaviorSanitizer over the unit and MPI suites at 1, 2 and 4 ranks, ThreadSanitizer over the I/O
# thread and prefetch suites); then, when nvcc exists, compiles against the CUDA Kokkos (compile only: no GPU
# is needed). This is the README's test command; .ci/run calls exactly this.
#
#   HALO3D_BUILD       build directory (default build/)
#   HALO3D_SKIP_CUDA=1 skip the CUDA compile step
#   HALO3D_SKIP_SANITIZERS=1 skip the ASan + UBSan and ThreadSanitizer builds and their test runs
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build="${HALO3D_BUILD:-$repo/build}"
start=$(date +%s)
echo "== format check"
"$repo/scripts/check_format.sh"
echo "== configure and build ($build)"
halo3d_build "$build"

echo "== ctest"
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 600)

# Sanitizers: the GoogleTest suites (unit, and MPI at 1, 2 and 4 ranks) under AddressSanitizer +
# UndefinedBehaviorSanitizer, and the I/O thread and prefetch suites under ThreadSanitizer. Benchmarks, the
# application end-to-end runs and the 8-rank variants stay in the plain build above. Open MPI and HDF5 keep
# memory until exit, so leak detection is off; the ThreadSanitizer build runs one OpenMP thread (libgomp is
# not instrumented, so its barriers would look like races) with suppressions for the uninstrumented MPI and
# HDF5 libraries (scripts/tsan.supp).
if [[ "${HALO3D_SKIP_SANITIZERS:-0}" == 1 ]]; then
  echo "== notice: HALO3D_SKIP_SANITIZERS=1: sanitizer builds skipped"
else
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer build ($build-asan)"
  halo3d_build "$build-asan" -DHALO3D_ENABLE_SANITIZERS=ON -DHALO3D_ENABLE_BENCHMARKS=OFF \
    -DCMAKE_CXX_FLAGS=-g1
  echo "== ctest under ASan + UBSan (unit and MPI suites at 1, 2 and 4 ranks)"
  (cd "$build-asan" && ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:strict_string_checks=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest --output-on-failure -j "$jobs" --timeout 900 -E '\.np8$|^install\.|^cmake\.|^apps\.')
  echo "== ThreadSanitizer build of the I/O suites ($build-tsan)"
  halo3d_build "$build-tsan" -DHALO3D_ENABLE_TSAN=ON -DHALO3D_ENABLE_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS=-g1 \
    -- --target halo3d_io_reader_tests halo3d_io_checkpoint_tests
  echo "== ctest under ThreadSanitizer (I/O thread, prefetch and checkpoint suites at 1, 2 and 4 ranks)"
  (cd "$build-tsan" && TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$repo/scripts/tsan.supp" \
     OMP_NUM_THREADS=1 ctest --output-on-failure -j "$jobs" --timeout 900 \
     -R '^halo3d_io_(reader_tests\.np[124]|checkpoint_tests\.)')
fi

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
