#include "halo3d/nn/Activation.hpp"

#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d::nn {

TensorBlock blockFor(const TensorSpec& spec, const ProcessGrid& grid, const HaloWidths& halo) {
  if (spec.dist == Distribution::Spatial) return grid.blockOf(spec.shape, halo);
  checkDecomposable("samples (N)", spec.shape[0], grid.shape().n());
  const index_t n0 = blockOffset(spec.shape[0], grid.shape().n(), grid.coords().n);
  const index_t n1 = n0 + blockExtent(spec.shape[0], grid.shape().n(), grid.coords().n);
  return TensorBlock(spec.shape, n0, n1, Box::fromExtents(spec.volume()), halo);
}

Activation makeActivation(const std::string& label, const TensorSpec& spec, const ProcessGrid& grid,
                          const HaloWidths& halo) {
  Activation a;
  a.spec = spec;
  a.tensor = Tensor(label, blockFor(spec, grid, halo));
  return a;
}

}  // namespace halo3d::nn
