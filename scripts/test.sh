#!/usr/bin/env bash
# Bootstraps the dependencies, checks the formatting (scripts/check_format.sh), builds halo3d and runs every
# test through ctest (MPI tests at 1, 2, 4 and 8 ranks); then the sanitizer builds (AddressSanitizer +
# UndefinedBehaviorSanitizer over the unit and MPI suites at 1, 2 and 4 ranks, ThreadSanitizer over the I/O
# thread and prefetch suites); then scripts/device_check.sh --dry-run (the GPU check's flow on the OpenMP
# backend); then, when nvcc exists, compiles every target against the CUDA Kokkos (compile only: no GPU is needed).
# This is the README's test command; .ci/run calls exactly this.
#
#   HALO3D_BUILD       build directory (default build/)
#   HALO3D_SKIP_CUDA=1 skip the CUDA compile step
#   HALO3D_CI_BUDGET   seconds the whole script may take, counted from its start (the bootstrap included): a
#                      sanitizer build that would run past it (less its tests' reserve) and the CUDA compile stop
#                      there with a notice, and a stopped build's tests are skipped in that run; what it compiled
#                      stays in ccache, so the next run continues from there (default 2000, 33 minutes: CI's clone
#                      and set-up add 6-8 minutes, and CI should stay under 45; what may follow the budget, the
#                      CUDA stage's minimum and the device dry run, is 1-2 minutes. With separate caps for the
#                      sanitizers (70 minutes) and the CUDA stage, a partly cold run took 3127 s in CI)
#   HALO3D_SKIP_DEVICE_DRYRUN=1 skip scripts/device_check.sh --dry-run
#   HALO3D_SKIP_SANITIZERS=1 skip the ASan + UBSan and ThreadSanitizer builds and their test runs
set -euo pipefail
# The clock starts before the bootstrap: on a fresh machine it installs packages and builds two Kokkos (about
# 5 minutes), and CI's 45 minutes count them too (a cold run took 2861 s when the clock started after it).
start=$(date +%s)
ci_budget="${HALO3D_CI_BUDGET:-2000}"
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build="${HALO3D_BUILD:-$repo/build}"
if [[ -n "${HALO3D_CI_LIMIT:-}" ]]; then
  echo "== notice: HALO3D_CI_LIMIT is no longer read: HALO3D_CI_BUDGET ($ci_budget s) bounds every stage"
fi
echo "== format check"
"$repo/scripts/check_format.sh"
main_backend=host
halo3d_kokkos_has_cuda "$kokkos_prefix" && main_backend="CUDA $(halo3d_kokkos_cuda_arch "$kokkos_prefix")"
echo "== configure and build ($build, Kokkos at $kokkos_prefix, backend $main_backend)"
halo3d_build "$build"

echo "== ctest"
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 600)

# Builds an optional stage's directory ($1, then halo3d_build's arguments) within HALO3D_CI_BUDGET, keeping
# `reserve` seconds ($2) of it for the stage's tests. Fails (status 1, with a notice) when the budget is reached
# first.
build_within_limit() {
  local dir="$1" reserve="$2"; shift 2
  local left=$(( ci_budget - ($(date +%s) - start) - reserve ))
  if ((left < 60)); then
    echo "== notice: $(( $(date +%s) - start )) s gone, HALO3D_CI_BUDGET=$ci_budget: $dir not built" \
      "and its tests skipped"
    return 1
  fi
  local rc=0
  HALO3D_BUILD_TIMEOUT="$left" halo3d_build "$dir" "$@" || rc=$?
  if ((rc == 124)); then
    echo "== notice: building $dir reached HALO3D_CI_BUDGET=$ci_budget (a cold cache) and stopped;" \
      "its tests are skipped this run, and what it compiled is in ccache for the next"
    return 1
  fi
  ((rc == 0)) || exit "$rc"
}

# Whether an optional stage after ctest runs: not when the HALO3D_SKIP_* variable named $1 is 1 (notice:
# "$1=1: $2 skipped"), nor when the main build is a CUDA build (notice: $3).
stage_runs() {
  if [[ "${!1:-0}" == 1 ]]; then
    echo "== notice: $1=1: $2 skipped"
  elif [[ "$main_backend" != host ]]; then
    echo "== notice: $3"
  else
    return 0
  fi
  return 1
}

