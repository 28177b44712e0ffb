#pragma once
// What every GoogleTest main does around the run: GoogleTest's flags, Kokkos initialised around the
// whole run, and floating-point invalid operations trapped, so that a NaN surfaces where it is made
// rather than as a later mismatch.

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cfenv>
#include <cstdlib>

namespace halo3d::testing {

// run() (which returns the exit status) with GoogleTest and Kokkos initialised.
template <class Run>
int runWithKokkos(int& argc, char** argv, const Run& run) {
  ::testing::InitGoogleTest(&argc, argv);
  // Kokkos warns (on stdout, which test discovery parses) unless OMP_PROC_BIND is set.
  setenv("OMP_PROC_BIND", "false", 0);
  Kokkos::ScopeGuard kokkos(argc, argv);
#if defined(__GLIBC__) && !defined(__CUDACC__)
  feenableexcept(FE_INVALID);
#endif
  return run();
}

}  // namespace halo3d::testing
