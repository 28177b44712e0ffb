#pragma once
// Element-wise layers on the owned cells: LeakyReLU (ReLU is slope 0) and Dropout. They need no
// ghosts and run on either distribution.

#include "halo3d/nn/Layer.hpp"

namespace halo3d::nn {

// A layer whose output is laid out like its input.
class ElementwiseLayer : public Layer {
 public:
  using Layer::Layer;
  TensorSpec outputSpec(const std::vector<TensorSpec>& inputs) const override {
    return inputs.at(0);
  }
  // LeakyReLU and Dropout run the bf16 instantiations of their kernels.
  bool bridgesBf16() const override { return false; }
};

class LeakyRelu : public ElementwiseLayer {
 public:
  // slope 0.01 is PyTorch's default; 0 gives ReLU.
  LeakyRelu(std::string name, double slope) : ElementwiseLayer(std::move(name)), _slope(slope) {}
  std::string kind() const override;
  void forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) override;
  void backward(RunContext& ctx, const std::vector<const Activation*>& in, const Activation& out,
                const Activation& dout, const std::vector<Activation*>& din) override;

 private:
  double _slope;
};

// Inverted dropout (scaled by 1/(1-p) in training, identity in evaluation). The mask comes from a
// counter-based generator keyed by (seed, step, layer id, global cell index): it does not depend on
// the grid.
class Dropout : public ElementwiseLayer {
 public:
  Dropout(std::string name, double p, std::uint32_t layer_id);
  std::string kind() const override;
  void forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) override;
  void backward(RunContext& ctx, const std::vector<const Activation*>& in, const Activation& out,
                const Activation& dout, const std::vector<Activation*>& din) override;

 private:
  double _p;
  std::uint32_t _layer_id;
  bool _last_training = true;
};

}  // namespace halo3d::nn
