#pragma once
// Moves an activation from Spatial to Replicated: every rank of the spatial group gathers the
// blocks of all the others (MPI_Allgatherv over the spatial communicator, in the activation's
// precision: bf16 messages are half the bytes). Backward needs no
// communication: the gradient of the replicated tensor is identical on every rank of the group, and
// each rank keeps the slice of its own block.

#include <vector>

#include "halo3d/nn/Layer.hpp"

namespace halo3d::nn {

class Redistribute : public Layer {
 public:
  explicit Redistribute(std::string name) : Layer(std::move(name)) {}
  std::string kind() const override { return "Redistribute(spatial->replicated)"; }
  // Moves bf16 cells as they are.
  bool bridgesBf16() const override { return false; }
  TensorSpec outputSpec(const std::vector<TensorSpec>& inputs) const override;
  void setup(const ProcessGrid& grid, const std::vector<const Activation*>& in,
             const Activation& out) override;
  void forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) override;
  void backward(RunContext& ctx, const std::vector<const Activation*>& in, const Activation& out,
                const Activation& dout, const std::vector<Activation*>& din) override;

 private:
  std::vector<Box> _boxes;  // owned box of every spatial rank
  std::vector<int> _counts, _displs;
};

// Copies the cells of global box `box` (all samples and channels) from `src` to `dst`; both must
// hold them.
void copyBox(const Tensor& src, const Tensor& dst, const Box& box);
void copyBox(const TensorBf16& src, const TensorBf16& dst, const Box& box);

}  // namespace halo3d::nn
