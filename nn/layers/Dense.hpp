#pragma once
// A fully connected layer (torch.nn.Linear: weight (out, in), bias (out)) on a flattened,
// replicated activation (N, in, 1, 1, 1). It runs replicated on every rank of a spatial group,
// through KokkosBlas::gemm.

#include "halo3d/nn/Layer.hpp"

namespace halo3d::nn {

class Dense : public Layer {
 public:
  Dense(std::string name, index_t in_features, index_t out_features);
  std::string kind() const override;
  TensorSpec outputSpec(const std::vector<TensorSpec>& inputs) const override;
  bool acceptsSpatial(const std::vector<TensorSpec>&, const GridShape& grid) const override {
    return grid.spatialSize() == 1;
  }
  void addParameters(ParameterStore& store) override;
  LayerWork work(const std::vector<Shape5>& inputs, const Shape5& output, std::size_t element_bytes,
                 bool input_gradient) const override;
  void forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) override;
  void backward(RunContext& ctx, const std::vector<const Activation*>& in, const Activation& out,
                const Activation& dout, const std::vector<Activation*>& din) override;

 private:
  index_t _in, _out;
  Parameter *_weight = nullptr, *_bias = nullptr;
};

}  // namespace halo3d::nn
