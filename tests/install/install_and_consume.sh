#!/usr/bin/env bash
# install_and_consume.sh BUILD_DIR KOKKOS_PREFIX WORK_DIR: installs the build, then configures, builds and runs a
# separate project that finds it with find_package(halo3d).
set -euo pipefail
build="$1"; kokkos="$2"; work="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix;$kokkos" > "$work/configure.log"
cmake --build "$work/consumer" > "$work/build.log"
"$work/consumer/consumer"
