#include "halo3d/nn/Activation.hpp"

#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d::nn {

TensorBlock blockFor(const TensorSpec& spec, const GridShape& grid, const GridCoords& coords,
                     const HaloWidths& halo) {
  if (spec.dist == Distribution::Spatial)
    return TensorBlock::forGrid(spec.shape, grid, coords, halo);
  checkDecomposable("samples (N)", spec.shape[0], grid.n());
  const index_t n0 = blockOffset(spec.shape[0], grid.n(), coords.n);
  const index_t n1 = n0 + blockExtent(spec.shape[0], grid.n(), coords.n);
  return TensorBlock(spec.shape, n0, n1, Box::fromExtents(spec.volume()), halo);
}

TensorBlock blockFor(const TensorSpec& spec, const ProcessGrid& grid, const HaloWidths& halo) {
  return blockFor(spec, grid.shape(), grid.coords(), halo);
}

const Tensor& Activation::floatTensor() const {
  require<InputError>(
      !isBf16(), "activation '", tensor_bf16.label(),
      "' holds bf16; this code needs its float storage (use nn/PrecisionBridge.hpp)");
  return tensor;
}

const TensorBf16& Activation::bf16Tensor() const {
  require<InputError>(isBf16(), "activation '", tensor.label(),
                      "' holds fp32; this code needs bf16 storage");
  return tensor_bf16;
}

Activation makeActivation(const std::string& label, const TensorSpec& spec, const ProcessGrid& grid,
                          const HaloWidths& halo, Precision precision) {
  requirePrecisionAvailable(precision);
  Activation a;
  a.spec = spec;
  a.precision = precision;
  if (precision == Precision::bf16)
    a.tensor_bf16 = TensorBf16(label, blockFor(spec, grid, halo));
  else
    a.tensor = Tensor(label, blockFor(spec, grid, halo));
  return a;
}

}  // namespace halo3d::nn
