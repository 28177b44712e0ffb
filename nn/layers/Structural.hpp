#pragma once
// Layers that move data without arithmetic: channel concatenation (U-Net skips) and Flatten (the
// hand-over from convolutions to the dense head). Moving data, they run on bf16 activations as
// they are (no precision bridge).

#include "halo3d/nn/Layer.hpp"

namespace halo3d::nn {

// y = [a, b] along channels, on the owned cells. Both inputs must have the same distribution and
// volume.
class Concat : public Layer {
 public:
  using Layer::Layer;
  std::string kind() const override { return "Concat"; }
  TensorSpec outputSpec(const std::vector<TensorSpec>& inputs) const override;
  bool bridgesBf16() const override { return false; }
  void forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) override;
  void backward(RunContext& ctx, const std::vector<const Activation*>& in, const Activation& out,
                const Activation& dout, const std::vector<Activation*>& din) override;
};

// (N, C, D, H, W) -> (N, C*D*H*W, 1, 1, 1) in C order, as torch.nn.Flatten. Needs whole volumes, so
// the model replicates a Spatial input first.
class Flatten : public Layer {
 public:
  using Layer::Layer;
  std::string kind() const override { return "Flatten"; }
  TensorSpec outputSpec(const std::vector<TensorSpec>& inputs) const override;
  bool bridgesBf16() const override { return false; }
  bool acceptsSpatial(const std::vector<TensorSpec>&, const GridShape& grid) const override {
    return grid.spatialSize() == 1;
  }
  void forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) override;
  void backward(RunContext& ctx, const std::vector<const Activation*>& in, const Activation& out,
                const Activation& dout, const std::vector<Activation*>& din) override;
};

}  // namespace halo3d::nn
