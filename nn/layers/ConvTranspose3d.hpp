#pragma once
// ConvTranspose3d over a distributed activation (PyTorch's nn.ConvTranspose3d: weight (I, O, kD,
// kH, kW), optional bias), with the halo overlap of WindowLayer. For the U-Net's 2^3 / stride 2
// upsampling on evenly split blocks the input ghost widths are zero and no exchange happens.

#include "halo3d/kernels/ConvTranspose3d.hpp"
#include "halo3d/nn/layers/WindowLayer.hpp"

namespace halo3d::nn {

class ConvTranspose3d : public WindowLayer {
 public:
  ConvTranspose3d(std::string name, index_t in_channels, index_t out_channels,
                  const kernels::ConvTranspose3dGeometry& g, bool bias);
  std::string kind() const override;
  void addParameters(ParameterStore& store) override;
  LayerWork work(const std::vector<Shape5>& inputs, const Shape5& output, std::size_t element_bytes,
                 bool input_gradient) const override;
  void forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) override;
  void backward(RunContext& ctx, const std::vector<const Activation*>& in, const Activation& out,
                const Activation& dout, const std::vector<Activation*>& din) override;

 protected:
  index_t outputExtent(int dim, index_t input_extent) const override {
    return _g.outputExtent(dim, input_extent);
  }
  std::array<index_t, 2> inputRange(int dim, index_t o0, index_t o1) const override {
    return _g.inputWindow(dim, o0, o1);
  }
  index_t outputChannels(index_t) const override { return _out; }
  void checkInputChannels(index_t channels) const override;
  void computeForward(const Activation& x, const Activation& y, const Box& out) override;
  void computeBackwardData(const Activation& dy, const Activation& dx, const Box& in_box,
                           const Box& dy_box) override;

 private:
  kernels::ConvTranspose3dGeometry _g;
  index_t _in, _out;
  bool _has_bias;
  Parameter *_weight = nullptr, *_bias = nullptr;
};

}  // namespace halo3d::nn
