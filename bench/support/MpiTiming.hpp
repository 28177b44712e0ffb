#pragma once
#include <mpi.h>

namespace halo3d::bench {

// The slowest rank's time: an MPI step is as fast as its last rank. Also aligns the ranks.
inline double maxOverRanks(double seconds, MPI_Comm comm = MPI_COMM_WORLD) {
  double max = 0;
  MPI_Allreduce(&seconds, &max, 1, MPI_DOUBLE, MPI_MAX, comm);
  return max;
}

inline int worldSize() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

}  // namespace halo3d::bench
