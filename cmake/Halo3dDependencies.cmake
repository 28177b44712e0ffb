# Finds every dependency with a minimum version and CONFIG mode where the package ships one.

# halo3d_find_optional_package(<name> <what-it-enables>)
# Finds an optional CONFIG package without letting a broken one fail the configure. A package's config
# file may itself call find_package(... REQUIRED) on something absent (Debian 12's dnnl-config.cmake
# requires OpenCL, whose headers libdnnl-dev only recommends), and QUIET does not shield that: the
# FATAL_ERROR would end our configure. So the package is first loaded in a throwaway CMake run, and only
# loaded here when that run succeeds. Sets <name>_FOUND; prints a notice naming what is disabled.
function(halo3d_find_optional_package name what)
  set(probe ${PROJECT_BINARY_DIR}/probe/${name})
  file(WRITE ${probe}/CMakeLists.txt
       "cmake_minimum_required(VERSION 3.18)\nproject(halo3d_probe_${name} LANGUAGES C CXX)\n"
       "find_package(${name} CONFIG REQUIRED)\n")
  # The search settings travel in an initial-cache script: list values would split on the command line.
  set(init "")
  foreach(var CMAKE_C_COMPILER CMAKE_CXX_COMPILER CMAKE_CXX_FLAGS CMAKE_PREFIX_PATH ${name}_DIR ${name}_ROOT)
    if(DEFINED ${var})
      string(APPEND init "set(${var} \"${${var}}\" CACHE STRING \"\")\n")
    endif()
  endforeach()
  file(WRITE ${probe}/init.cmake "${init}")
  file(REMOVE_RECURSE ${probe}/build)
  execute_process(COMMAND ${CMAKE_COMMAND} -C ${probe}/init.cmake -S ${probe} -B ${probe}/build
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    # The probe's first error line says why ("Could NOT find OpenCL (missing: ...)").
    set(why "its package configuration was not found")
    if(err MATCHES "CMake Error[^\n]*\n[ \n]*([^\n]+)")
      string(STRIP "${CMAKE_MATCH_1}" why)
    endif()
    message(STATUS "notice: ${name} is absent or unusable, so ${what} is disabled: ${why}")
    set(${name}_FOUND FALSE PARENT_SCOPE)
    return()
  endif()
  find_package(${name} CONFIG QUIET)
  set(${name}_FOUND ${${name}_FOUND} PARENT_SCOPE)
  set(${name}_VERSION ${${name}_VERSION} PARENT_SCOPE)
endfunction()

find_package(Kokkos 3.4 CONFIG REQUIRED)
# Kokkos Kernels usually sits in the same prefix as Kokkos: look there first.
get_filename_component(_halo3d_kokkos_prefix "${Kokkos_DIR}/../../.." ABSOLUTE)
find_package(KokkosKernels CONFIG REQUIRED HINTS ${_halo3d_kokkos_prefix} ${Kokkos_ROOT})
find_package(OpenMP)

if(Kokkos_ENABLE_CUDA)
  set(HALO3D_DEVICE_BACKEND CUDA)
elseif(Kokkos_ENABLE_OPENMP)
  set(HALO3D_DEVICE_BACKEND OpenMP)
else()
  set(HALO3D_DEVICE_BACKEND Serial)
endif()

if(HALO3D_ENABLE_MPI)
  find_package(MPI 3.0 REQUIRED COMPONENTS CXX)
  # Parallel HDF5 is the only HDF5 halo3d accepts with MPI: every rank reads its own hyperslab.
  set(HDF5_PREFER_PARALLEL TRUE)
  find_package(HDF5 REQUIRED COMPONENTS C)
  if(NOT HDF5_IS_PARALLEL)
    message(FATAL_ERROR
      "halo3d needs a *parallel* HDF5 (built with MPI), but the HDF5 found at '${HDF5_INCLUDE_DIRS}' is serial.\n"
      "On Debian install libhdf5-openmpi-dev, or point HDF5_ROOT at a parallel build, or configure with "
      "-DHALO3D_ENABLE_MPI=OFF for the kernels-only build.")
  endif()
else()
  # Serial HDF5 is optional without MPI: it only feeds the PyTorch-reference kernel tests.
  find_package(HDF5 COMPONENTS C QUIET)
endif()

if(HALO3D_ENABLE_TESTS)
  find_package(GTest 1.10 CONFIG REQUIRED)
endif()
if(HALO3D_ENABLE_BENCHMARKS)
  find_package(benchmark 1.5 CONFIG REQUIRED)
  if(HALO3D_ENABLE_ONEDNN_BENCH)
    halo3d_find_optional_package(dnnl "the oneDNN anchor benchmark (bench_conv3d_onednn)")
  endif()
  # cuDNN beside halo3d's CUDA conv3d (bench_conv3d_cudnn): CUDA builds only.
  if(HALO3D_ENABLE_CUDNN_BENCH AND Kokkos_ENABLE_CUDA)
    include(Halo3dCudnn)
    halo3d_find_cudnn("the cuDNN comparison (bench_conv3d_cudnn)")
  endif()
endif()

if(HALO3D_ENABLE_GPU_AWARE_MPI AND NOT HALO3D_ENABLE_MPI)
  message(FATAL_ERROR "HALO3D_ENABLE_GPU_AWARE_MPI=ON needs HALO3D_ENABLE_MPI=ON")
endif()
