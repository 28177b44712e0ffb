#!/usr/bin/env bash
# The device check: the one command to run when a GPU is lent (docs/DEVELOPERS.md, "The device check").
#
#   scripts/device_check.sh --prepare   here: build the carried bundle .device/halo3d-device.tar.gz (the bootstrap's
#                                       CUDA Kokkos + Kokkos Kernels install, GoogleTest and Google Benchmark as
#                                       Debian builds them, and the GoogleTest sources as a fallback)
#   scripts/device_check.sh             on the GPU machine (CUDA, CMake; no MPI, HDF5 or downloads): unpack the
#                                       bundle, configure the kernels-only build (HALO3D_ENABLE_MPI=OFF) with its
#                                       nvcc_wrapper, build the core, kernel and halo pack tests and three
#                                       benchmarks, run every test binary, then bench_conv3d_cudnn (halo3d beside
#                                       cuDNN), bench_cosmoflow_stack (CosmoFlow's conv stack forward + backward at
#                                       128^3) and bench_halo_pack; write summary.md, summary.json and logs.tar.gz
#                                       to $OUT (or --out)
#   scripts/device_check.sh --dry-run   here and in CI: the same on the OpenMP backend, with the bootstrap's
#                                       OpenMP Kokkos packed and unpacked as the carried one is, the smoke
#                                       configurations of the benchmarks and no cuDNN; reuses the main build's
#                                       objects through ccache
#
# Options: --out DIR, --build DIR (default /tmp/halo3d-device-check, dry run: build-device-dryrun), --jobs N,
#          --budget SECONDS (default 450: steps that would start after it are skipped and reported), --sm90 (also
#          embed sm_90 machine code, -gencode=arch=compute_90,code=sm_90: no JIT on Hopper, twice the device
#          compile), --bench-filter REGEX (bench_conv3d_cudnn's --benchmark_filter), --no-bench.
# Exit status: 0 when the build passed and every test passed, 1 otherwise (the summary says what failed).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
source "$here/kokkos_arch.sh"

mode=real
out="${OUT:-}"
build=""
jobs="$(nproc 2>/dev/null || echo 2)"
budget=450
sm90=0
bench_filter=""
run_bench=1
while (($#)); do
  case "$1" in
    --prepare) mode=prepare ;;
    --dry-run) mode=dry ;;
    --out) out="$2"; shift ;;
    --build) build="$2"; shift ;;
    --jobs) jobs="$2"; shift ;;
    --budget) budget="$2"; shift ;;
    --sm90) sm90=1 ;;
    --bench-filter) bench_filter="$2"; shift ;;
    --no-bench) run_bench=0 ;;
    -h | --help) sed -n '2,27p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "device_check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }
log() { printf '[device_check %4ss] %s\n' "$(elapsed)" "$*"; }
die() { printf '[device_check %4ss] error: %s\n' "$(elapsed)" "$*" >&2; exit 1; }

bundle_dir="$repo/.device"
bundle="$bundle_dir/halo3d-device.tar.gz"
deps_prefix="${HALO3D_DEPS:-$HOME/.cache/halo3d/deps}"

# make_bundle <kokkos prefix> <bundle file>: the Kokkos install, GoogleTest (static) and Google Benchmark (shared)
# from Debian's packages, GoogleTest's sources, and a manifest naming the paths to relocate.
make_bundle() {
  local kokkos="$1" file="$2" stage
  stage="$(mktemp -d)"
  # Debian's layout (lib/x86_64-linux-gnu, its cmake/ folder inside), which the package files' relative paths
  # assume; the configure names GTest_DIR and benchmark_DIR.
  local multi=/usr/lib/x86_64-linux-gnu lib="$stage/bundle/deps/lib/x86_64-linux-gnu"
  mkdir -p "$lib/cmake" "$stage/bundle/deps/include"
  cp -a "$kokkos" "$stage/bundle/kokkos"
  rm -rf "$stage/bundle/kokkos/share/doc"
  cp -a /usr/include/gtest /usr/include/gmock /usr/include/benchmark "$stage/bundle/deps/include/"
  cp -a "$multi"/libgtest*.a "$multi"/libgmock*.a "$multi"/libbenchmark.so* "$multi"/libbenchmark_main.a "$lib/"
  cp -a "$multi/cmake/GTest" "$multi/cmake/benchmark" "$lib/cmake/"
  if [[ -d /usr/src/googletest ]]; then
    cp -a /usr/src/googletest "$stage/bundle/googletest-src"
  fi
  {
    echo "kokkos_prefix=$kokkos"
    echo "made=$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
    echo "kokkos_devices=$(halo3d_kokkos_value "$kokkos" DEVICES)"
    echo "kokkos_arch=$(halo3d_kokkos_value "$kokkos" ARCH)"
  } > "$stage/bundle/MANIFEST"
  mkdir -p "$(dirname "$file")"
  tar -C "$stage" -czf "$file.tmp" bundle && mv "$file.tmp" "$file"
  rm -rf "$stage"
}

