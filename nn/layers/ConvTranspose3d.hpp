#pragma once
// ConvTranspose3d over a distributed activation (PyTorch's nn.ConvTranspose3d: weight (I, O, kD,
// kH, kW), optional bias), with the halo overlap of WindowLayer. For the U-Net's 2^3 / stride 2
// upsampling on evenly split blocks the input ghost widths are zero and no exchange happens.
//
// In bf16 every pass goes through the precision bridge (WindowLayer). The bf16 kernels
// (kernels/ConvTranspose3dBf16.hpp) are no gain on the host: there they are the same float kernels
// run on float copies of the whole operands, made on every call, and the layer calls them once per
// overlap piece, so they would convert more than the bridge, which widens each piece's window.

#include "halo3d/kernels/ConvTranspose3d.hpp"
#include "halo3d/nn/layers/ConvLayer.hpp"

namespace halo3d::nn {

class ConvTranspose3d : public ConvLayer<kernels::ConvTranspose3dGeometry> {
 public:
  ConvTranspose3d(std::string name, index_t in_channels, index_t out_channels,
                  const kernels::ConvTranspose3dGeometry& g, bool bias);
  std::string kind() const override;
  void addParameters(ParameterStore& store) override;
  LayerWork work(const std::vector<Shape5>& inputs, const Shape5& output, std::size_t element_bytes,
                 bool input_gradient) const override;

 protected:
  void computeForward(const Activation& x, const Activation& y, const Box& out) override;
  void computeBackwardData(const Activation& dy, const Activation& dx, const Box& in_box,
                           const Box& dy_box) override;
  void computeBackwardFilter(const Activation& x, const Activation& dy, const Box& owned) override;
};

}  // namespace halo3d::nn
