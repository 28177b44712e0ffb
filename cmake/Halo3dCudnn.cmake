# halo3d_find_cudnn(<what-it-enables>)
# Finds cuDNN (>= 8: the Nd convolution API) for the cuDNN comparison benchmark without letting a missing or
# broken one fail the configure, as halo3d_find_optional_package does for CONFIG packages (cuDNN ships none).
# Looks in CUDNN_ROOT (variable or environment), the CUDA toolkit, the system folders and the nvidia-cudnn
# Python wheel that PyTorch installs (python3 -c "import nvidia.cudnn"; its library is libcudnn.so.9 with no
# unversioned name). A probe then compiles and links a program calling the convolution entry points, with the
# project's C++ compiler: a header without its library, a library of another version, or a header that does not
# compile disables the benchmark with a notice naming why. Sets HALO3D_CUDNN_FOUND and HALO3D_CUDNN_VERSION in the
# caller's scope and, when found, the imported target halo3d::cudnn.
function(halo3d_find_cudnn what)
  set(HALO3D_CUDNN_FOUND FALSE PARENT_SCOPE)
  set(hints)
  foreach(root "${CUDNN_ROOT}" "$ENV{CUDNN_ROOT}" "${CUDAToolkit_ROOT}" "$ENV{CUDA_HOME}" /usr/local/cuda)
    if(root)
      list(APPEND hints ${root})
    endif()
  endforeach()
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import nvidia.cudnn as m; print(list(m.__path__)[0])"
                    OUTPUT_VARIABLE wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND wheel)
      list(APPEND hints ${wheel})
    endif()
  endif()
  find_path(HALO3D_CUDNN_INCLUDE_DIR cudnn.h HINTS ${hints} PATH_SUFFIXES include
            DOC "folder of cudnn.h (bench_conv3d_cudnn)")
  find_library(HALO3D_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 libcudnn.so.8 HINTS ${hints}
               PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu DOC "libcudnn (bench_conv3d_cudnn)")
  if(NOT HALO3D_CUDNN_INCLUDE_DIR OR NOT HALO3D_CUDNN_LIBRARY)
    message(STATUS "notice: cuDNN is absent, so ${what} is disabled: cudnn.h at '${HALO3D_CUDNN_INCLUDE_DIR}', "
                   "libcudnn at '${HALO3D_CUDNN_LIBRARY}' (set CUDNN_ROOT to its prefix)")
    return()
  endif()

  # The version: cudnn_version.h since cuDNN 8, cudnn.h before.
  set(version_header ${HALO3D_CUDNN_INCLUDE_DIR}/cudnn_version.h)
  if(NOT EXISTS ${version_header})
    set(version_header ${HALO3D_CUDNN_INCLUDE_DIR}/cudnn.h)
  endif()
  file(STRINGS ${version_header} lines REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
  set(version "")
  foreach(part MAJOR MINOR PATCHLEVEL)
    if(lines MATCHES "CUDNN_${part} +([0-9]+)")
      list(APPEND version ${CMAKE_MATCH_1})
    endif()
  endforeach()
  list(JOIN version "." version)
  if(NOT version OR version VERSION_LESS 8)
    message(STATUS "notice: cuDNN at ${HALO3D_CUDNN_INCLUDE_DIR} is version '${version}', so ${what} is disabled: "
                   "it needs cuDNN 8 or newer")
    return()
  endif()

  # cudnn.h includes the CUDA runtime's headers: nvcc_wrapper finds them itself, a host compiler needs them named.
  set(include_dirs ${HALO3D_CUDNN_INCLUDE_DIR})
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    list(APPEND include_dirs ${CUDAToolkit_INCLUDE_DIRS})
  endif()
  set(probe ${PROJECT_BINARY_DIR}/probe/cudnn)
  file(WRITE ${probe}/probe.cpp [=[
#include <cudnn.h>
#include <cstdio>
int main() {
  // The entry points the benchmark calls: the link fails if the library lacks them.
  void* used[] = {(void*)&cudnnSetConvolutionNdDescriptor, (void*)&cudnnSetTensorNdDescriptorEx,
                  (void*)&cudnnFindConvolutionForwardAlgorithmEx, (void*)&cudnnConvolutionBackwardData,
                  (void*)&cudnnConvolutionBackwardFilter, (void*)&cudnnSetConvolutionMathType};
  std::printf("%zu %p\n", cudnnGetVersion(), used[0]);
  return 0;
}
]=])
  try_compile(ok ${probe}/build SOURCES ${probe}/probe.cpp
              CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${include_dirs}"
              LINK_LIBRARIES ${HALO3D_CUDNN_LIBRARY}
              CXX_STANDARD 17
              OUTPUT_VARIABLE out)
  if(NOT ok)
    set(why "the probe program did not compile and link")
    if(out MATCHES "([^\n]*(error|undefined reference)[^\n]*)")
      string(STRIP "${CMAKE_MATCH_1}" why)
    endif()
    message(STATUS "notice: cuDNN ${version} at ${HALO3D_CUDNN_LIBRARY} is unusable, so ${what} is disabled: ${why}")
    return()
  endif()
  if(NOT TARGET halo3d::cudnn)
    add_library(halo3d::cudnn UNKNOWN IMPORTED)
    set_target_properties(halo3d::cudnn PROPERTIES IMPORTED_LOCATION ${HALO3D_CUDNN_LIBRARY}
                          INTERFACE_INCLUDE_DIRECTORIES "${include_dirs}")
  endif()
  message(STATUS "cuDNN ${version}: ${HALO3D_CUDNN_LIBRARY}")
  set(HALO3D_CUDNN_FOUND TRUE PARENT_SCOPE)
  set(HALO3D_CUDNN_VERSION ${version} PARENT_SCOPE)
endfunction()