if [[ "$mode" == prepare ]]; then
  kokkos="$deps_prefix/kokkos-cuda"
  # Idempotent and seconds when cached; rebuilds the CUDA Kokkos when the patch changed (its stamp).
  log "scripts/bootstrap.sh (the CUDA Kokkos)"
  "$repo/scripts/bootstrap.sh" > /dev/null || die "bootstrap failed"
  halo3d_kokkos_has_cuda "$kokkos" || die "$kokkos is not a CUDA Kokkos (run scripts/bootstrap.sh where nvcc exists)"
  make_bundle "$kokkos" "$bundle"
  grep -qx '/.device/' "$repo/.gitignore" 2> /dev/null ||
    echo "warning: .device/ is not in .gitignore; it would travel as untracked files" >&2
  log "bundle: $bundle ($(du -h "$bundle" | cut -f1)); the travelling tree: $(git -C "$repo" ls-files -z |
    (cd "$repo" && xargs -0 du -cb 2> /dev/null) | tail -n1 | cut -f1) bytes tracked + the bundle"
  exit 0
fi

# ---------------------------------------------------------------------------------------------------- setup
if [[ "$mode" == dry ]]; then
  build="${build:-${HALO3D_BUILD:-$repo/build}-device-dryrun}"
  out="${out:-$build/out}"
  [[ -n "${HALO3D_SKIP_BOOTSTRAP:-}" ]] || "$repo/scripts/bootstrap.sh" > /dev/null || die "bootstrap failed"
  host_kokkos="${HALO3D_DRYRUN_KOKKOS:-$deps_prefix/kokkos-openmp}"
  [[ -d "$host_kokkos" ]] || die "no OpenMP Kokkos at $host_kokkos (run scripts/bootstrap.sh)"
else
  build="${build:-/tmp/halo3d-device-check}"
  out="${out:-$build/out}"
  [[ -f "$bundle" ]] || die "no bundle at $bundle: run scripts/device_check.sh --prepare here first, and carry .device"
fi
work="$build/work"
logs="$build/logs"
rm -rf "$work" "$logs"
mkdir -p "$work" "$logs" "$out" || die "cannot create $build and $out"
status_file="$logs/steps.tsv"  # step, status, seconds, note
: > "$status_file"
step() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >> "$status_file"; }
# The budget guards the lease of a GPU machine; a dry run always runs every step, so that none can rot.
over_budget() { [[ "$mode" == real ]] && (($(elapsed) > budget)); }
finish() {  # the summary (tests, benchmark tables, steps) into $out, and the logs beside it; exits
  python3 "$here/device_check_summary.py" --logs "$logs" --out "$out" --mode "$mode" --elapsed "$(elapsed)" \
    --budget "$budget"
  local rc=$?
  tar -C "$build" -czf "$out/logs.tar.gz" logs 2> /dev/null
  cat "$out/summary.md"
  log "done in $(elapsed) s; summary in $out"
  exit "$rc"
}

if [[ "$mode" == dry ]]; then
  # The same bundle code as the real check, with the host Kokkos in place of the CUDA one.
  bundle="$work/halo3d-device-dryrun.tar.gz"
  make_bundle "$host_kokkos" "$bundle"
fi
t=$(date +%s)
tar -C "$work" -xzf "$bundle" || die "cannot unpack $bundle"
kokkos="$work/bundle/kokkos"
deps="$work/bundle/deps"
old_prefix="$(sed -n 's/^kokkos_prefix=//p' "$work/bundle/MANIFEST")"
log "bundle unpacked: $(sed -n 's/^made=//p' "$work/bundle/MANIFEST"), Kokkos $(halo3d_kokkos_value "$kokkos" DEVICES) $(halo3d_kokkos_value "$kokkos" ARCH)"

