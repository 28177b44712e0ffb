#include "halo3d/core/TensorBlock.hpp"

#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d {

TensorBlock::TensorBlock(const Shape5& global_shape, index_t n0, index_t n1, const Box& owned,
                         const HaloWidths& halo)
    : _global(global_shape), _n0(n0), _n1(n1), _owned(owned), _halo(halo) {
  for (int k = 0; k < 5; ++k)
    require<ShapeError>(global_shape[k] > 0, "tensor shape ", global_shape,
                        " must have positive extents (axis ", k, " is ", global_shape[k], ")");
  require<ShapeError>(0 <= n0 && n0 <= n1 && n1 <= global_shape[0], "sample range [", n0, ", ", n1,
                      ") outside the ", global_shape[0], " samples of shape ", global_shape);
  require<ShapeError>(Box::fromExtents(globalExtents()).contains(owned), "owned block ", owned,
                      " outside the volume ", globalExtents());
  for (int d = 0; d < 3; ++d)
    require<ShapeError>(halo.lo[d] >= 0 && halo.hi[d] >= 0, "negative halo width ", halo);
}

TensorBlock TensorBlock::whole(const Shape5& global_shape, const HaloWidths& halo) {
  return TensorBlock(global_shape, 0, global_shape[0],
                     Box::fromExtents({global_shape[2], global_shape[3], global_shape[4]}), halo);
}

TensorBlock TensorBlock::forGrid(const Shape5& global_shape, const GridShape& grid,
                                 const GridCoords& coords, const HaloWidths& halo) {
  for (int k = 0; k < 5; ++k)
    require<ShapeError>(global_shape[k] > 0, "tensor shape ", global_shape,
                        " must have positive extents (axis ", k, " is ", global_shape[k], ")");
  checkDecomposable("samples (N)", global_shape[0], grid.n());
  const index_t n0 = blockOffset(global_shape[0], grid.n(), coords.n);
  const index_t n1 = n0 + blockExtent(global_shape[0], grid.n(), coords.n);
  const Extents3 extents{global_shape[2], global_shape[3], global_shape[4]};
  const std::array<int, 3> parts = grid.spatial();
  const Box owned = blockBox(extents, parts, coords.spatial());
  // A neighbour's ghosts come from this block alone (one round, no two-hop relay): along every
  // split dimension the smallest block must be at least as thick as the widest ghost it feeds.
  for (int d = 0; d < 3; ++d) {
    if (parts[d] == 1) continue;
    const index_t thinnest = extents[d] / parts[d];
    const int widest = std::max(halo.lo[d], halo.hi[d]);
    require<ShapeError>(thinnest >= widest, "owned extent ", thinnest, " along ", dimName(d),
                        " (global extent ", extents[d], " over ", parts[d],
                        " blocks) is smaller than the halo width ", widest, " (halo ", halo,
                        "); use fewer blocks along ", dimName(d), " or a larger volume");
  }
  return TensorBlock(global_shape, n0, n1, owned, halo);
}

Shape5 TensorBlock::allocationExtents() const {
  return {localSamples(), channels(), _owned.extent(0) + _halo.lo[0] + _halo.hi[0],
          _owned.extent(1) + _halo.lo[1] + _halo.hi[1],
          _owned.extent(2) + _halo.lo[2] + _halo.hi[2]};
}

Box TensorBlock::localOwned() const {
  return Box::fromExtents(_owned.extents()).shifted(_halo.loExtents());
}

Box TensorBlock::localAll() const {
  const Shape5 a = allocationExtents();
  return Box::fromExtents({a[2], a[3], a[4]});
}

Extents3 TensorBlock::toLocal(const Extents3& g) const {
  return {g[0] - _owned.min(0) + _halo.lo[0], g[1] - _owned.min(1) + _halo.lo[1],
          g[2] - _owned.min(2) + _halo.lo[2]};
}

Extents3 TensorBlock::toGlobal(const Extents3& l) const {
  return {l[0] + _owned.min(0) - _halo.lo[0], l[1] + _owned.min(1) - _halo.lo[1],
          l[2] + _owned.min(2) - _halo.lo[2]};
}

bool TensorBlock::atBoundary(int dim, int side) const {
  return side == 0 ? _owned.min(dim) == 0 : _owned.max(dim) == globalExtents()[dim];
}

std::ostream& operator<<(std::ostream& os, const TensorBlock& b) {
  os << "TensorBlock{shape (" << b._global[0] << ',' << b._global[1] << ',' << b._global[2] << ','
     << b._global[3] << ',' << b._global[4] << "), samples [" << b._n0 << ',' << b._n1
     << "), owned " << b._owned << ", halo " << b._halo << '}';
  return os;
}

}  // namespace halo3d
