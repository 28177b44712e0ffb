#pragma once
// What Conv3d and ConvTranspose3d share: the channels, the weight and optional bias, and the
// passes around the kernels (forward with the halo overlap of WindowLayer; backward: this rank's
// weight gradient, handed to the GradientReducer, then the data gradient with the overlap).

#include "halo3d/nn/layers/WindowLayer.hpp"

namespace halo3d::nn {

template <class Geometry>
class ConvLayer : public GeometryWindowLayer<Geometry> {
 public:
  void forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) override;
  void backward(RunContext& ctx, const std::vector<const Activation*>& in, const Activation& out,
                const Activation& dout, const std::vector<Activation*>& din) override;
  bool bridgesBf16() const override {
    return GeometryWindowLayer<Geometry>::bridgesBf16() || !nativeBf16BackwardFilter();
  }

 protected:
  // Validates the geometry and the channels (ShapeError naming the layer).
  ConvLayer(std::string name, index_t in_channels, index_t out_channels, const Geometry& g,
            bool bias);

  index_t outputChannels(index_t) const override { return _out; }
  void checkInputChannels(index_t channels) const override;
  // Assigns the weight (and bias) gradients of the outputs `owned` of dy.
  virtual void computeBackwardFilter(const Activation& x, const Activation& dy,
                                     const Box& owned) = 0;
  // Whether computeBackwardFilter takes bf16 activations itself (else float stand-ins).
  virtual bool nativeBf16BackwardFilter() const { return false; }

  index_t _in, _out;
  bool _has_bias;
  Parameter* _weight = nullptr;
  Parameter* _bias = nullptr;
};

}  // namespace halo3d::nn