# CUDA: the toolkit on this machine, and the install's absolute paths (its own prefix, the CUDA libraries it was
# configured with) moved to where they are here.
cuda_home="${CUDA_HOME:-}"
if [[ -z "$cuda_home" ]] && command -v nvcc > /dev/null; then
  cuda_home="$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)"
fi
cuda_home="${cuda_home:-/usr/local/cuda}"
find_cuda_library() {  # <basename>: where it is on this machine (toolkit, system, PyTorch's nvidia wheels)
  local name="$1" dir f
  local dirs=("$cuda_home/lib64" "$cuda_home/lib" "$cuda_home/targets/x86_64-linux/lib" "$cuda_home/lib64/stubs"
    "$cuda_home/lib/stubs" "$cuda_home/targets/x86_64-linux/lib/stubs" /usr/lib/x86_64-linux-gnu /usr/lib64)
  [[ "$name" == libcuda.so ]] || dirs+=($(python3 -c 'import nvidia, os; p = list(nvidia.__path__)[0]
print(" ".join(os.path.join(p, d, "lib") for d in sorted(os.listdir(p))))' 2> /dev/null))
  for dir in "${dirs[@]}"; do
    for f in "$dir/$name" "$dir/$name".[0-9]*; do
      [[ -e "$f" ]] && { echo "$f"; return 0; }
    done
  done
  return 1
}
relocate() {
  local f path new
  while IFS= read -r f; do
    sed -i "s#$old_prefix#$kokkos#g" "$f"
    # Absolute library paths (not ${_IMPORT_PREFIX}/lib/...): where the install was configured.
    for path in $(grep -oE '(^|[[:space:]";(])/[^[:space:]";)]+\.(so|a)([.][0-9]+)*' "$f" |
      sed -E 's/^[[:space:]";(]//' | sort -u); do
      [[ -e "$path" ]] && continue
      new="$(find_cuda_library "$(basename "$path")")" || { log "warning: $path (in $(basename "$f")) not found here"; continue; }
      sed -i "s#$path#$new#g" "$f"
    done
    sed -i "s#\"/usr/local/cuda/include\"#\"$cuda_home/include\"#g" "$f"
  done < <(find "$kokkos" -name '*.cmake')
}
relocate

if halo3d_kokkos_has_cuda "$kokkos"; then
  export PATH="$cuda_home/bin:$PATH"
  command -v nvcc > /dev/null || die "the bundle's Kokkos has CUDA but there is no nvcc (CUDA_HOME=$cuda_home)"
  command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    > "$logs/gpu.txt" 2>&1
  mapfile -t kokkos_args < <(halo3d_kokkos_cmake_args "$kokkos") || die "cannot derive the CUDA flags of $kokkos"
  if ((sm90)); then  # sm_90 machine code beside Kokkos's sm_80 code and PTX
    for i in "${!kokkos_args[@]}"; do
      [[ "${kokkos_args[$i]}" == -DCMAKE_CXX_FLAGS=* ]] &&
        kokkos_args[$i]="${kokkos_args[$i]} -gencode=arch=compute_90,code=sm_90"
    done
  fi
  # The JIT cache of the driver: PTX compiled once per kernel for this GPU, reused by every test process.
  export CUDA_CACHE_PATH="$build/cuda-cache" CUDA_CACHE_MAXSIZE=4294967296
  backend=CUDA
else
  kokkos_args=()
  backend=host
fi
launcher=()
if [[ "${HALO3D_NO_CCACHE:-0}" != 1 ]] && command -v ccache > /dev/null; then
  export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/halo3d/ccache}" CCACHE_BASEDIR="${CCACHE_BASEDIR:-$repo}"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
generator=()
[[ "$mode" == real ]] && command -v ninja > /dev/null && generator=(-G Ninja)
if [[ -f "$build/CMakeCache.txt" ]] && ! grep -q "CMAKE_GENERATOR:INTERNAL=${generator[1]:-Unix Makefiles}" \
  "$build/CMakeCache.txt"; then
  rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
fi
step unpack ok $(($(date +%s) - t)) "$backend Kokkos $(halo3d_kokkos_value "$kokkos" DEVICES) $(halo3d_kokkos_value "$kokkos" ARCH)"

gtest_dir="$deps/lib/x86_64-linux-gnu/cmake/GTest"
benchmark_dir="$deps/lib/x86_64-linux-gnu/cmake/benchmark"
if [[ "$mode" == dry ]]; then
  # The unpacked bundle must configure (relocated Kokkos and Kokkos Kernels, GoogleTest, Google Benchmark): a
  # probe project finds each. The build itself then uses the bootstrap's Kokkos and the system's GoogleTest,
  # as the main build does, so that ccache serves the main build's objects (same include paths).
  t=$(date +%s)
  mkdir -p "$work/probe"
  cat > "$work/probe/CMakeLists.txt" << 'PROBE'
cmake_minimum_required(VERSION 3.18)
project(halo3d_bundle_probe LANGUAGES CXX)
find_package(Kokkos CONFIG REQUIRED)
find_package(KokkosKernels CONFIG REQUIRED)
find_package(GTest CONFIG REQUIRED)
find_package(benchmark CONFIG REQUIRED)
message(STATUS "bundle: Kokkos ${Kokkos_VERSION}, Kokkos Kernels ${KokkosKernels_VERSION}, GTest ${GTest_VERSION}, benchmark ${benchmark_VERSION}")
PROBE
  if cmake -S "$work/probe" -B "$work/probe/build" -DKokkos_ROOT="$kokkos" -DCMAKE_PREFIX_PATH="$kokkos;$deps" \
    "${kokkos_args[@]}" -DGTest_DIR="$gtest_dir" -Dbenchmark_DIR="$benchmark_dir" > "$logs/bundle-probe.log" 2>&1; then
    step bundle-probe ok $(($(date +%s) - t)) "$(sed -n 's/^-- bundle: //p' "$logs/bundle-probe.log")"
  else
    tail -20 "$logs/bundle-probe.log"
    step bundle-probe FAIL $(($(date +%s) - t)) "see logs/bundle-probe.log"
  fi
  kokkos="$host_kokkos"
  gtest_dir=""
  benchmark_dir=""
fi
package_dirs=()
[[ -n "$gtest_dir" ]] && package_dirs=(-DGTest_DIR="$gtest_dir" -Dbenchmark_DIR="$benchmark_dir")

# ---------------------------------------------------------------------------------------------------- build
t=$(date +%s)
log "configure ($backend, kernels-only) in $build"
configure=(cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
  -DKokkos_ROOT="$kokkos" -DCMAKE_PREFIX_PATH="$kokkos" "${kokkos_args[@]}" "${launcher[@]}"
  "${package_dirs[@]}"
  -DHALO3D_ENABLE_MPI=OFF -DHALO3D_ENABLE_TESTS=ON -DHALO3D_ENABLE_BENCHMARKS=ON
  -DHALO3D_ENABLE_ONEDNN_BENCH=OFF -DCMAKE_DISABLE_FIND_PACKAGE_HDF5=ON)
if ! "${configure[@]}" > "$logs/configure.log" 2>&1; then
  if [[ -d "$work/bundle/googletest-src" ]] && grep -qiE "gtest|benchmark" "$logs/configure.log"; then
    log "the bundle's GoogleTest or Google Benchmark is unusable here: building GoogleTest from its sources"
    cmake -S "$work/bundle/googletest-src" -B "$work/gtest-build" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$deps" -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu > "$logs/gtest.log" 2>&1 &&
      cmake --build "$work/gtest-build" -j "$jobs" --target install >> "$logs/gtest.log" 2>&1
    "${configure[@]}" > "$logs/configure.log" 2>&1
  fi
fi
if ! grep -q "Build files have been written" "$logs/configure.log"; then
  tail -30 "$logs/configure.log"
  step configure FAIL $(($(date +%s) - t)) "see logs/configure.log"
  finish
fi
step configure ok $(($(date +%s) - t)) "$(grep -m1 'Kokkos backend' "$logs/configure.log" | sed 's/.*\.\. //')"

# Test executables of the kernels-only build and the three benchmarks; the header check and the other
# benchmarks are left out (compile time).
mapfile -t test_targets < <(cmake --build "$build" --target help 2> /dev/null |
  sed -n -E 's/^(\.\.\. )?(halo3d_(core_tests|kernels_[a-z0-9_]+|comm_pack_tests))(: phony)?$/\2/p' | sort -u)
bench_targets=(bench_cosmoflow_stack bench_halo_pack)
[[ "$backend" == CUDA ]] && grep -q "cuDNN comparison: cuDNN" "$logs/configure.log" && bench_targets+=(bench_conv3d_cudnn)
t=$(date +%s)
log "build: ${#test_targets[@]} test programs, ${bench_targets[*]} (-j $jobs)"
if cmake --build "$build" -j "$jobs" --target "${test_targets[@]}" "${bench_targets[@]}" > "$logs/build.log" 2>&1; then
  step build ok $(($(date +%s) - t)) "${#test_targets[@]} test programs, ${#bench_targets[@]} benchmarks"
else
  grep -E -m 20 "error|Error" "$logs/build.log"
  # Build what still builds, so that the rest runs.
  keep_going=(-k)
  [[ ${#generator[@]} -gt 0 ]] && keep_going=(-k 0)
  cmake --build "$build" -j "$jobs" --target "${test_targets[@]}" "${bench_targets[@]}" -- "${keep_going[@]}" \
    >> "$logs/build.log" 2>&1 || true
  step build FAIL $(($(date +%s) - t)) "see logs/build.log"
fi

# ---------------------------------------------------------------------------------------------------- tests
t=$(date +%s)
mapfile -t test_programs < <(for target in "${test_targets[@]}"; do
  find "$build/tests" -type f -name "$target" -perm -u+x; done)
log "tests: ${#test_programs[@]} programs"
run_test() {  # <program>: its GoogleTest JSON report and log in $logs/tests
  local name
  name="$(basename "$1")"
  OMP_NUM_THREADS=2 OMP_PROC_BIND=false timeout 600 "$1" --gtest_output="json:$logs/tests/$name.json" \
    > "$logs/tests/$name.log" 2>&1
  echo "$?" > "$logs/tests/$name.rc"
}
export -f run_test
export logs
mkdir -p "$logs/tests"
# A few programs at once: they share the GPU (or the cores), each is mostly launch-bound.
printf '%s\n' "${test_programs[@]}" | xargs -P "${HALO3D_TEST_PARALLEL:-4}" -I{} bash -c 'run_test "$@"' _ {}
step tests done $(($(date +%s) - t)) "${#test_programs[@]} programs"

# ---------------------------------------------------------------------------------------------------- benchmarks
bench_min_time=0.02
bench() {  # <name> <filter> <extra args...>: Google Benchmark JSON in $logs/<name>.json
  local name="$1" filter="$2" program
  shift 2
  program="$(find "$build/bench" -type f -name "$name" -perm -u+x | head -n 1)"
  if [[ -z "$program" ]]; then
    step "$name" absent 0 "not built"
    return
  fi
  if over_budget; then
    step "$name" skipped 0 "over the ${budget}s budget before it started"
    return
  fi
  local t0
  t0=$(date +%s)
  log "$name --benchmark_filter='$filter'"
  if OMP_NUM_THREADS="${OMP_NUM_THREADS:-$jobs}" OMP_PROC_BIND=false timeout "${HALO3D_BENCH_TIMEOUT:-300}" \
    "$program" --benchmark_filter="$filter" --benchmark_min_time="$bench_min_time" \
    --benchmark_out="$logs/$name.json" --benchmark_out_format=json "$@" > "$logs/$name.log" 2>&1; then
    step "$name" ok $(($(date +%s) - t0))
  else
    # $? first: the command substitution below would reset it (the H100's first run reported "exit status 0").
    # The summary adds the log's first error line.
    local rc=$?
    step "$name" FAIL $(($(date +%s) - t0)) "exit status $rc, see logs/$name.log"
  fi
}
if ((run_bench)); then
  if [[ "$mode" == dry ]]; then
    bench bench_cosmoflow_stack smoke
    bench bench_halo_pack 'halo:1/'
  else
    bench bench_conv3d_cudnn "${bench_filter:-.}"
    bench bench_cosmoflow_stack cosmoflow128
    bench bench_halo_pack .
  fi
fi

# ---------------------------------------------------------------------------------------------------- summary
finish
