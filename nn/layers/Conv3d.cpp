#include "halo3d/nn/layers/Conv3d.hpp"

#include <cmath>
#include <type_traits>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/Conv3dBf16.hpp"

namespace halo3d::nn {

namespace {
using Weights = kernels::Conv3dWeights<real, Memory>;
using Bias = kernels::Conv3dBias<real, Memory>;

// The native bf16 passes. bf16 runs need real = float (Precision.hpp): the weights are then the
// float master copy; the float64 test library never gets here.
template <class R>
void forwardBf16(const TensorBf16& x, const kernels::Conv3dWeights<R, Memory>& w,
                 const kernels::Conv3dBias<R, Memory>& b, const WindowGeometry& g,
                 const TensorBf16& y, const Box& out) {
  if constexpr (std::is_same<R, float>::value)
    kernels::conv3dForwardBf16(Kokkos::DefaultExecutionSpace(), x, w, b, g, y, out);
  else
    throw Error("Conv3d: bf16 needs the float32 layer stack");
}

template <class R>
void backwardDataBf16(const TensorBf16& dy, const kernels::Conv3dWeights<R, Memory>& w,
                      const WindowGeometry& g, const TensorBf16& dx, const Box& in_box,
                      const Box& dy_box) {
  if constexpr (std::is_same<R, float>::value)
    kernels::conv3dBackwardDataBf16(Kokkos::DefaultExecutionSpace(), dy, w, g, dx, in_box, dy_box);
  else
    throw Error("Conv3d: bf16 needs the float32 layer stack");
}

template <class R>
void backwardFilterBf16(const TensorBf16& x, const TensorBf16& dy, const WindowGeometry& g,
                        const kernels::Conv3dWeightsGrad<R, Memory>& dw,
                        const kernels::Conv3dBiasGrad<R, Memory>& db, const Box& owned) {
  if constexpr (std::is_same<R, float>::value)
    kernels::conv3dBackwardFilterBf16(Kokkos::DefaultExecutionSpace(), x, dy, g, dw, db, owned,
                                      false);
  else
    throw Error("Conv3d: bf16 needs the float32 layer stack");
}
}  // namespace

Conv3d::Conv3d(std::string name, index_t in_channels, index_t out_channels, const WindowGeometry& g,
               bool bias)
    : ConvLayer(std::move(name), in_channels, out_channels, g, bias) {}

std::string Conv3d::kind() const {
  return concat("Conv3d(", _in, "->", _out, ", k", _g.kernel, " s", _g.stride, " p", _g.padding,
                _has_bias ? ", bias)" : ")");
}

void Conv3d::addParameters(ParameterStore& store) {
  _weight = &store.add(name() + ".weight", {_out, _in, _g.kernel[0], _g.kernel[1], _g.kernel[2]});
  if (_has_bias) _bias = &store.add(name() + ".bias", {_out});
}

bool Conv3d::nativeBf16Forward() const {
  return std::is_same<real, float>::value;
}

bool Conv3d::nativeBf16BackwardData() const {
  return std::is_same<real, float>::value;
}

bool Conv3d::nativeBf16BackwardFilter() const {
  return std::is_same<real, float>::value;
}

void Conv3d::computeForward(const Activation& x, const Activation& y, const Box& out) {
  const Bias b = _bias ? Bias(_bias->value()) : Bias();
  if (x.isBf16())
    return forwardBf16<real>(x.bf16Tensor(), Weights(_weight->valueAs<5>()), b, _g, y.bf16Tensor(),
                             out);
  kernels::conv3dForward(x.tensor, Weights(_weight->valueAs<5>()), b, _g, y.tensor, out);
}

void Conv3d::computeBackwardData(const Activation& dy, const Activation& dx, const Box& in_box,
                                 const Box& dy_box) {
  if (dy.isBf16())
    return backwardDataBf16<real>(dy.bf16Tensor(), Weights(_weight->valueAs<5>()), _g,
                                  dx.bf16Tensor(), in_box, dy_box);
  kernels::conv3dBackwardData(dy.tensor, Weights(_weight->valueAs<5>()), _g, dx.tensor, in_box,
                              dy_box);
}

void Conv3d::computeBackwardFilter(const Activation& x, const Activation& dy, const Box& owned) {
  const kernels::Conv3dBiasGrad<real, Memory> db =
      _bias ? kernels::Conv3dBiasGrad<real, Memory>(_bias->gradAs<1>())
            : kernels::Conv3dBiasGrad<real, Memory>();
  const kernels::Conv3dWeightsGrad<real, Memory> dw(_weight->gradAs<5>());
  if (x.isBf16())
    return backwardFilterBf16<real>(x.bf16Tensor(), dy.bf16Tensor(), _g, dw, db, owned);
  kernels::conv3dBackwardFilter(x.tensor, dy.tensor, _g, dw, db, owned, false);
}

// 2 flops per weight tap and output cell; backward-filter does as many, backward-data too. The
// host workspace: a bf16 engine's whole scratch; or, with a W stride above 1, the copy of the input
// with its W phases de-interleaved that forward and backward-filter read
// (kernels/impl/Conv3dHostStrided.hpp), rows of the input's allocation (owned cells and the ghosts
// the kernel reads) rounded up to a multiple of the stride.
LayerWork Conv3d::work(const std::vector<Shape5>& inputs, const Shape5& output,
                       std::size_t element_bytes, bool input_gradient) const {
  const Shape5& x = inputs.at(0);
  const double taps = double(_in) * double(_g.kernel[0] * _g.kernel[1] * _g.kernel[2]);
  const double forward = 2 * taps * cellsOf(output);
  const double bytes = (cellsOf(x) + cellsOf(output)) * double(element_bytes);
  LayerWork w{forward, forward * (input_gradient ? 2 : 1), bytes, bytes * (input_gradient ? 2 : 1)};
  const auto ghosted = [&](int d) {
    return double(x[std::size_t(2 + d)] + index_t(_g.dilation[d]) * (_g.kernel[d] - 1));
  };
  const bool bf16 = element_bytes < sizeof(float);
  // On the host a bf16 pass runs its engine, which takes all its scratch from the scratchpad; where
  // none applies (strides, dilations) the float kernels run on float copies of the operands and
  // weights, freed after the pass.
  const std::size_t engine =
      bf16 ? kernels::conv3dBf16HostEngineScratchBytes(x, output, _g) : std::size_t(0);
  if (engine > 0) {
    w.host_workspace_bytes = double(engine);
    w.host_workspace_complete = true;
    return w;
  }
  if (bf16)
    w.host_transient_bytes = (double(x[0] * x[1]) * ghosted(0) * ghosted(1) * ghosted(2) +
                              cellsOf(output) + taps * _out) *
                             sizeof(float);
  if (_g.stride[2] > 1) {
    // The strided engine's de-interleaved x, in the element type its kernels run in (float for
    // bf16's float route).
    const double s = _g.stride[2];
    w.host_workspace_bytes = double(x[0] * x[1]) * ghosted(0) * ghosted(1) *
                             std::ceil(ghosted(2) / s) * s *
                             double(bf16 ? sizeof(float) : element_bytes);
  }
  return w;
}

}  // namespace halo3d::nn
