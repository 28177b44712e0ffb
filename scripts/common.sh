# Shared by scripts/test.sh and scripts/demo.sh: bootstrap the dependencies and configure + build halo3d.
# Source it; it defines halo3d_build <build-dir> [cmake args...] and sets $repo and $kokkos_prefix.

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="$(nproc 2>/dev/null || echo 2)"

kokkos_prefix="$("$repo/scripts/bootstrap.sh" | tail -n 1)"
[[ -n "$kokkos_prefix" ]] || { echo "bootstrap did not report a Kokkos prefix" >&2; exit 1; }

# mpirun refuses root unless told; MPI runs here are oversubscribed (2 cores, up to 8 ranks).
mpirun_flags=(--oversubscribe)
[[ $(id -u) -eq 0 ]] && mpirun_flags+=(--allow-run-as-root)

halo3d_build() {
  local build_dir="$1"; shift
  cmake -S "$repo" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kokkos_prefix" \
    -DCMAKE_PREFIX_PATH="$kokkos_prefix" "$@"
  cmake --build "$build_dir" -j "$jobs"
}
