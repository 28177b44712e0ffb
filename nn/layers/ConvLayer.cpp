#include "halo3d/nn/layers/ConvLayer.hpp"

#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/ConvTranspose3d.hpp"
#include "halo3d/nn/PrecisionBridge.hpp"

namespace halo3d::nn {

template <class Geometry>
ConvLayer<Geometry>::ConvLayer(std::string name, index_t in_channels, index_t out_channels,
                               const Geometry& g, bool bias)
    : GeometryWindowLayer<Geometry>(std::move(name), g),
      _in(in_channels),
      _out(out_channels),
      _has_bias(bias) {
  this->_g.validate();
  require<ShapeError>(in_channels > 0 && out_channels > 0, this->name(),
                      ": channels must be positive, got ", in_channels, " -> ", out_channels);
}

template <class Geometry>
void ConvLayer<Geometry>::checkInputChannels(index_t channels) const {
  require<ShapeError>(channels == _in, this->name(), ": expects ", _in, " input channels, got ",
                      channels);
}

template <class Geometry>
void ConvLayer<Geometry>::forward(RunContext& ctx, const std::vector<const Activation*>& in,
                                  Activation& out) {
  this->forwardWithOverlap(ctx, *in[0], out);
}

template <class Geometry>
void ConvLayer<Geometry>::backward(RunContext& ctx, const std::vector<const Activation*>& in,
                                   const Activation& out, const Activation& dout,
                                   const std::vector<Activation*>& din) {
  {
    ScopedTimer t(ctx.timers, this->name(), Phase::Compute);
    this->assignParameterGradients(ctx, *in[0], *_weight, _bias, [&] {
      if (!in[0]->isBf16() || (nativeBf16BackwardFilter() && nativeBf16Kernels()))
        return computeBackwardFilter(*in[0], dout, out.owned());
      // The precision bridge: x with the ghosts the forward pass gathered, dy on the outputs.
      const FloatStandIn x(*in[0]), dy(dout, dout.owned());
      computeBackwardFilter(*x, *dy, out.owned());
    });
    fence("convolution weight gradient final before the allreduce");
  }
  this->markGradientsReady(ctx, *_weight, _bias);
  if (din[0]) this->backwardDataWithOverlap(ctx, dout, *din[0]);
}

template class ConvLayer<WindowGeometry>;
template class ConvLayer<kernels::ConvTranspose3dGeometry>;

}  // namespace halo3d::nn
