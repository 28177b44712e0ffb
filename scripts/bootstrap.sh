#!/usr/bin/env bash
# Bootstrap halo3d's dependencies on Debian 12. Idempotent: safe to re-run, and a warm cache costs seconds.
#
#   1. Installs the Debian packages that are missing (only when run as root; otherwise it lists them).
#   2. Builds Kokkos + Kokkos Kernels 3.4.01 for OpenMP+Serial from Debian's trilinos 13.2.0 *source* package,
#      fetched through a private apt source list (the system's apt configuration is never touched), and
#      installs them under $HALO3D_DEPS/kokkos-openmp.
#   3. When nvcc exists, builds a second Kokkos (+ Kernels) for CUDA (sm_80, compile-only on machines without a
#      GPU) under $HALO3D_DEPS/kokkos-cuda, after applying cmake/patches/kokkos-3.4.01-cuda13.patch.
#
# Environment:
#   HALO3D_DEPS   cache prefix (default ~/.cache/halo3d/deps)
#   Kokkos_ROOT   an existing Kokkos install (3.4 or 4.x): when set and valid, steps 2 and 3 are skipped entirely;
#                 a CUDA install is built against with its own nvcc_wrapper and architecture (Kokkos_ARCH_HOPPER90
#                 gives -arch=sm_90; scripts/kokkos_arch.sh), never the sm_80 of step 3
#   HALO3D_SKIP_CUDA=1  skip the CUDA Kokkos build
#   HALO3D_OPTIONAL_PACKAGES  the optional Debian packages installed as root (default: ccache libdnnl-dev
#                 ocl-icd-opencl-dev python3-matplotlib; empty: none)
#   CUDA_HOME     CUDA toolkit (default /usr/local/cuda)
#
# Prints, as its last line, the Kokkos prefix to use (consumed by scripts/test.sh and scripts/demo.sh).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
deps="${HALO3D_DEPS:-$HOME/.cache/halo3d/deps}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
jobs="$(nproc 2>/dev/null || echo 2)"
kokkos_tag="3.4.01-trilinos-13.2.0-r1"   # bump to force a rebuild of the cached Kokkos
cuda_patch="$repo/cmake/patches/kokkos-3.4.01-cuda13.patch"
# The CUDA build's stamp carries the patch's hash, so that a changed patch rebuilds a cached CUDA Kokkos.
kokkos_cuda_tag="$kokkos_tag patch-$(sha256sum "$cuda_patch" | cut -c1-12)"

