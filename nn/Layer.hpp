#pragma once
// A layer of the model graph: declares its output from its inputs (identically on every rank), the
// ghost widths it reads on each Spatial input, its parameters, and runs forward and backward on
// distributed activations.
//
// Backward contract: `din[i]` is laid out like input i (same block and ghosts) and the layer
// ASSIGNS its owned cells (a layer that writes ghost cells sums them into their owners with a
// scatter before returning), unless din[i] is null (no gradient needed for that input). Parameter
// gradients are ASSIGNED, then handed to the GradientReducer with markReady(). Layers whose input
// is Replicated compute identical parameter gradients on every rank of a spatial group: only
// spatial rank 0 contributes them, the others contribute zeros, so that the sum over all ranks
// counts each sample group once.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/nn/Activation.hpp"
#include "halo3d/nn/GradientReducer.hpp"
#include "halo3d/nn/LayerTimers.hpp"
#include "halo3d/nn/Parameter.hpp"

namespace halo3d::nn {

// The arithmetic and memory traffic of one pass of a layer on one rank's blocks: what the roofline
// model prices, and how a calibrated time scales to a block nobody timed.
struct LayerWork {
  double flops_forward = 0, flops_backward = 0;
  double bytes_forward = 0, bytes_backward = 0;
  // What the layer's host passes take from the host scratchpad (kernels/HostScratchpad.hpp) beyond
  // what the memory model adds for a convolution itself (its packed weights or partial sums), or
  // all of it where host_workspace_complete; the model takes the largest over the layers.
  double host_workspace_bytes = 0;
  bool host_workspace_complete = false;
  // Float copies of the operands that a bf16 pass on the host allocates and frees where no bf16
  // kernel runs (a strided Conv3d's float route); the model takes the largest over the layers.
  double host_transient_bytes = 0;
};

// Cells of a block shape (samples, C, D, H, W).
inline double cellsOf(const Shape5& s) {
  return double(s[0] * s[1] * s[2] * s[3] * s[4]);
}

struct RunContext {
  const ProcessGrid* grid = nullptr;
  GradientReducer* reducer = nullptr;  // null: gradients stay local (no allreduce)
  LayerTimers* timers = nullptr;
  bool training = true;
  bool overlap = true;     // halo overlap on/off (benchmarks compare both)
  std::uint64_t seed = 0;  // dropout and other counter-based randomness
  std::int64_t step = 0;
};

class Layer {
 public:
  explicit Layer(std::string name) : _name(std::move(name)) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  // The PyTorch module path of the layer ("features.3", "head.1"), prefix of its parameter names.
  const std::string& name() const { return _name; }
  virtual std::string kind() const = 0;

  // Planning (identical on every rank). Throws ShapeError naming the layer on incompatible inputs.
  virtual TensorSpec outputSpec(const std::vector<TensorSpec>& inputs) const = 0;
  // Whether the layer can run on Spatial inputs split over `grid`; if not, the model replicates
  // them first.
  virtual bool acceptsSpatial(const std::vector<TensorSpec>& inputs, const GridShape& grid) const {
    return true;
  }
  // Ghost widths read on input i. For a Replicated input `grid` is unsplit (spatially 1x1x1): the
  // widths are then how far a padded window reads past the volume.
  virtual HaloWidths inputHalo(const std::vector<TensorSpec>& inputs, int i,
                               const GridShape& grid) const {
    return {};
  }
  virtual void addParameters(ParameterStore&) {}
  // The work of one forward and one backward on input blocks `inputs` and output block `output`
  // (owned cells), elements of `element_bytes`; `input_gradient`: whether backward computes the
  // input's gradient (not for the data). Default: a memory-bound layer that reads its inputs and
  // writes its output, and backward about twice that.
  virtual LayerWork work(const std::vector<Shape5>& inputs, const Shape5& output,
                         std::size_t element_bytes, bool input_gradient) const {
    double cells = cellsOf(output);
    for (const Shape5& s : inputs)
      cells += cellsOf(s);
    return LayerWork{cells, 2 * cells, cells * double(element_bytes),
                     2 * cells * double(element_bytes)};
  }
  // Whether a bf16 pass of this layer runs through the precision bridge (nn/PrecisionBridge.hpp)
  // while native bf16 kernels are on: the step model prices the bridge's float scratch for these
  // layers only.
  virtual bool bridgesBf16() const { return true; }
  // Called once the activations exist: set up halo exchanges, scratch.
  virtual void setup(const ProcessGrid&, const std::vector<const Activation*>& in,
                     const Activation& out) {}

  virtual void forward(RunContext& ctx, const std::vector<const Activation*>& in,
                       Activation& out) = 0;
  virtual void backward(RunContext& ctx, const std::vector<const Activation*>& in,
                        const Activation& out, const Activation& dout,
                        const std::vector<Activation*>& din) = 0;

 protected:
  // The parameter gradient contribution of this rank for a layer on input `in` (see the header
  // comment).
  static bool contributesReplicatedGradient(const RunContext& ctx, const Activation& in) {
    return in.spec.dist == Distribution::Spatial || ctx.grid->spatialRank() == 0;
  }
  // Assigns this rank's contribution to the gradients of `weight` and `bias` (null: none):
  // `compute()` where the rank contributes, zeros where it does not.
  template <class Compute>
  static void assignParameterGradients(const RunContext& ctx, const Activation& in,
                                       Parameter& weight, Parameter* bias, Compute&& compute) {
    if (contributesReplicatedGradient(ctx, in)) {
      compute();
    } else {
      Kokkos::deep_copy(weight.grad(), real(0));
      if (bias) Kokkos::deep_copy(bias->grad(), real(0));
    }
  }
  // Hands the (fenced) gradients of `weight` and `bias` (null: none) to the reducer, if any.
  static void markGradientsReady(const RunContext& ctx, Parameter& weight, Parameter* bias) {
    if (!ctx.reducer) return;
    ctx.reducer->markReady(weight);
    if (bias) ctx.reducer->markReady(*bias);
  }

 private:
  std::string _name;
};

}  // namespace halo3d::nn
