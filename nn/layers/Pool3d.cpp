#include "halo3d/nn/layers/Pool3d.hpp"

#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/Pool3d.hpp"

namespace halo3d::nn {

Pool3d::Pool3d(std::string name, PoolKind kind, const WindowGeometry& g)
    : GeometryWindowLayer(std::move(name), g), _kind(kind) {
  kernels::validatePool3d(_g);
}

std::string Pool3d::kind() const {
  return concat(_kind == PoolKind::Max ? "MaxPool3d(k" : "AvgPool3d(k", _g.kernel, " s", _g.stride,
                " p", _g.padding, ")");
}

void Pool3d::setup(const ProcessGrid& grid, const std::vector<const Activation*>& in,
                   const Activation& out) {
  WindowLayer::setup(grid, in, out);
  if (_kind == PoolKind::Max) _argmax = HaloTensor<index_t>(name() + ".argmax", out.block());
}

void Pool3d::computeForward(const Activation& x, const Activation& y, const Box& out) {
  if (_kind == PoolKind::Max)
    kernels::maxPool3dForward(x.tensor, _g, y.tensor, _argmax, out);
  else
    kernels::avgPool3dForward(x.tensor, _g, y.tensor, out);
}

void Pool3d::computeBackwardData(const Activation& dy, const Activation& dx, const Box& in_box,
                                 const Box& dy_box) {
  using Exec = Kokkos::DefaultExecutionSpace;
  if (_kind == PoolKind::Max)
    kernels::maxPool3dBackward(Exec(), dy.tensor, _argmax, _g, dx.tensor, in_box, dy_box);
  else
    kernels::avgPool3dBackward(Exec(), dy.tensor, _g, dx.tensor, in_box, dy_box);
}

void Pool3d::forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) {
  forwardWithOverlap(ctx, *in[0], out);
}

void Pool3d::backward(RunContext& ctx, const std::vector<const Activation*>&, const Activation&,
                      const Activation& dout, const std::vector<Activation*>& din) {
  if (din[0]) backwardDataWithOverlap(ctx, dout, *din[0]);
}

}  // namespace halo3d::nn
