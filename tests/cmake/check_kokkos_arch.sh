#!/usr/bin/env bash
# scripts/kokkos_arch.sh reads what a Kokkos install was built for, and the bootstrap, scripts/common.sh and
# scripts/device_check.sh configure halo3d from it. This checks it on the real KokkosConfigCommon.cmake of three
# installs (tests/cmake/fixtures: the variable block at their top): the bootstrap's OpenMP and CUDA (AMPERE80) Kokkos 3.4.01, and Kokkos 4.6.01
# configured for CUDA with Kokkos_ARCH_HOPPER90 (the user's Kokkos 4 path; 4.x writes set(...), 3.4 SET(...)).
# Usage: check_kokkos_arch.sh <source dir>
set -euo pipefail
src="$1"
source "$src/scripts/kokkos_arch.sh"
fixtures="$src/tests/cmake/fixtures"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # <what> <expected> <actual>
  if [[ "$2" == "$3" ]]; then
    echo "ok: $1 = '$3'"
  else
    echo "FAIL: $1: expected '$2', got '$3'"
    failures=$((failures + 1))
  fi
}
install() {  # <fixture> [lib dir]: a fake install prefix holding the fixture and an nvcc_wrapper
  local prefix="$work/$1"
  mkdir -p "$prefix/${2:-lib}/cmake/Kokkos" "$prefix/bin"
  cp "$fixtures/$1/KokkosConfigCommon.cmake" "$prefix/${2:-lib}/cmake/Kokkos/"
  printf '#!/bin/sh\n' > "$prefix/bin/nvcc_wrapper"
  chmod +x "$prefix/bin/nvcc_wrapper"
  echo "$prefix"
}

p="$(install kokkos-4.6.01-cuda-hopper90 lib64)"
check "4.6.01 devices" "SERIAL;CUDA" "$(halo3d_kokkos_value "$p" DEVICES)"
check "4.6.01 has CUDA" yes "$(halo3d_kokkos_has_cuda "$p" && echo yes || echo no)"
check "4.6.01 sm" sm_90 "$(halo3d_kokkos_cuda_arch "$p")"
check "4.6.01 cmake args" "-DCMAKE_CXX_COMPILER=$p/bin/nvcc_wrapper -DCMAKE_CXX_FLAGS=-arch=sm_90" \
  "$(halo3d_kokkos_cmake_args "$p" | tr '\n' ' ' | sed 's/ $//')"

p="$(install kokkos-3.4.01-cuda-ampere80)"
check "3.4.01 CUDA sm" sm_80 "$(halo3d_kokkos_cuda_arch "$p")"
check "3.4.01 CUDA cmake args" "-DCMAKE_CXX_COMPILER=$p/bin/nvcc_wrapper -DCMAKE_CXX_FLAGS=-arch=sm_80" \
  "$(halo3d_kokkos_cmake_args "$p" | tr '\n' ' ' | sed 's/ $//')"

p="$(install kokkos-3.4.01-openmp)"
check "3.4.01 OpenMP has CUDA" no "$(halo3d_kokkos_has_cuda "$p" && echo yes || echo no)"
check "3.4.01 OpenMP cmake args" "" "$(halo3d_kokkos_cmake_args "$p")"

# A CUDA install without an NVIDIA architecture cannot be configured for: an error, not a guess.
p="$work/noarch"
mkdir -p "$p/lib/cmake/Kokkos"
sed 's/^set(Kokkos_ARCH .*/set(Kokkos_ARCH NATIVE)/' "$fixtures/kokkos-4.6.01-cuda-hopper90/KokkosConfigCommon.cmake" \
  > "$p/lib/cmake/Kokkos/KokkosConfigCommon.cmake"
if msg="$(halo3d_kokkos_cmake_args "$p" 2>&1)"; then
  check "no architecture is an error" error "status 0: $msg"
else
  check "no architecture names it" yes "$([[ "$msg" == *"no NVIDIA architecture"* ]] && echo yes || echo "no: $msg")"
fi

((failures == 0)) || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
