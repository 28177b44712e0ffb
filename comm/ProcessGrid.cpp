#include "halo3d/comm/ProcessGrid.hpp"

#include "halo3d/core/Error.hpp"

namespace halo3d {

ProcessGrid::ProcessGrid(MPI_Comm comm, const GridShape& shape) : _shape(shape) {
  int size = 0;
  checkMpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  // Every rank sees the same size and shape, so every rank throws together: no hang.
  require<InputError>(shape.size() == size, "process grid ", shape.str(), " has ", shape.size(),
                      " ranks but the communicator has ", size,
                      " (the product N*D*H*W must equal the number of MPI ranks)");
  _world = Communicator::duplicate(comm);
  _rank = _world.rank();
  _coords = shape.coordsOf(_rank);
  _spatial = Communicator::split(_world, _coords.n, shape.spatialRankOf(_coords.spatial()));
  _data = Communicator::split(_world, shape.spatialRankOf(_coords.spatial()), _coords.n);
}

int ProcessGrid::neighbour(const std::array<int, 3>& offset) const {
  const int r = _shape.neighbourSpatialRank(_coords.spatial(), offset);
  return r < 0 ? MPI_PROC_NULL : r;
}

}  // namespace halo3d
