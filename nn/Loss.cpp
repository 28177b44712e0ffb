#include "halo3d/nn/Loss.hpp"

#include <optional>

#include "halo3d/comm/Allreduce.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/Losses.hpp"
#include "halo3d/nn/StorageDispatch.hpp"

namespace halo3d::nn {

namespace {
using Sums = Kokkos::View<double*, Kokkos::LayoutRight, Memory>;

// A loss of a bf16 output through the precision bridge: computed in float on the widened output
// (owned cells), its gradient rounded to bf16 once. `compute(pred, dpred)` is the loss on float
// activations. MSE always takes it (its targets are float, the bf16 kernel would take them as
// bf16; the prediction is (N, K)); cross-entropy and Dice run their bf16 kernels, which give the
// same values, unless native kernels are off.
template <class Compute>
double inFloat(const Activation& pred, Activation* dpred, Compute&& compute) {
  const FloatStandIn p(pred, pred.owned());
  std::optional<FloatStandIn> d;
  if (dpred) d.emplace(*dpred, Box());
  const double loss = compute(*p, d ? &d->get() : nullptr);
  if (d) d->narrow(dpred->owned());
  return loss;
}

double voxels(const Activation& a) {
  const Shape5& s = a.spec.shape;
  return double(s[0]) * double(s[2]) * double(s[3]) * double(s[4]);
}
}  // namespace

MPI_Comm lossComm(const ProcessGrid& grid, const Activation& out) {
  const bool whole = out.spec.dist == Distribution::Replicated || grid.shape().spatialSize() == 1;
  return whole ? grid.dataComm() : grid.comm();
}

double MseLoss::compute(const ProcessGrid& grid, const Activation& pred,
                        const std::vector<float>& targets, Activation* dpred) {
  if (pred.isBf16() || (dpred && dpred->isBf16()))
    return inFloat(pred, dpred, [&](const Activation& p, Activation* d) {
      return compute(grid, p, targets, d);
    });
  const TensorBlock& b = pred.tensor.block();
  const Shape5& s = pred.spec.shape;
  require<ShapeError>(s[2] * s[3] * s[4] == 1,
                      "MSE loss expects a (N, K, 1, 1, 1) prediction, got ", s);
  require<ShapeError>(index_t(targets.size()) == b.localSamples() * s[1],
                      "MSE loss: ", targets.size(), " target values for ", b.localSamples(),
                      " samples of ", s[1], " outputs");
  Tensor target("mse.target", b);
  auto host = Kokkos::create_mirror_view(target.view());
  for (index_t n = 0; n < b.localSamples(); ++n)
    for (index_t k = 0; k < s[1]; ++k)
      host(n, k, 0, 0, 0) = targets[std::size_t(n * s[1] + k)];
  Kokkos::deep_copy(target.view(), host);
  Sums sums("mse.sums", 1);
  kernels::mseLossSums(pred.tensor, target, sums, pred.owned(), false);
  allreduceSum(sums, lossComm(grid, pred));
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums);
  const double count = double(s[0] * s[1]);
  if (dpred) kernels::mseLossBackward(pred.tensor, target, count, dpred->tensor, pred.owned());
  fence("MSE gradient done");
  return h(0) / count;
}

double CrossEntropyLoss::compute(const ProcessGrid& grid, const Activation& logits,
                                 const HaloTensor<std::int32_t>& labels, Activation* dlogits) {
  if (bridgedBf16({&logits, dlogits}))
    return inFloat(logits, dlogits,
                   [&](const Activation& p, Activation* d) { return compute(grid, p, labels, d); });
  Sums sums("ce.sums", 2);
  onStorage(logits, [&](auto s) {
    using T = typename decltype(s)::type;
    kernels::softmaxCrossEntropySums(storageOf<T>(logits), labels, sums, logits.owned(), false);
  });
  allreduceSum(sums, lossComm(grid, logits));
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums);
  require<InputError>(h(1) == 0.0, h(1), " voxel labels lie outside [0, ", logits.spec.shape[1],
                      ") (the class count of the model)");
  const double count = voxels(logits);
  if (dlogits)
    onStorage(logits, [&](auto s) {
      using T = typename decltype(s)::type;
      kernels::softmaxCrossEntropyBackward(storageOf<T>(logits), labels, count,
                                           storageOf<T>(*dlogits), logits.owned());
    });
  fence("cross-entropy gradient done");
  return h(0) / count;
}

double DiceLoss::compute(const ProcessGrid& grid, const Activation& logits,
                         const HaloTensor<std::int32_t>& labels, Activation* dlogits) {
  if (bridgedBf16({&logits, dlogits}))
    return inFloat(logits, dlogits,
                   [&](const Activation& p, Activation* d) { return compute(grid, p, labels, d); });
  Sums sums("dice.sums", kernels::softDiceSumsSize(logits.spec.shape[1]));
  onStorage(logits, [&](auto s) {
    using T = typename decltype(s)::type;
    kernels::softDiceSums(storageOf<T>(logits), labels, sums, logits.owned(), false);
  });
  allreduceSum(sums, lossComm(grid, logits));
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums);
  const double bad = kernels::softDiceBadLabels(h, voxels(logits));
  require<InputError>(bad == 0.0, bad, " voxel labels lie outside [0, ", logits.spec.shape[1], ")");
  if (dlogits)
    onStorage(logits, [&](auto s) {
      using T = typename decltype(s)::type;
      kernels::softDiceBackward(storageOf<T>(logits), labels, sums, _eps, storageOf<T>(*dlogits),
                                logits.owned());
    });
  fence("Dice gradient done");
  return kernels::softDiceLoss(h, _eps);
}

}  // namespace halo3d::nn
