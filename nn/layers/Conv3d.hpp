#pragma once
// Conv3d over a distributed activation (PyTorch's nn.Conv3d: weight (O, I, kD, kH, kW), optional
// bias), with the halo overlap of WindowLayer in forward and backward (ConvLayer). The weight
// gradient is this rank's partial sum over its owned outputs; the GradientReducer sums the partials
// of all ranks.

#include "halo3d/nn/layers/ConvLayer.hpp"

namespace halo3d::nn {

class Conv3d : public ConvLayer<WindowGeometry> {
 public:
  Conv3d(std::string name, index_t in_channels, index_t out_channels, const WindowGeometry& g,
         bool bias);
  std::string kind() const override;
  void addParameters(ParameterStore& store) override;
  LayerWork work(const std::vector<Shape5>& inputs, const Shape5& output, std::size_t element_bytes,
                 bool input_gradient) const override;

 protected:
  // bf16: the three passes of kernels/Conv3dBf16.hpp (they round the weights to bf16 as autocast
  // does, so a native run differs from the bridged one by that rounding).
  bool nativeBf16Forward() const override;
  bool nativeBf16BackwardData() const override;
  bool nativeBf16BackwardFilter() const override;
  void computeForward(const Activation& x, const Activation& y, const Box& out) override;
  void computeBackwardData(const Activation& dy, const Activation& dx, const Box& in_box,
                           const Box& dy_box) override;
  void computeBackwardFilter(const Activation& x, const Activation& dy, const Box& owned) override;
};

}  // namespace halo3d::nn
