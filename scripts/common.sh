# Shared by scripts/test.sh and scripts/demo.sh: bootstrap the dependencies and configure + build halo3d.
# Source it; it defines halo3d_build <build-dir> [cmake args...] and sets $repo, $kokkos_prefix and $kokkos_args (the
# compiler and architecture flags of a CUDA Kokkos; empty for a host one).

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="$(nproc 2>/dev/null || echo 2)"

kokkos_prefix="$("$repo/scripts/bootstrap.sh" | tail -n 1)"
[[ -n "$kokkos_prefix" ]] || { echo "bootstrap did not report a Kokkos prefix" >&2; exit 1; }

# A CUDA Kokkos (a user's Kokkos_ROOT, e.g. Kokkos 4.x built with Kokkos_ARCH_HOPPER90) is compiled with its
# nvcc_wrapper and the architecture it was built for (scripts/kokkos_arch.sh); a host Kokkos needs nothing.
source "$repo/scripts/kokkos_arch.sh"
mapfile -t kokkos_args < <(halo3d_kokkos_cmake_args "$kokkos_prefix")
if ((${#kokkos_args[@]})); then
  export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
fi

# mpirun refuses root unless told; MPI runs here are oversubscribed (2 cores, up to 8 ranks).
mpirun_flags=(--oversubscribe)
[[ $(id -u) -eq 0 ]] && mpirun_flags+=(--allow-run-as-root)

# ccache, when installed, keeps compiled objects outside the repo (beside the dependency cache), so a rebuild in a
# fresh clone recompiles only what changed. CCACHE_BASEDIR makes the clone's path irrelevant to the cache keys.
# HALO3D_NO_CCACHE=1 turns it off.
launcher=()
if [[ "${HALO3D_NO_CCACHE:-0}" != 1 ]] && command -v ccache > /dev/null; then
  export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/halo3d/ccache}" CCACHE_BASEDIR="${CCACHE_BASEDIR:-$repo}"
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-3G}"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# halo3d_build <build-dir> [cmake configure args...] [-- cmake --build args...]
halo3d_build() {
  local build_dir="$1"; shift
  local configure=() build=()
  while (($#)); do
    if [[ "$1" == "--" ]]; then shift; build=("$@"); break; fi
    configure+=("$1"); shift
  done
  cmake -S "$repo" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kokkos_prefix" \
    -DCMAKE_PREFIX_PATH="$kokkos_prefix" "${kokkos_args[@]}" "${launcher[@]}" "${configure[@]}" || return
  local limit=()  # scripts/test.sh's CI limit (HALO3D_BUILD_TIMEOUT seconds): status 124 when reached
  [[ -n "${HALO3D_BUILD_TIMEOUT:-}" ]] && limit=(timeout "$HALO3D_BUILD_TIMEOUT")
  "${limit[@]}" cmake --build "$build_dir" -j "$jobs" "${build[@]}"
}
