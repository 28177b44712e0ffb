#pragma once
// Where one rank's piece of a global (N, C, D, H, W) tensor lies: its samples, its owned spatial
// block in global indices, and the ghost widths around it. Pure data, no MPI, no allocation.

#include <array>
#include <ostream>

#include "halo3d/core/GridShape.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/core/Types.hpp"

namespace halo3d {

class TensorBlock {
 public:
  TensorBlock() = default;
  // Requires n0 <= n1 <= shape[0], owned inside shape's (D, H, W), non-negative widths.
  TensorBlock(const Shape5& global_shape, index_t n0, index_t n1, const Box& owned,
              const HaloWidths& halo);

  // The single block of a one-rank run: all samples, the whole volume.
  static TensorBlock whole(const Shape5& global_shape, const HaloWidths& halo = {});
  // The block of grid position `coords`: samples split over Pn, the volume over Pd x Ph x Pw, both
  // with BlockDecomposition. Throws ShapeError if an extent cannot be split or a block is thinner
  // than a halo width it must provide to a neighbour.
  static TensorBlock forGrid(const Shape5& global_shape, const GridShape& grid,
                             const GridCoords& coords, const HaloWidths& halo);

  const Shape5& globalShape() const { return _global; }
  index_t channels() const { return _global[1]; }
  Extents3 globalExtents() const { return {_global[2], _global[3], _global[4]}; }
  index_t sampleBegin() const { return _n0; }
  index_t sampleEnd() const { return _n1; }
  index_t localSamples() const { return _n1 - _n0; }
  // Owned cells in global spatial indices.
  const Box& owned() const { return _owned; }
  const HaloWidths& halo() const { return _halo; }

  // Extents of the allocation: (samples, C, D + lo + hi, H + ..., W + ...).
  Shape5 allocationExtents() const;
  // Owned cells in local (allocation) indices: [lo, lo + extent) per dimension.
  Box localOwned() const;
  // The whole allocation in local indices, ghosts included.
  Box localAll() const;
  // Local index of global cell `g` (may lie in the ghost region); and back.
  Extents3 toLocal(const Extents3& g) const;
  Extents3 toGlobal(const Extents3& local) const;
  // True if this block's owned region touches the global boundary on the lo (side 0) or hi (side 1)
  // side.
  bool atBoundary(int dim, int side) const;

  friend bool operator==(const TensorBlock& a, const TensorBlock& b) {
    return a._global == b._global && a._n0 == b._n0 && a._n1 == b._n1 && a._owned == b._owned &&
           a._halo == b._halo;
  }
  friend std::ostream& operator<<(std::ostream& os, const TensorBlock& b);

 private:
  Shape5 _global{0, 0, 0, 0, 0};
  index_t _n0 = 0, _n1 = 0;
  Box _owned;
  HaloWidths _halo;
};

}  // namespace halo3d
