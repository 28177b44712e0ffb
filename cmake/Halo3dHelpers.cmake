# Helpers shared by the layer folders: one way to declare a library, a test and a benchmark.

set(HALO3D_MPIEXEC_FLAGS ${MPIEXEC_NUMPROC_FLAG})
execute_process(COMMAND id -u OUTPUT_VARIABLE _halo3d_uid OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
set(HALO3D_MPIEXEC_EXTRA --oversubscribe)
if(_halo3d_uid STREQUAL "0")
  list(APPEND HALO3D_MPIEXEC_EXTRA --allow-run-as-root)
endif()

# Every header is included as "halo3d/<layer>/X.hpp", in the tree as once installed, so that a consumer's include
# path holds no generic folder names (core/, io/, nn/). The folders stay the layers: the build tree's
# include/halo3d is a link to the source root.
set(HALO3D_BUILD_INCLUDE_DIR ${PROJECT_BINARY_DIR}/include)
file(MAKE_DIRECTORY ${HALO3D_BUILD_INCLUDE_DIR})
if(NOT EXISTS ${HALO3D_BUILD_INCLUDE_DIR}/halo3d)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR} ${HALO3D_BUILD_INCLUDE_DIR}/halo3d SYMBOLIC)
endif()

# halo3d_add_library(<layer> SOURCES ... [DEPENDS targets...] [PRIVATE_DEPENDS targets...] [NO_HEADERS])
# Creates target halo3d_<layer>, alias halo3d::<layer>, installs and exports it, with the layer folder's headers
# (NO_HEADERS: a target inside another layer's folder, whose headers that layer installs).
function(halo3d_add_library layer)
  cmake_parse_arguments(ARG "NO_HEADERS" "" "SOURCES;DEPENDS;PRIVATE_DEPENDS" ${ARGN})
  set(target halo3d_${layer})
  if(ARG_SOURCES)
    add_library(${target} ${ARG_SOURCES})
    set(scope PUBLIC)
  else()
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  endif()
  add_library(halo3d::${layer} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${layer} OUTPUT_NAME halo3d_${layer})
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${HALO3D_BUILD_INCLUDE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} ${scope} cxx_std_17)
  if(ARG_DEPENDS)
    target_link_libraries(${target} ${scope} ${ARG_DEPENDS})
  endif()
  if(ARG_PRIVATE_DEPENDS)
    target_link_libraries(${target} PRIVATE ${ARG_PRIVATE_DEPENDS})
  endif()
  if(ARG_SOURCES)
    halo3d_target_flags(${target})
  endif()
  install(TARGETS ${target} EXPORT halo3dTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  if(NOT ARG_NO_HEADERS)
    install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/halo3d/${layer}
            FILES_MATCHING PATTERN "*.hpp")
  endif()
endfunction()

# Private compile flags for halo3d's own translation units.
function(halo3d_target_flags target)
  if(HALO3D_ENABLE_NATIVE AND NOT Kokkos_ENABLE_CUDA)
    target_compile_options(${target} PRIVATE -march=native)
    # GCC 12 with AVX-512 miscompiles constants whose low half repeats and high half is zero (the SLP vectorizer
    # emits one broadcast for the whole register: std::vector<float>{1,1,1,1,0,0,0,0} comes out all ones at -O2
    # -march=native on Sapphire Rapids). halo3d's SIMD kernels use explicit vector types, unaffected by this flag.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE -fno-tree-slp-vectorize)
    endif()
  endif()
  if(NOT Kokkos_ENABLE_CUDA)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  endif()
  # UB is fatal (-fno-sanitize-recover), so a test that hits it fails instead of printing and passing.
  if(HALO3D_ENABLE_SANITIZERS)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-sanitize-recover=undefined
                                             -fno-omit-frame-pointer)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
  if(HALO3D_ENABLE_TSAN)
    target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(${target} PUBLIC -fsanitize=thread)
  endif()
endfunction()

# An executable of the project: its sources, what it links, and the project's flags.
function(_halo3d_executable name sources depends)
  add_executable(${name} ${sources})
  target_link_libraries(${name} PRIVATE ${depends})
  halo3d_target_flags(${name})
endfunction()

# Sets <var> to the command that runs target <name> on <np> MPI ranks (oversubscribed), followed by ARGN.
function(_halo3d_mpi_command var name np)
  set(${var} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${HALO3D_MPIEXEC_EXTRA} ${MPIEXEC_PREFLAGS}
      $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS} ${ARGN} PARENT_SCOPE)
endfunction()

