#include "halo3d/nn/layers/Pool3d.hpp"

#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/Pool3d.hpp"

namespace halo3d::nn {

namespace {
using Exec = Kokkos::DefaultExecutionSpace;

// The pooling kernels take bf16 under the same names (float comparisons and sums, each output
// rounded once): one body for both storages.
template <class T>
void poolForward(PoolKind kind, const WindowGeometry& g, const HaloTensor<T>& x,
                 const HaloTensor<T>& y, const HaloTensor<index_t>& argmax, const Box& out) {
  if (kind == PoolKind::Max)
    kernels::maxPool3dForward(x, g, y, argmax, out);
  else
    kernels::avgPool3dForward(x, g, y, out);
}

template <class T>
void poolBackward(PoolKind kind, const WindowGeometry& g, const HaloTensor<T>& dy,
                  const HaloTensor<index_t>& argmax, const HaloTensor<T>& dx, const Box& in_box,
                  const Box& dy_box) {
  if (kind == PoolKind::Max)
    kernels::maxPool3dBackward(Exec(), dy, argmax, g, dx, in_box, dy_box);
  else
    kernels::avgPool3dBackward(Exec(), dy, g, dx, in_box, dy_box);
}
}  // namespace

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
  if (x.isBf16()) return poolForward(_kind, _g, x.bf16Tensor(), y.bf16Tensor(), _argmax, out);
  poolForward(_kind, _g, x.tensor, y.tensor, _argmax, out);
}

void Pool3d::computeBackwardData(const Activation& dy, const Activation& dx, const Box& in_box,
                                 const Box& dy_box) {
  if (dy.isBf16())
    return poolBackward(_kind, _g, dy.bf16Tensor(), _argmax, dx.bf16Tensor(), in_box, dy_box);
  poolBackward(_kind, _g, dy.tensor, _argmax, dx.tensor, in_box, dy_box);
}

void Pool3d::forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) {
  forwardWithOverlap(ctx, *in[0], out);
}

void Pool3d::backward(RunContext& ctx, const std::vector<const Activation*>&, const Activation&,
                      const Activation& dout, const std::vector<Activation*>& din) {
  if (din[0]) backwardDataWithOverlap(ctx, dout, *din[0]);
}

}  // namespace halo3d::nn
