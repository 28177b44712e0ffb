#!/usr/bin/env bash
# broken_cudnn.sh SOURCE_DIR WORK_DIR: cmake/Halo3dCudnn.cmake, which finds cuDNN for bench_conv3d_cudnn, never
# fails a configure. A throwaway project calls halo3d_find_cudnn with CUDNN_ROOT pointing at three broken
# installs: a cudnn.h whose library is not a library, a cudnn.h that does not compile, and a cuDNN 7 header.
# Each configure must pass, print a notice naming the reason, and leave halo3d::cudnn undefined. (With the host
# compiler: the module is the same in CUDA builds, where CI's CUDA stage finds the real cuDNN.)
set -euo pipefail
src="$1"; work="$2"
rm -rf "$work" && mkdir -p "$work/project"
cat > "$work/project/CMakeLists.txt" << CMAKE
cmake_minimum_required(VERSION 3.18)
project(halo3d_cudnn_probe LANGUAGES CXX)
list(APPEND CMAKE_MODULE_PATH "$src/cmake")
include(Halo3dCudnn)
halo3d_find_cudnn("the cuDNN comparison (bench_conv3d_cudnn)")
if(TARGET halo3d::cudnn OR HALO3D_CUDNN_FOUND)
  message(FATAL_ERROR "a broken cuDNN was taken as usable")
endif()
CMAKE

fake() {  # fake <name> <cudnn.h body> <library bytes>
  local root="$work/$1"
  mkdir -p "$root/include" "$root/lib64"
  printf '%s\n' "$2" > "$root/include/cudnn.h"
  printf '#define CUDNN_MAJOR %s\n#define CUDNN_MINOR 0\n#define CUDNN_PATCHLEVEL 0\n' "${4:-9}" \
    > "$root/include/cudnn_version.h"
  printf '%s' "$3" > "$root/lib64/libcudnn.so"
}
fake not_a_library '#include <cstddef>
extern "C" std::size_t cudnnGetVersion();' 'not an ELF file'
fake bad_header '#error this cudnn.h is broken' 'not an ELF file'
fake too_old '#include <cstddef>' 'not an ELF file' 7

status=0
for case in not_a_library bad_header too_old; do
  if ! cmake -S "$work/project" -B "$work/build-$case" -DCUDNN_ROOT="$work/$case" > "$work/$case.log" 2>&1; then
    tail -20 "$work/$case.log"
    echo "FAIL ($case): the configure failed"
    status=1
    continue
  fi
  if ! grep -q "notice: cuDNN .*bench_conv3d_cudnn) is disabled" "$work/$case.log"; then
    tail -20 "$work/$case.log"
    echo "FAIL ($case): no notice naming what is disabled"
    status=1
    continue
  fi
  grep "notice: cuDNN" "$work/$case.log" | sed "s/^/  ($case) /"
done
((status == 0)) && echo "PASS: a broken cuDNN disables bench_conv3d_cudnn and never fails the configure"
exit "$status"
