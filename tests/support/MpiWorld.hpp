#pragma once
// The calling rank and the size of MPI_COMM_WORLD, for tests that sweep every grid of the ranks
// they were started with.
#include <mpi.h>

namespace halo3d::testing {

inline int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int worldSize() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

}  // namespace halo3d::testing
