#pragma once
// Losses as PARTIAL sums over a box (in double, in a View<double*> of the tensors' memory space,
// ready for one MPI_SUM allreduce over the spatial and data groups), and gradients given the GLOBAL
// normaliser or sums.
//
//   MSE, mean over all M elements:   sums = [sum (pred - target)^2];        loss = sums(0) / M;
//                                    dpred = 2 (pred - target) / M.
//   Softmax cross-entropy over the C classes of each voxel, integer labels, mean over M voxels:
//                                    sums = [sum -log softmax(logits)_label, bad labels];
//                                    loss = sums(0) / M;
//                                    dlogits = (softmax - onehot(label)) / M.
//   Soft Dice over softmax probabilities p and one-hot labels t:
//                                    sums = [I_c = sum p_c t_c (C), P_c = sum p_c (C),
//                                            T_c = sum t_c (C)];
//                                    loss = 1 - mean_c (2 I_c + eps) / (P_c + T_c + eps)
//                                    (softDiceLoss).
//
// Logits are (N, C, D, H, W); labels are a HaloTensor<L> (L = int32_t or int64_t) of global shape
// (N, 1, D, H, W) holding the same samples. A label outside [0, C) is never used as an index:
// cross-entropy counts it in sums(1) and gives its voxel no loss and a zero gradient; Dice treats
// it as belonging to no class, so that sum_c T_c falls short of the voxel count
// (softDiceBadLabels). A layer checks either after the allreduce; requireValidLabels checks a
// tensor directly, with the offending values in its message.
//
// The tensor kernels also take bf16 logits, predictions and targets (ComputeType.hpp): the sums
// stay in double, the gradients compute as for float (double for the softmax ones, float for
// MSE's) and round once to bf16. The flat MSE kernels (dense outputs) are float and double only.
//
// Paths (core/KernelPath.hpp): the sums and the tensor gradients have host code (whole W rows,
// per-thread lanes) and device code (one thread per cell, one team per chunk of a reduction); the
// flat mseLossBackward is one range kernel on every backend.

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/ComputeType.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

inline constexpr index_t kMseSumsSize = 1;
inline constexpr index_t kCrossEntropySumsSize = 2;
inline constexpr index_t softDiceSumsSize(index_t classes) {
  return 3 * classes;
}

// sums(0) = [sums(0) if accumulate] + sum over all samples, channels and `box` of (pred -
// target)^2. pred, target are (N, C, D, H, W); sums has extent 1.
template <class ExecSpace, class T>
void mseLossSums(const ExecSpace& exec, const Tensor<T, ExecSpace>& pred,
                 const Tensor<T, ExecSpace>& target, const Vector<double, ExecSpace>& sums,
                 const Box& box, bool accumulate = false, KernelPath path = KernelPath::Fastest);
// dpred = 2 (pred - target) / count on `box`; count is the global number of elements M.
template <class ExecSpace, class T>
void mseLossBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& pred,
                     const Tensor<T, ExecSpace>& target, double count,
                     const Tensor<T, ExecSpace>& dpred, const Box& box,
                     KernelPath path = KernelPath::Fastest);
// Flat versions, for small dense outputs such as CosmoFlow's (N, 4) prediction: pred, target, dpred
// have equal extent.
template <class ExecSpace, class T>
void mseLossSums(const ExecSpace& exec, const Vector<T, ExecSpace>& pred,
                 const NonDeduced<Vector<const T, ExecSpace>>& target,
                 const Vector<double, ExecSpace>& sums, bool accumulate = false,
                 KernelPath path = KernelPath::Fastest);
template <class ExecSpace, class T>
void mseLossBackward(const ExecSpace& exec, const NonDeduced<Vector<const T, ExecSpace>>& pred,
                     const NonDeduced<Vector<const T, ExecSpace>>& target, double count,
                     const Vector<T, ExecSpace>& dpred);

// sums = [sums if accumulate] + [sum of -log softmax(logits)_label, bad-label count] over all
// samples and `box`. sums has extent 2.
template <class ExecSpace, class T, class L>
void softmaxCrossEntropySums(const ExecSpace& exec, const Tensor<T, ExecSpace>& logits,
                             const Tensor<L, ExecSpace>& labels,
                             const Vector<double, ExecSpace>& sums, const Box& box,
                             bool accumulate = false, KernelPath path = KernelPath::Fastest);
// dlogits = (softmax(logits) - onehot(label)) / count on `box` (zero at bad labels); count is the
// global number of voxels M. dlogits is (N, C, D, H, W) like logits.
template <class ExecSpace, class T, class L>
void softmaxCrossEntropyBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& logits,
                                 const Tensor<L, ExecSpace>& labels, double count,
                                 const Tensor<T, ExecSpace>& dlogits, const Box& box,
                                 KernelPath path = KernelPath::Fastest);

// sums = [sums if accumulate] + [I_c, P_c, T_c] over all samples and `box`; sums has extent 3C.
template <class ExecSpace, class T, class L>
void softDiceSums(const ExecSpace& exec, const Tensor<T, ExecSpace>& logits,
                  const Tensor<L, ExecSpace>& labels, const Vector<double, ExecSpace>& sums,
                  const Box& box, bool accumulate = false, KernelPath path = KernelPath::Fastest);
// dlogits = d(loss)/d(logits) on `box`, given the GLOBAL sums (extent 3C) and eps.
template <class ExecSpace, class T, class L>
void softDiceBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& logits,
                      const Tensor<L, ExecSpace>& labels,
                      const NonDeduced<Vector<const double, ExecSpace>>& sums, double eps,
                      const Tensor<T, ExecSpace>& dlogits, const Box& box,
                      KernelPath path = KernelPath::Fastest);
