#pragma once
// Turning segmentation logits into labels, and counting an argmax prediction against the true
// labels for the hard Dice score:
//
//   labels(n, c) = argmax_k logits(n, k, c)   (ties go to the lowest class, as torch.argmax)
//   probs(n, k, c) = softmax_k logits(n, k, c)   (optional)
//   Dice_k = 2 I_k / (P_k + T_k), with the per-class counts
//     I_k = |pred = k AND true = k|,  P_k = |pred = k|,  T_k = |true = k|.
//
// The counts are PARTIAL sums over a box, in double, in a View<double*> of the tensors' memory
// space, laid out [I (C), P (C), T (C)] (diceCountsSize(C) = 3C), ready for one MPI_SUM allreduce:
// every rank counts its owned voxels and the sum is the count of the whole volume on every grid.
// Counts are whole numbers, exact in double, so they do not depend on the order of the sums.
//
// Logits and probs are (N, C, D, H, W); labels, pred and truth are HaloTensor<L> (L = int32_t or
// int64_t) of global shape (N, 1, D, H, W) holding the same samples. A label outside [0, C) counts
// in no class.
//
// Paths (core/KernelPath.hpp): host code takes whole W rows and per-thread lanes, device code one
// cell per thread and one team per chunk of the counts.

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/ComputeType.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

inline constexpr index_t diceCountsSize(index_t classes) {
  return 3 * classes;
}

// labels = argmax over the channels of logits, and, when `probs` is allocated, probs = softmax over
// the channels (computed in ComputeType<T>, from the largest logit: float for bf16 logits, whose
// probabilities round once to bf16), for every sample and every cell of `box`.
// Requires box inside the owned cells of labels (and of probs) and in the allocation of logits;
// probs laid out like logits. Throws ShapeError naming the tensors otherwise.
template <class ExecSpace, class T, class L>
void softmaxArgmax(const ExecSpace& exec, const Tensor<T, ExecSpace>& logits,
                   const Tensor<L, ExecSpace>& labels, const Tensor<T, ExecSpace>& probs,
                   const Box& box, KernelPath path = KernelPath::Fastest);

// counts = [counts if accumulate] + [I_k, P_k, T_k] of `pred` against `truth` over all samples and
// the cells of `box`, k < classes. counts has extent 3 classes; box lies in the allocations of pred
// and truth, which have the same global shape (N, 1, D, H, W) and samples.
template <class ExecSpace, class L>
void diceCounts(const ExecSpace& exec, const Tensor<L, ExecSpace>& pred,
                const Tensor<L, ExecSpace>& truth, index_t classes,
                const Vector<double, ExecSpace>& counts, const Box& box, bool accumulate = false,
                KernelPath path = KernelPath::Fastest);

// The same on the default execution-space instance.
template <class T, class L>
void softmaxArgmax(const Tensor<T, DefaultExec>& logits, const Tensor<L, DefaultExec>& labels,
                   const Tensor<T, DefaultExec>& probs, const Box& box) {
  softmaxArgmax(DefaultExec(), logits, labels, probs, box);
}
template <class L>
void diceCounts(const Tensor<L, DefaultExec>& pred, const Tensor<L, DefaultExec>& truth,
                index_t classes, const Vector<double, DefaultExec>& counts, const Box& box,
                bool accumulate = false) {
  diceCounts(DefaultExec(), pred, truth, classes, counts, box, accumulate);
}

// Explicit instantiations (kernels/Segmentation.cpp) on the default execution space.
#define HALO3D_KERNELS_SEGMENTATION(PREFIX, E, T, L)                                              \
  PREFIX template void softmaxArgmax<E, T, L>(const E&, const Tensor<T, E>&, const Tensor<L, E>&, \
                                              const Tensor<T, E>&, const Box&, KernelPath);
#define HALO3D_KERNELS_DICE_COUNTS(PREFIX, E, L)                                             \
  PREFIX template void diceCounts<E, L>(const E&, const Tensor<L, E>&, const Tensor<L, E>&,  \
                                        index_t, const Vector<double, E>&, const Box&, bool, \
                                        KernelPath);

HALO3D_KERNELS_FOR_REALS_AND_LABELS(HALO3D_KERNELS_SEGMENTATION, extern)
HALO3D_KERNELS_FOR_BF16_AND_LABELS(HALO3D_KERNELS_SEGMENTATION, extern)
HALO3D_KERNELS_FOR_LABELS(HALO3D_KERNELS_DICE_COUNTS, extern)

}  // namespace halo3d::kernels
