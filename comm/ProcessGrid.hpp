#pragma once
// ProcessGrid: an NxDxHxW Cartesian grid of MPI ranks on a duplicated communicator, with the
// spatial group (the ranks holding the blocks of one sample group, consecutive in rank order) and
// the data group (the ranks holding the same block of different sample groups) as
// sub-communicators.
//
// The pure topology (rank <-> coordinates, the 26 neighbours) is core/GridShape; this class adds
// the communicators. It lives in comm/ because core/ must build without MPI.

#include <mpi.h>

#include <array>

#include "halo3d/comm/Communicator.hpp"
#include "halo3d/core/GridShape.hpp"
#include "halo3d/core/TensorBlock.hpp"

namespace halo3d {

class ProcessGrid {
 public:
  // Collective over `comm`. Throws InputError, on every rank, if shape.size() differs from comm's
  // size.
  ProcessGrid(MPI_Comm comm, const GridShape& shape);

  const GridShape& shape() const { return _shape; }
  const GridCoords& coords() const { return _coords; }
  int rank() const { return _rank; }
  int size() const { return _shape.size(); }
  bool isRoot() const { return _rank == 0; }

  // All ranks of the grid (a duplicate of the communicator given at construction).
  MPI_Comm comm() const { return _world.get(); }
  // The Pd*Ph*Pw ranks holding the blocks of this rank's samples; rank there =
  // GridShape::spatialRankOf.
  MPI_Comm spatialComm() const { return _spatial.get(); }
  // The Pn ranks holding this rank's block of the other sample groups; rank there = coords().n.
  MPI_Comm dataComm() const { return _data.get(); }
  int spatialRank() const { return _shape.spatialRankOf(_coords.spatial()); }

  // Rank in spatialComm() of the neighbour at `offset` in {-1,0,1}^3, or MPI_PROC_NULL past the
  // boundary.
  int neighbour(const std::array<int, 3>& offset) const;

  // This rank's block of a global tensor of `shape` with ghost widths `halo` (see
  // TensorBlock::forGrid).
  TensorBlock blockOf(const Shape5& shape, const HaloWidths& halo = {}) const {
    return TensorBlock::forGrid(shape, _shape, _coords, halo);
  }

 private:
  GridShape _shape;
  GridCoords _coords;
  int _rank = 0;
  Communicator _world, _spatial, _data;
};

}  // namespace halo3d
