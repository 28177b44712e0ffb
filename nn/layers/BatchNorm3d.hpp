#pragma once
// BatchNorm3d over a distributed activation, exactly PyTorch's training-mode semantics (biased
// batch variance normalises, running_var is updated with the unbiased variance, momentum 0.1, eps
// 1e-5).
//
// Statistics: every rank sums x and x^2 per channel over its owned cells (in double), then one
// allreduce makes them the statistics of the spatial group (the samples of one sample group, the
// default), or of all ranks (StatsGroup::Global: the whole mini-batch, as one process would
// compute). Backward follows the same pattern. gamma/beta gradients are this rank's partial sums;
// the GradientReducer adds them up.
//
// Running statistics always follow the whole mini-batch (with spatial-group statistics and several
// sample groups, one more allreduce of 2C+1 doubles over the data group per step), so they are the
// same on every rank and every grid with the same global batch, and a checkpoint or an evaluation
// does not depend on the rank.

#include "halo3d/nn/Layer.hpp"

namespace halo3d::nn {

enum class StatsGroup { Spatial, Global };

class BatchNorm3d : public Layer {
 public:
  BatchNorm3d(std::string name, index_t channels, StatsGroup group = StatsGroup::Spatial,
              double eps = 1e-5, double momentum = 0.1);
  std::string kind() const override;
  TensorSpec outputSpec(const std::vector<TensorSpec>& inputs) const override;
  void addParameters(ParameterStore& store) override;
  // bf16: the batch-norm kernels' bf16 instantiations (float parameters and statistics).
  bool bridgesBf16() const override { return false; }
  void setup(const ProcessGrid& grid, const std::vector<const Activation*>& in,
             const Activation& out) override;
  void forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) override;
  void backward(RunContext& ctx, const std::vector<const Activation*>& in, const Activation& out,
                const Activation& dout, const std::vector<Activation*>& din) override;

 private:
  // The communicator the partial sums are added over, or MPI_COMM_NULL when this rank's sums are
  // complete.
  MPI_Comm reduceComm(const RunContext& ctx, const Activation& x) const;
  double groupCount(const RunContext& ctx, const Activation& x) const;

  index_t _channels;
  StatsGroup _group;
  double _eps, _momentum;
  Parameter *_weight = nullptr, *_bias = nullptr, *_running_mean = nullptr, *_running_var = nullptr;
  std::int64_t* _batches_tracked = nullptr;
  Kokkos::View<double*, Memory> _stats, _sums, _batch_stats;
  Kokkos::View<real*, Memory> _mean, _var, _batch_mean, _batch_var;
  bool _used_batch_stats = true;
};

}  // namespace halo3d::nn