# halo3d_add_test(<name> SOURCES ... DEPENDS ... [RANKS 1 2 4 8] [LABELS ...] [TIMEOUT s])
# Without RANKS: a plain executable whose GoogleTest cases are discovered one by one.
# With RANKS: an MPI executable registered once per rank count as <name>.np<N>, oversubscribed.
function(halo3d_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPENDS;RANKS;LABELS" ${ARGN})
  _halo3d_executable(${name} "${ARG_SOURCES}" "${ARG_DEPENDS}")
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(ARG_RANKS)
    foreach(np ${ARG_RANKS})
      _halo3d_mpi_command(command ${name} ${np})
      add_test(NAME ${name}.np${np} COMMAND ${command})
      set_tests_properties(${name}.np${np} PROPERTIES
        TIMEOUT ${ARG_TIMEOUT} PROCESSORS ${np} LABELS "mpi;${ARG_LABELS}"
        ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false;OMPI_MCA_rmaps_base_oversubscribe=1")
    endforeach()
  else()
    include(GoogleTest)
    # A CUDA build may be compiled where no GPU is (CI): listing the cases runs the binary, whose
    # Kokkos::initialize needs a device, so its cases are listed when ctest runs, not after linking.
    set(_discovery_mode POST_BUILD)
    if(Kokkos_ENABLE_CUDA)
      set(_discovery_mode PRE_TEST)
    endif()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 DISCOVERY_MODE ${_discovery_mode} TEST_PREFIX "${name}."
      PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}" ENVIRONMENT "OMP_NUM_THREADS=2;OMP_PROC_BIND=false")
  endif()
endfunction()

# halo3d_add_benchmark(<name> SOURCES ... DEPENDS ... [SMOKE_ARGS ...] [SMOKE_RANKS n])
# Every benchmark also runs a tiny configuration as a CTest smoke test (bench.<name>), so it cannot rot.
function(halo3d_add_benchmark name)
  cmake_parse_arguments(ARG "" "SMOKE_RANKS" "SOURCES;DEPENDS;SMOKE_ARGS" ${ARGN})
  _halo3d_executable(${name} "${ARG_SOURCES}" "${ARG_DEPENDS}")
  if(HALO3D_ENABLE_TESTS AND ARG_SMOKE_ARGS)
    if(ARG_SMOKE_RANKS)
      _halo3d_mpi_command(command ${name} ${ARG_SMOKE_RANKS} ${ARG_SMOKE_ARGS})
      add_test(NAME bench.${name} COMMAND ${command})
    else()
      add_test(NAME bench.${name} COMMAND $<TARGET_FILE:${name}> ${ARG_SMOKE_ARGS})
    endif()
    set_tests_properties(bench.${name} PROPERTIES TIMEOUT 300 LABELS "bench-smoke"
                         ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false")
  endif()
endfunction()

function(halo3d_print_summary)
  set(_hdf5 "not used")
  if(HDF5_FOUND)
    set(_hdf5 "${HDF5_VERSION} (parallel: ${HDF5_IS_PARALLEL})")
  endif()
  set(_dnnl "not found")
  if(dnnl_FOUND)
    set(_dnnl "${dnnl_VERSION}")
  endif()
  set(_cudnn "CUDA builds only")
  if(HALO3D_CUDNN_FOUND)
    set(_cudnn "cuDNN ${HALO3D_CUDNN_VERSION}")
  elseif(Kokkos_ENABLE_CUDA)
    set(_cudnn "not found")
  endif()
  set(_backend "${HALO3D_DEVICE_BACKEND}")
  if(Kokkos_ENABLE_CUDA)
    # Kokkos_ARCH (KokkosConfigCommon.cmake) names the GPU the install was built for, e.g. AMPERE80 or HOPPER90.
    string(APPEND _backend " (Kokkos_ARCH ${Kokkos_ARCH})")
  endif()
  message(STATUS "")
  message(STATUS "halo3d ${PROJECT_VERSION} configuration summary")
  message(STATUS "  build type ............ ${CMAKE_BUILD_TYPE}")
  message(STATUS "  C++ compiler .......... ${CMAKE_CXX_COMPILER} (${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION})")
  message(STATUS "  Kokkos ................ ${Kokkos_VERSION} at ${Kokkos_DIR}")
  message(STATUS "  Kokkos backend ........ ${_backend}")
  message(STATUS "  Kokkos Kernels ........ ${KokkosKernels_VERSION}")
  message(STATUS "  MPI layers ............ ${HALO3D_ENABLE_MPI} ${MPI_CXX_VERSION}")
  message(STATUS "  GPU-aware MPI ......... ${HALO3D_ENABLE_GPU_AWARE_MPI}")
  message(STATUS "  HDF5 .................. ${_hdf5}")
  message(STATUS "  tests ................. ${HALO3D_ENABLE_TESTS}")
  message(STATUS "  benchmarks ............ ${HALO3D_ENABLE_BENCHMARKS} (oneDNN anchor: ${_dnnl}; cuDNN comparison: ${_cudnn})")
  message(STATUS "  -march=native ......... ${HALO3D_ENABLE_NATIVE}")
  message(STATUS "  ASan + UBSan .......... ${HALO3D_ENABLE_SANITIZERS}")
  message(STATUS "  ThreadSanitizer ....... ${HALO3D_ENABLE_TSAN}")
  message(STATUS "")
endfunction()
