#pragma once
// Max or average 3D pooling over a distributed activation, PyTorch semantics (max pads with -inf;
// average counts the zero padding), with the halo overlap of WindowLayer. Max pooling keeps the
// argmax of every output (a global cell index) so that backward is exact.

#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/nn/layers/WindowLayer.hpp"

namespace halo3d::nn {

enum class PoolKind { Max, Average };

class Pool3d : public GeometryWindowLayer<WindowGeometry> {
 public:
  Pool3d(std::string name, PoolKind kind, const WindowGeometry& g);
  std::string kind() const override;
  void setup(const ProcessGrid& grid, const std::vector<const Activation*>& in,
             const Activation& out) override;
  void forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) override;
  void backward(RunContext& ctx, const std::vector<const Activation*>& in, const Activation& out,
                const Activation& dout, const std::vector<Activation*>& din) override;

 protected:
  index_t outputChannels(index_t c) const override { return c; }
  // bf16: the pooling kernels' bf16 instantiations (the float result rounded once, the same cells
  // as the bridge produces).
  bool nativeBf16Forward() const override { return true; }
  bool nativeBf16BackwardData() const override { return true; }
  void computeForward(const Activation& x, const Activation& y, const Box& out) override;
  void computeBackwardData(const Activation& dy, const Activation& dx, const Box& in_box,
                           const Box& dy_box) override;

 private:
  PoolKind _kind;
  HaloTensor<index_t> _argmax;  // max pooling: laid out like the output
};

}  // namespace halo3d::nn
