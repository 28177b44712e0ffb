#!/usr/bin/env bash
# broken_optional_dependency.sh SOURCE_DIR KOKKOS_PREFIX WORK_DIR: configures halo3d with the oneDNN benchmark
# on and a dnnl whose package config fails the way Debian 12's does without OpenCL headers (a REQUIRED
# find_package of something absent inside dnnl-config.cmake). The configure must pass, print a notice, and
# leave the oneDNN benchmark out.
set -euo pipefail
src="$1"; kokkos="$2"; work="$3"
rm -rf "$work" && mkdir -p "$work/fake-dnnl"
cat > "$work/fake-dnnl/dnnl-config.cmake" <<'CFG'
set(dnnl_VERSION 2.7.3)
find_package(Halo3dAbsentOpenCL REQUIRED)
CFG
cat > "$work/fake-dnnl/dnnl-config-version.cmake" <<'CFG'
set(PACKAGE_VERSION 2.7.3)
set(PACKAGE_VERSION_COMPATIBLE TRUE)
CFG
if ! cmake -S "$src" -B "$work/build" -DKokkos_ROOT="$kokkos" -DCMAKE_PREFIX_PATH="$kokkos" \
     -DHALO3D_ENABLE_MPI=OFF -DHALO3D_ENABLE_TESTS=OFF -DHALO3D_ENABLE_BENCHMARKS=ON \
     -DHALO3D_ENABLE_ONEDNN_BENCH=ON -Ddnnl_DIR="$work/fake-dnnl" > "$work/configure.log" 2>&1; then
  tail -30 "$work/configure.log"
  echo "FAIL: a broken optional dnnl failed the configure"
  exit 1
fi
grep -q "notice: dnnl is absent or unusable" "$work/configure.log" ||
  { echo "FAIL: no notice about the unusable dnnl"; exit 1; }
grep -q "skipping bench_conv3d_onednn" "$work/configure.log" ||
  { echo "FAIL: bench_conv3d_onednn was not left out"; exit 1; }
grep "notice: dnnl" "$work/configure.log"
echo "PASS: configure passed with a broken dnnl; the oneDNN benchmark is disabled"
