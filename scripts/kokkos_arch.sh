# What a Kokkos install was built for, read off its KokkosConfigCommon.cmake, and the CMake arguments a halo3d
# configure against it needs. Sourced by scripts/common.sh, scripts/test.sh and scripts/device_check.sh; it runs
# nothing itself. Works for Kokkos 3.4 (SET(...)) and 4.x (set(...)).
#
#   halo3d_kokkos_config <prefix>     the install's KokkosConfigCommon.cmake (lib/ or lib64/), or nothing
#   halo3d_kokkos_value <prefix> VAR  the value of Kokkos_VAR there (Kokkos_DEVICES, Kokkos_ARCH, ...), ';'-joined
#   halo3d_kokkos_has_cuda <prefix>   status 0 when the install has the CUDA backend
#   halo3d_kokkos_cuda_arch <prefix>  the sm_NN of its NVIDIA architecture (AMPERE80 -> sm_80, HOPPER90 -> sm_90)
#   halo3d_kokkos_cmake_args <prefix> one argument per line: for a CUDA install the compiler (the install's
#                                     nvcc_wrapper) and -DCMAKE_CXX_FLAGS=-arch=sm_NN (nvcc_wrapper's default
#                                     architecture is older than CUDA 13 accepts, and CMake's compiler check runs
#                                     before Kokkos adds its own flags); nothing for a host install

halo3d_kokkos_config() {
  local f
  for f in "$1"/lib/cmake/Kokkos/KokkosConfigCommon.cmake "$1"/lib64/cmake/Kokkos/KokkosConfigCommon.cmake; do
    [[ -f "$f" ]] && { echo "$f"; return 0; }
  done
  return 1
}

halo3d_kokkos_value() {
  local config
  config="$(halo3d_kokkos_config "$1")" || return 1
  # e.g. SET(Kokkos_ARCH AMPERE80) or set(Kokkos_DEVICES CUDA;SERIAL) or SET(Kokkos_CXX_COMPILER "/path")
  sed -n -E "s/^[[:space:]]*[Ss][Ee][Tt][[:space:]]*\([[:space:]]*Kokkos_$2[[:space:]]+\"?([^\")]*)\"?[[:space:]]*\).*/\1/p" \
    "$config" | head -n 1
}

halo3d_kokkos_has_cuda() {
  [[ ";$(halo3d_kokkos_value "$1" DEVICES | tr '[:lower:]' '[:upper:]');" == *";CUDA;"* ]]
}

halo3d_kokkos_cuda_arch() {
  local arch
  for arch in $(halo3d_kokkos_value "$1" ARCH | tr ';' ' '); do
    if [[ "$arch" =~ ^(KEPLER|MAXWELL|PASCAL|VOLTA|TURING|AMPERE|ADA|HOPPER|BLACKWELL)([0-9]+)$ ]]; then
      echo "sm_${BASH_REMATCH[2]}"
      return 0
    fi
  done
  return 1
}

halo3d_kokkos_cmake_args() {
  local prefix="$1" arch compiler
  halo3d_kokkos_has_cuda "$prefix" || return 0
  arch="$(halo3d_kokkos_cuda_arch "$prefix")" ||
    { echo "kokkos_arch: $prefix has CUDA but no NVIDIA architecture in Kokkos_ARCH" >&2; return 1; }
  compiler="$prefix/bin/nvcc_wrapper"
  [[ -x "$compiler" ]] || compiler="$(halo3d_kokkos_value "$prefix" CXX_COMPILER)"
  [[ -x "$compiler" ]] ||
    { echo "kokkos_arch: no nvcc_wrapper in $prefix/bin and Kokkos_CXX_COMPILER '$compiler' is absent" >&2; return 1; }
  echo "-DCMAKE_CXX_COMPILER=$compiler"
  echo "-DCMAKE_CXX_FLAGS=-arch=$arch"
}