// The loss from global sums copied to the host (extent 3C).
double softDiceLoss(const Kokkos::View<const double*, Kokkos::HostSpace>& sums, double eps);
// Voxels whose label is outside [0, C): `voxels` minus sum_c T_c, from global sums on the host.
double softDiceBadLabels(const Kokkos::View<const double*, Kokkos::HostSpace>& sums, double voxels);

// Throws InputError naming `labels`, the number of labels outside [0, classes) in `box` and the
// smallest and largest of them, unless there are none. Fences `exec`: it reads the count on the
// host.
template <class ExecSpace, class L>
void requireValidLabels(const ExecSpace& exec, const Tensor<L, ExecSpace>& labels, index_t classes,
                        const Box& box, KernelPath path = KernelPath::Fastest);

// The tensor kernels on the default execution-space instance.
template <class T>
void mseLossSums(const Tensor<T, DefaultExec>& pred, const Tensor<T, DefaultExec>& target,
                 const Vector<double, DefaultExec>& sums, const Box& box, bool accumulate = false) {
  mseLossSums(DefaultExec(), pred, target, sums, box, accumulate);
}
template <class T>
void mseLossBackward(const Tensor<T, DefaultExec>& pred, const Tensor<T, DefaultExec>& target,
                     double count, const Tensor<T, DefaultExec>& dpred, const Box& box) {
  mseLossBackward(DefaultExec(), pred, target, count, dpred, box);
}
template <class T, class L>
void softmaxCrossEntropySums(const Tensor<T, DefaultExec>& logits,
                             const Tensor<L, DefaultExec>& labels,
                             const Vector<double, DefaultExec>& sums, const Box& box,
                             bool accumulate = false) {
  softmaxCrossEntropySums(DefaultExec(), logits, labels, sums, box, accumulate);
}
template <class T, class L>
void softmaxCrossEntropyBackward(const Tensor<T, DefaultExec>& logits,
                                 const Tensor<L, DefaultExec>& labels, double count,
                                 const Tensor<T, DefaultExec>& dlogits, const Box& box) {
  softmaxCrossEntropyBackward(DefaultExec(), logits, labels, count, dlogits, box);
}
template <class T, class L>
void softDiceSums(const Tensor<T, DefaultExec>& logits, const Tensor<L, DefaultExec>& labels,
                  const Vector<double, DefaultExec>& sums, const Box& box,
                  bool accumulate = false) {
  softDiceSums(DefaultExec(), logits, labels, sums, box, accumulate);
}
template <class T, class L>
void softDiceBackward(const Tensor<T, DefaultExec>& logits, const Tensor<L, DefaultExec>& labels,
                      const NonDeduced<Vector<const double, DefaultExec>>& sums, double eps,
                      const Tensor<T, DefaultExec>& dlogits, const Box& box) {
  softDiceBackward(DefaultExec(), logits, labels, sums, eps, dlogits, box);
}

#define HALO3D_KERNELS_TENSOR_LOSSES(PREFIX, E, T)                                                \
  PREFIX template void mseLossSums<E, T>(const E&, const Tensor<T, E>&, const Tensor<T, E>&,      \
                                         const Vector<double, E>&, const Box&, bool, KernelPath); \
  PREFIX template void mseLossBackward<E, T>(const E&, const Tensor<T, E>&, const Tensor<T, E>&,  \
                                             double, const Tensor<T, E>&, const Box&, KernelPath);
#define HALO3D_KERNELS_LOSSES(PREFIX, E, T)                                                        \
  HALO3D_KERNELS_TENSOR_LOSSES(PREFIX, E, T)                                                       \
  PREFIX template void mseLossSums<E, T>(const E&, const Vector<T, E>&, const Vector<const T, E>&, \
                                         const Vector<double, E>&, bool, KernelPath);              \
  PREFIX template void mseLossBackward<E, T>(const E&, const Vector<const T, E>&,                  \
                                             const Vector<const T, E>&, double,                    \
                                             const Vector<T, E>&);
#define HALO3D_KERNELS_LABEL_LOSSES(PREFIX, E, T, L)                                               \
  PREFIX template void softmaxCrossEntropySums<E, T, L>(                                           \
      const E&, const Tensor<T, E>&, const Tensor<L, E>&, const Vector<double, E>&, const Box&,    \
      bool, KernelPath);                                                                           \
  PREFIX template void softmaxCrossEntropyBackward<E, T, L>(                                       \
      const E&, const Tensor<T, E>&, const Tensor<L, E>&, double, const Tensor<T, E>&, const Box&, \
      KernelPath);                                                                                 \
  PREFIX template void softDiceSums<E, T, L>(const E&, const Tensor<T, E>&, const Tensor<L, E>&,   \
                                             const Vector<double, E>&, const Box&, bool,           \
                                             KernelPath);                                          \
  PREFIX template void softDiceBackward<E, T, L>(                                                  \
      const E&, const Tensor<T, E>&, const Tensor<L, E>&, const Vector<const double, E>&, double,  \
      const Tensor<T, E>&, const Box&, KernelPath);
#define HALO3D_KERNELS_LABEL_CHECKS(PREFIX, E, L)                                       \
  PREFIX template void requireValidLabels<E, L>(const E&, const Tensor<L, E>&, index_t, \
                                                const Box&, KernelPath);

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_LOSSES, extern)
HALO3D_KERNELS_FOR_REALS_AND_LABELS(HALO3D_KERNELS_LABEL_LOSSES, extern)
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_TENSOR_LOSSES, extern)
HALO3D_KERNELS_FOR_BF16_AND_LABELS(HALO3D_KERNELS_LABEL_LOSSES, extern)
HALO3D_KERNELS_FOR_LABELS(HALO3D_KERNELS_LABEL_CHECKS, extern)

}  // namespace halo3d::kernels