# Sanitizers: the GoogleTest suites (unit, and MPI at 1, 2 and 4 ranks) under AddressSanitizer +
# UndefinedBehaviorSanitizer, and the I/O thread and prefetch suites under ThreadSanitizer. Benchmarks, the
# application end-to-end runs and the 8-rank variants stay in the plain build above. Open MPI and HDF5 keep
# memory until exit, so leak detection is off; the ThreadSanitizer build runs one OpenMP thread (libgomp is
# not instrumented, so its barriers would look like races) with suppressions for the uninstrumented MPI and
# HDF5 libraries (scripts/tsan.supp).
if stage_runs HALO3D_SKIP_SANITIZERS "sanitizer builds" \
  "the Kokkos at $kokkos_prefix is a CUDA build: the sanitizer builds need a host Kokkos, skipped"; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer build ($build-asan)"
  # 600 s kept for its CTest (407 s in a fresh-clone run, 2026-12-02).
  if build_within_limit "$build-asan" 600 -DHALO3D_ENABLE_SANITIZERS=ON -DHALO3D_ENABLE_BENCHMARKS=OFF \
    -DCMAKE_CXX_FLAGS=-g1; then
    echo "== ctest under ASan + UBSan (unit and MPI suites at 1, 2 and 4 ranks)"
    (cd "$build-asan" && ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:strict_string_checks=1 \
       UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       ctest --output-on-failure -j "$jobs" --timeout 900 -E '\.np8$|^install\.|^cmake\.|^apps\.')
  fi
  echo "== ThreadSanitizer build of the I/O suites ($build-tsan)"
  if build_within_limit "$build-tsan" 120 -DHALO3D_ENABLE_TSAN=ON -DHALO3D_ENABLE_BENCHMARKS=OFF \
    -DCMAKE_CXX_FLAGS=-g1 -- --target halo3d_io_reader_tests halo3d_io_checkpoint_tests; then
    echo "== ctest under ThreadSanitizer (I/O thread, prefetch and checkpoint suites at 1, 2 and 4 ranks)"
    (cd "$build-tsan" && TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$repo/scripts/tsan.supp" \
       OMP_NUM_THREADS=1 ctest --output-on-failure -j "$jobs" --timeout 900 \
       -R '^halo3d_io_(reader_tests\.np[124]|checkpoint_tests\.)')
  fi
fi

if stage_runs HALO3D_SKIP_DEVICE_DRYRUN "device check dry run" \
  "the main build is a CUDA build: run scripts/device_check.sh on the GPU instead of its dry run"; then
  echo "== device check, dry run (scripts/device_check.sh --dry-run: OpenMP backend, $build-device-dryrun)"
  HALO3D_SKIP_BOOTSTRAP=1 "$repo/scripts/device_check.sh" --dry-run --build "$build-device-dryrun" |
    tail -n 40
fi

deps="${HALO3D_DEPS:-$HOME/.cache/halo3d/deps}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [[ "${HALO3D_SKIP_CUDA:-0}" == 1 ]]; then
  echo "== notice: HALO3D_SKIP_CUDA=1: CUDA compile step skipped"
elif [[ -n "${Kokkos_ROOT:-}" ]]; then
  echo "== notice: Kokkos_ROOT is set (user Kokkos, backend $main_backend): the build above used it; the CUDA" \
    "compile step against the cached CUDA Kokkos is skipped"
elif [[ ! -x "$cuda_home/bin/nvcc" ]]; then
  echo "== notice: no nvcc at $cuda_home/bin/nvcc: CUDA compile step skipped"
else
  # Every target (libraries with the MPI layers, tests, benchmarks with the cuDNN comparison, applications) with
  # nvcc_wrapper against the bootstrap's CUDA Kokkos. Compile only: no GPU here (the tests' cases are listed when
  # ctest runs, on a GPU). Cold, this is the longest stage of CI (docs/DEVELOPERS.md, "CI"); ccache makes later
  # runs cheap, so a cold run that reaches HALO3D_CI_BUDGET stops with a notice and leaves its objects in the
  # cache.
  cuda_kokkos="$deps/kokkos-cuda"
  mapfile -t cuda_args < <(halo3d_kokkos_cmake_args "$cuda_kokkos")
  echo "== CUDA compile of every target (${cuda_args[*]}, $cuda_kokkos)"
  cuda_start=$(date +%s)
  PATH="$cuda_home/bin:$PATH" cmake -S "$repo" -B "$build-cuda" -DCMAKE_BUILD_TYPE=Release "${cuda_args[@]}" \
    -DKokkos_ROOT="$cuda_kokkos" -DCMAKE_PREFIX_PATH="$cuda_kokkos" "${launcher[@]}" > "$build-cuda.configure.log" ||
    { cat "$build-cuda.configure.log"; exit 1; }
  grep -E "Kokkos backend|MPI layers|HDF5|benchmarks" "$build-cuda.configure.log"
  budget=$(( ci_budget - ($(date +%s) - start) ))
  ((budget < 60)) && budget=60
  set +e
  # The header check last: out of `all` in CUDA builds (tests/CMakeLists.txt).
  PATH="$cuda_home/bin:$PATH" timeout "$budget" bash -c \
    "cmake --build '$build-cuda' -j '$jobs' && cmake --build '$build-cuda' -j '$jobs' --target halo3d_header_check"
  rc=$?
  set -e
  if ((rc == 124)); then
    echo "== notice: the CUDA compile reached the CI budget after $(( $(date +%s) - cuda_start )) s and stopped;" \
      "what it compiled is in ccache, so the next run continues from there"
  elif ((rc != 0)); then
    echo "== CUDA compile FAILED"
    exit "$rc"
  else
    echo "== CUDA compile of every target passed in $(( $(date +%s) - cuda_start )) s"
  fi
fi
echo "== all done in $(( $(date +%s) - start )) s"
