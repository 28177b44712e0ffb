#pragma once
// Losses over the model output, as the mean over the GLOBAL mini-batch: every rank computes partial
// sums over the cells it owns, one allreduce adds them (over the data group when the output is
// replicated in the spatial group, over all ranks when it is split), and each rank seeds backward
// with the gradient of the global mean. The returned value is identical on every rank. A bf16
// output is read through the precision bridge: the loss is computed in float on its widened cells
// and its gradient rounded to bf16 once.

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "halo3d/nn/Layer.hpp"

namespace halo3d::nn {

// The communicator that adds partial loss sums of an output distributed like `out`.
MPI_Comm lossComm(const ProcessGrid& grid, const Activation& out);

// Mean squared error against targets (N_local, K) for a (N, K, 1, 1, 1) prediction (CosmoFlow).
class MseLoss {
 public:
  // `targets` holds this rank's samples row by row (N_local * K floats). Fills `dpred` unless it is
  // null.
  double compute(const ProcessGrid& grid, const Activation& pred, const std::vector<float>& targets,
                 Activation* dpred);
};

// Voxel-wise softmax cross-entropy, mean over all voxels, with integer labels laid out like the
// logits (one channel). Throws InputError naming the bad labels' count if any label is outside [0,
// classes).
class CrossEntropyLoss {
 public:
  double compute(const ProcessGrid& grid, const Activation& logits,
                 const HaloTensor<std::int32_t>& labels, Activation* dlogits);
};

// Soft Dice over softmax probabilities: 1 - mean_c (2 I_c + eps) / (P_c + T_c + eps).
class DiceLoss {
 public:
  explicit DiceLoss(double eps = 1.0) : _eps(eps) {}
  double compute(const ProcessGrid& grid, const Activation& logits,
                 const HaloTensor<std::int32_t>& labels, Activation* dlogits);

 private:
  double _eps;
};

}  // namespace halo3d::nn