log() { printf '[bootstrap] %s\n' "$*" >&2; }
die() { printf '[bootstrap] error: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------- 1. packages
packages=(build-essential cmake pkg-config dpkg-dev ca-certificates
          libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools
          libgtest-dev libgmock-dev libbenchmark-dev
          libcli11-dev nlohmann-json3-dev libfftw3-dev libfmt-dev clang-format)
# Optional packages are installed when we can (as root) and never demanded: ccache (scripts/common.sh uses it
# when present), matplotlib for scripts/plot_sweep.py (and the plot in the sweep's smoke test) and oneDNN for the
# anchor benchmark. Debian 12's dnnl-config.cmake requires OpenCL, which
# libdnnl-dev only recommends, so its headers come too; without them the configure disables that benchmark
# with a notice (cmake/Halo3dDependencies.cmake) rather than failing.
# HALO3D_OPTIONAL_PACKAGES replaces the list (empty: none), e.g. to check a machine without the OpenCL headers.
read -r -a optional <<< "${HALO3D_OPTIONAL_PACKAGES-ccache libdnnl-dev ocl-icd-opencl-dev python3-matplotlib}"
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if [[ $(id -u) -eq 0 ]]; then
  for p in "${optional[@]}"; do
    installed "$p" || missing+=("$p")
  done
fi
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    log "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  else
    die "missing Debian packages: ${missing[*]} (run this script as root once, or: sudo apt-get install ${missing[*]})"
  fi
fi

# ---------------------------------------------------------------------------------------------- 2. Kokkos
if [[ -n "${Kokkos_ROOT:-}" ]]; then
  if [[ -f "$Kokkos_ROOT/lib/cmake/Kokkos/KokkosConfig.cmake" || -f "$Kokkos_ROOT/lib64/cmake/Kokkos/KokkosConfig.cmake" ]]; then
    # A user's Kokkos (3.4 or 4.x) is taken as built: for a CUDA install its Kokkos_ARCH (e.g. HOPPER90) sets
    # the architecture flags of halo3d's build (scripts/kokkos_arch.sh), never the sm_80 of the cached build.
    source "$here/kokkos_arch.sh"
    version="$(sed -n -E 's/.*PACKAGE_VERSION "([^"]+)".*/\1/p' "$Kokkos_ROOT"/lib*/cmake/Kokkos/KokkosConfigVersion.cmake 2>/dev/null | head -n1)"
    what="Kokkos ${version:-?}, devices $(halo3d_kokkos_value "$Kokkos_ROOT" DEVICES), arch $(halo3d_kokkos_value "$Kokkos_ROOT" ARCH)"
    if halo3d_kokkos_has_cuda "$Kokkos_ROOT"; then
      args="$(halo3d_kokkos_cmake_args "$Kokkos_ROOT")" || die "Kokkos_ROOT=$Kokkos_ROOT: $what, but its CUDA flags cannot be derived"
      [[ -x "$cuda_home/bin/nvcc" ]] || log "warning: $what needs nvcc, and there is none at $cuda_home/bin (set CUDA_HOME)"
      what="$what: halo3d builds with $(echo $args | sed 's/-D//g')"
    fi
    log "Kokkos_ROOT=$Kokkos_ROOT is an existing Kokkos ($what): leaving dependencies alone"
    echo "$Kokkos_ROOT"
    exit 0
  fi
  die "Kokkos_ROOT=$Kokkos_ROOT does not contain lib/cmake/Kokkos/KokkosConfig.cmake"
fi

src_root="$deps/src/trilinos-13.2.0"
fetch_trilinos_source() {
  [[ -d "$src_root/packages/kokkos" && -d "$src_root/packages/kokkos-kernels" ]] && return 0
  local apt_dir="$deps/apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives" "$deps/src"
  # A private source list: never edit /etc/apt.
  echo "deb-src http://deb.debian.org/debian bookworm main" > "$apt_dir/sources.list"
  local apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
                  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir")
  log "fetching Debian's trilinos 13.2.0 source package (private apt source list in $apt_dir)"
  apt-get "${apt_opts[@]}" update -qq >&2
  (cd "$apt_dir/archives" && apt-get "${apt_opts[@]}" source --download-only "trilinos=13.2.0-4" >&2 2>&1 ||
     apt-get "${apt_opts[@]}" source --download-only trilinos >&2)
  local tarball
  tarball="$(ls "$apt_dir"/archives/trilinos_13.2.0*.orig.tar.* 2>/dev/null | head -n1)"
  [[ -n "$tarball" ]] || die "trilinos 13.2.0 source tarball not found after download in $apt_dir/archives"
  local top
  # tar is cut short by head (SIGPIPE), which pipefail would turn into a failure.
  top="$( (tar tf "$tarball" 2>/dev/null || true) | head -n1 | cut -d/ -f1)"
  local tmp="$deps/src/.unpack.$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  log "unpacking packages/kokkos and packages/kokkos-kernels only"
  tar xf "$tarball" -C "$tmp" --strip-components=1 "$top/packages/kokkos" "$top/packages/kokkos-kernels"
  rm -rf "$src_root" && mv "$tmp" "$src_root"
  rm -f "$apt_dir"/archives/*.tar.* "$apt_dir"/archives/*.dsc
}

# build_kokkos <prefix> <kokkos-src> <stamp> <extra cmake args...>: Kokkos then Kokkos Kernels into <prefix>.
build_kokkos() {
  local prefix="$1" ksrc="$2" tag="$3"; shift 3
  local bdir="$prefix.build"
  rm -rf "$bdir" "$prefix"
  mkdir -p "$bdir/kokkos" "$bdir/kernels"
  log "building Kokkos into $prefix"
  cmake -S "$ksrc" -B "$bdir/kokkos" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_CXX_STANDARD=17 -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_DEPRECATED_CODE_3=OFF "$@" \
    > "$bdir/kokkos.configure.log" 2>&1 || { tail -40 "$bdir/kokkos.configure.log" >&2; die "Kokkos configure failed"; }
  cmake --build "$bdir/kokkos" -j "$jobs" --target install > "$bdir/kokkos.build.log" 2>&1 ||
    { grep -m20 -i error "$bdir/kokkos.build.log" >&2; die "Kokkos build failed (log: $bdir/kokkos.build.log)"; }
  log "building Kokkos Kernels into $prefix"
  # Default ETI off: halo3d only calls KokkosBlas::gemm, which is instantiated at the call site.
  cmake -S "$src_root/packages/kokkos-kernels" -B "$bdir/kernels" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix" -DKokkosKernels_ADD_DEFAULT_ETI=OFF \
    -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF "$@" \
    > "$bdir/kernels.configure.log" 2>&1 || { tail -40 "$bdir/kernels.configure.log" >&2; die "Kokkos Kernels configure failed"; }
  cmake --build "$bdir/kernels" -j "$jobs" --target install > "$bdir/kernels.build.log" 2>&1 ||
    { grep -m20 -i error "$bdir/kernels.build.log" >&2; die "Kokkos Kernels build failed"; }
  echo "$tag" > "$prefix/.halo3d-stamp"
  rm -rf "$bdir"
}

is_built() { [[ -f "$1/.halo3d-stamp" && "$(cat "$1/.halo3d-stamp")" == "$2" ]]; }  # <prefix> <stamp>

omp_prefix="$deps/kokkos-openmp"
if is_built "$omp_prefix" "$kokkos_tag"; then
  log "Kokkos (OpenMP+Serial) cached at $omp_prefix"
else
  fetch_trilinos_source
  build_kokkos "$omp_prefix" "$src_root/packages/kokkos" "$kokkos_tag" -DKokkos_ENABLE_OPENMP=ON -DBUILD_SHARED_LIBS=ON
fi

cuda_prefix="$deps/kokkos-cuda"
if [[ "${HALO3D_SKIP_CUDA:-0}" == 1 ]]; then
  log "HALO3D_SKIP_CUDA=1: not building the CUDA Kokkos"
elif [[ ! -x "$cuda_home/bin/nvcc" ]]; then
  log "notice: no nvcc at $cuda_home/bin/nvcc: skipping the CUDA Kokkos build"
elif is_built "$cuda_prefix" "$kokkos_cuda_tag"; then
  log "Kokkos (CUDA, sm_80) cached at $cuda_prefix"
else
  fetch_trilinos_source
  # The CUDA build gets its own patched copy of the Kokkos source; the OpenMP build stays pristine.
  cuda_src="$deps/src/kokkos-cuda13"
  rm -rf "$cuda_src" && cp -r "$src_root/packages/kokkos" "$cuda_src"
  patch -d "$cuda_src" -p1 --forward < "$cuda_patch" >&2 ||
    die "applying cmake/patches/kokkos-3.4.01-cuda13.patch failed"
  # nvcc_wrapper 3.4 defaults to sm_35, which CUDA 13 rejects: pass -arch explicitly.
  PATH="$cuda_home/bin:$PATH" build_kokkos "$cuda_prefix" "$cuda_src" "$kokkos_cuda_tag" \
    -DCMAKE_CXX_COMPILER="$cuda_src/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=sm_80" \
    -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_AMPERE80=ON -DBUILD_SHARED_LIBS=OFF
  rm -rf "$cuda_src"
fi

echo "$omp_prefix"
