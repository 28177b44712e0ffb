// GoogleTest main for tests without MPI: Kokkos is initialised around the whole run, and
// floating-point invalid operations trap, so a NaN surfaces where it is made rather than as a later
// mismatch.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cfenv>
#include <cstdlib>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Kokkos warns (on stdout, which test discovery parses) unless OMP_PROC_BIND is set.
  setenv("OMP_PROC_BIND", "false", 0);
  Kokkos::ScopeGuard kokkos(argc, argv);
#if defined(__GLIBC__) && !defined(__CUDACC__)
  feenableexcept(FE_INVALID);
#endif
  return RUN_ALL_TESTS();
}
