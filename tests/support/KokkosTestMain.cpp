// GoogleTest main for tests without MPI (see TestMain.hpp for what surrounds the run).
#include "support/TestMain.hpp"

int main(int argc, char** argv) {
  return halo3d::testing::runWithKokkos(argc, argv, [] { return RUN_ALL_TESTS(); });
}
