# Finds every dependency with a minimum version and CONFIG mode where the package ships one.

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
    find_package(dnnl CONFIG QUIET)
  endif()
endif()

if(HALO3D_ENABLE_GPU_AWARE_MPI AND NOT HALO3D_ENABLE_MPI)
  message(FATAL_ERROR "HALO3D_ENABLE_GPU_AWARE_MPI=ON needs HALO3D_ENABLE_MPI=ON")
endif()
