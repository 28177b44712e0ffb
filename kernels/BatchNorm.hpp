#pragma once
// Batch normalisation over (samples, D, H, W) per channel, in parts, so that a layer can sum the
// partial statistics of every block of a spatial group (one allreduce) and get the global-batch
// result:
//
//   forward:   batchNormStatistics (partials) -> allreduce -> batchNormMoments -> batchNormForward;
//              batchNormUpdateRunningStats after it in training.
//   backward:  batchNormBackwardSums (partials) -> allreduce -> batchNormBackward and
//              batchNormParameterGradients.
//
// Partials are sums in double in a contiguous View<double*> in the tensors' memory space, ready for
// one MPI_SUM allreduce:
//   statistics (length batchNormStatsSize(C) = 2C + 1): [sum x (C), sum x^2 (C), cell count];
//   backward   (length batchNormBackwardSumsSize(C) = 2C): [sum dy (C), sum dy * xhat (C)].
// Per-channel Views (mean, var, gamma, beta, running stats) have extent C. The variance that
// normalises is the biased one (divided by M); running_var takes the unbiased one (M / (M - 1)), as
// PyTorch does.
//
// Every tensor holds the same global (N, C, D, H, W) and samples; output boxes lie in the output's
// owned cells and in the inputs' allocations.
//
// Activations may be bf16 (template parameter T) with float per-channel Views (P =
// ComputeType<T>, ComputeType.hpp): the sums stay in double, the normalisations compute in float
// and round each output once. The per-channel kernels (moments, running statistics, parameter
// gradients) work on parameters alone and take float for a bf16 run.
//
// Paths: the partial sums (statistics, backward sums) and the two normalisations have host code
// (whole W rows, per-thread lanes) and device code (one thread per cell, one team per chunk of a
// reduction), chosen by `path` (core/KernelPath.hpp). The per-channel kernels (moments, running
// statistics, parameter gradients) are one range kernel on every backend.

#include <Kokkos_Core.hpp>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/ComputeType.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

inline constexpr index_t batchNormStatsSize(index_t channels) {
  return 2 * channels + 1;
}
inline constexpr index_t batchNormBackwardSumsSize(index_t channels) {
  return 2 * channels;
}

// stats = [stats if accumulate] + partial statistics of x over all samples and the cells of `box`.
// x is (N, C, D, H, W); stats has extent 2C + 1.
template <class ExecSpace, class T>
void batchNormStatistics(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                         const Vector<double, ExecSpace>& stats, const Box& box,
                         bool accumulate = false, KernelPath path = KernelPath::Fastest);

// mean(c) = sum x / M and var(c) = sum x^2 / M - mean^2 (biased, clamped at 0) from summed
// statistics. Requires the count stats(2C) = M > 0. mean and var have extent C.
template <class ExecSpace, class T>
void batchNormMoments(const ExecSpace& exec,
                      const NonDeduced<Vector<const double, ExecSpace>>& stats,
                      const Vector<T, ExecSpace>& mean, const Vector<T, ExecSpace>& var);

// y = gamma (x - mean) / sqrt(var + eps) + beta on `box`, per channel. Training passes the batch
// moments, evaluation the running statistics. x, y are (N, C, D, H, W); the per-channel Views have
// extent C.
template <class ExecSpace, class T, class P = ComputeType<T>>
void batchNormForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                      const NonDeduced<Vector<const P, ExecSpace>>& mean,
                      const NonDeduced<Vector<const P, ExecSpace>>& var,
                      const NonDeduced<Vector<const P, ExecSpace>>& gamma,
                      const NonDeduced<Vector<const P, ExecSpace>>& beta, double eps,
                      const Tensor<T, ExecSpace>& y, const Box& box,
                      KernelPath path = KernelPath::Fastest);

// running_mean = (1 - momentum) running_mean + momentum mean;
// running_var  = (1 - momentum) running_var + momentum var M / (M - 1), with M = count, the global
// number of cells per channel. Throws ShapeError unless M > 1 (PyTorch: "more than 1 value per
// channel").
template <class ExecSpace, class T>
void batchNormUpdateRunningStats(const ExecSpace& exec,
                                 const NonDeduced<Vector<const T, ExecSpace>>& mean,
                                 const NonDeduced<Vector<const T, ExecSpace>>& var, double count,
                                 double momentum, const Vector<T, ExecSpace>& running_mean,
                                 const Vector<T, ExecSpace>& running_var);

// sums = [sums if accumulate] + per-channel partial [sum dy, sum dy * xhat] over all samples and
// `box`, with xhat = (x - mean) / sqrt(var + eps). x, dy are (N, C, D, H, W); sums has extent 2C.
template <class ExecSpace, class T, class P = ComputeType<T>>
void batchNormBackwardSums(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                           const Tensor<T, ExecSpace>& dy,
                           const NonDeduced<Vector<const P, ExecSpace>>& mean,
                           const NonDeduced<Vector<const P, ExecSpace>>& var, double eps,
                           const Vector<double, ExecSpace>& sums, const Box& box,
                           bool accumulate = false, KernelPath path = KernelPath::Fastest);

// dx = gamma invstd (dy - sum dy / M - xhat sum(dy xhat) / M) on `box`, given the GLOBAL sums and
// count M (the batch-statistics gradient; in evaluation the statistics are constants and dx = gamma
// invstd dy). x, dy, dx are (N, C, D, H, W).
template <class ExecSpace, class T, class P = ComputeType<T>>
void batchNormBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                       const Tensor<T, ExecSpace>& dy,
                       const NonDeduced<Vector<const P, ExecSpace>>& mean,
                       const NonDeduced<Vector<const P, ExecSpace>>& var,
                       const NonDeduced<Vector<const P, ExecSpace>>& gamma, double eps,
                       const NonDeduced<Vector<const double, ExecSpace>>& sums, double count,
                       const Tensor<T, ExecSpace>& dx, const Box& box,
                       KernelPath path = KernelPath::Fastest);

// dgamma = [dgamma if accumulate] + sum(dy xhat), dbeta = [dbeta if accumulate] + sum(dy), from
// backward sums (extent 2C). Whether the sums are this block's or the spatial group's decides what
// the gradient allreduce must still add.
template <class ExecSpace, class T>
void batchNormParameterGradients(const ExecSpace& exec,
                                 const NonDeduced<Vector<const double, ExecSpace>>& sums,
                                 const Vector<T, ExecSpace>& dgamma,
                                 const Vector<T, ExecSpace>& dbeta, bool accumulate = false);

// The same on the default execution-space instance.

template <class T>
void batchNormStatistics(const Tensor<T, DefaultExec>& x, const Vector<double, DefaultExec>& stats,
                         const Box& box, bool accumulate = false) {
  batchNormStatistics(DefaultExec(), x, stats, box, accumulate);
}
template <class T>
void batchNormMoments(const NonDeduced<Vector<const double, DefaultExec>>& stats,
                      const Vector<T, DefaultExec>& mean, const Vector<T, DefaultExec>& var) {
  batchNormMoments(DefaultExec(), stats, mean, var);
}
template <class T, class P = ComputeType<T>>
void batchNormForward(const Tensor<T, DefaultExec>& x,
                      const NonDeduced<Vector<const P, DefaultExec>>& mean,
                      const NonDeduced<Vector<const P, DefaultExec>>& var,
                      const NonDeduced<Vector<const P, DefaultExec>>& gamma,
                      const NonDeduced<Vector<const P, DefaultExec>>& beta, double eps,
                      const Tensor<T, DefaultExec>& y, const Box& box) {
  batchNormForward<DefaultExec, T, P>(DefaultExec(), x, mean, var, gamma, beta, eps, y, box);
}
template <class T>
void batchNormUpdateRunningStats(const NonDeduced<Vector<const T, DefaultExec>>& mean,
                                 const NonDeduced<Vector<const T, DefaultExec>>& var, double count,
                                 double momentum, const Vector<T, DefaultExec>& running_mean,
                                 const Vector<T, DefaultExec>& running_var) {
  batchNormUpdateRunningStats(DefaultExec(), mean, var, count, momentum, running_mean, running_var);
}
template <class T, class P = ComputeType<T>>
void batchNormBackwardSums(const Tensor<T, DefaultExec>& x, const Tensor<T, DefaultExec>& dy,
                           const NonDeduced<Vector<const P, DefaultExec>>& mean,
                           const NonDeduced<Vector<const P, DefaultExec>>& var, double eps,
                           const Vector<double, DefaultExec>& sums, const Box& box,
                           bool accumulate = false) {
  batchNormBackwardSums<DefaultExec, T, P>(DefaultExec(), x, dy, mean, var, eps, sums, box,
                                           accumulate);
}
template <class T, class P = ComputeType<T>>
void batchNormBackward(const Tensor<T, DefaultExec>& x, const Tensor<T, DefaultExec>& dy,
                       const NonDeduced<Vector<const P, DefaultExec>>& mean,
                       const NonDeduced<Vector<const P, DefaultExec>>& var,
                       const NonDeduced<Vector<const P, DefaultExec>>& gamma, double eps,
                       const NonDeduced<Vector<const double, DefaultExec>>& sums, double count,
                       const Tensor<T, DefaultExec>& dx, const Box& box) {
  batchNormBackward<DefaultExec, T, P>(DefaultExec(), x, dy, mean, var, gamma, eps, sums, count, dx,
                                       box);
}
template <class T>
void batchNormParameterGradients(const NonDeduced<Vector<const double, DefaultExec>>& sums,
                                 const Vector<T, DefaultExec>& dgamma,
                                 const Vector<T, DefaultExec>& dbeta, bool accumulate = false) {
  batchNormParameterGradients(DefaultExec(), sums, dgamma, dbeta, accumulate);
}

// The kernels on activations, for activation storage T and parameters ComputeType<T>.
#define HALO3D_KERNELS_BATCHNORM_ACTIVATIONS(PREFIX, E, T)                                        \
  PREFIX template void batchNormStatistics<E, T>(                                                 \
      const E&, const Tensor<T, E>&, const Vector<double, E>&, const Box&, bool, KernelPath);     \
  PREFIX template void batchNormForward<E, T, ComputeType<T>>(                                    \
      const E&, const Tensor<T, E>&, const Vector<const ComputeType<T>, E>&,                      \
      const Vector<const ComputeType<T>, E>&, const Vector<const ComputeType<T>, E>&,             \
      const Vector<const ComputeType<T>, E>&, double, const Tensor<T, E>&, const Box&,            \
      KernelPath);                                                                                \
  PREFIX template void batchNormBackwardSums<E, T, ComputeType<T>>(                               \
      const E&, const Tensor<T, E>&, const Tensor<T, E>&, const Vector<const ComputeType<T>, E>&, \
      const Vector<const ComputeType<T>, E>&, double, const Vector<double, E>&, const Box&, bool, \
      KernelPath);                                                                                \
  PREFIX template void batchNormBackward<E, T, ComputeType<T>>(                                   \
      const E&, const Tensor<T, E>&, const Tensor<T, E>&, const Vector<const ComputeType<T>, E>&, \
      const Vector<const ComputeType<T>, E>&, const Vector<const ComputeType<T>, E>&, double,     \
      const Vector<const double, E>&, double, const Tensor<T, E>&, const Box&, KernelPath);
// The per-channel kernels, on parameters alone: float and double (a bf16 run's are float).
#define HALO3D_KERNELS_BATCHNORM(PREFIX, E, T)                                           \
  HALO3D_KERNELS_BATCHNORM_ACTIVATIONS(PREFIX, E, T)                                     \
  PREFIX template void batchNormMoments<E, T>(const E&, const Vector<const double, E>&,  \
                                              const Vector<T, E>&, const Vector<T, E>&); \
  PREFIX template void batchNormUpdateRunningStats<E, T>(                                \
      const E&, const Vector<const T, E>&, const Vector<const T, E>&, double, double,    \
      const Vector<T, E>&, const Vector<T, E>&);                                         \
  PREFIX template void batchNormParameterGradients<E, T>(                                \
      const E&, const Vector<const double, E>&, const Vector<T, E>&, const Vector<T, E>&, bool);

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_BATCHNORM, extern)
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_BATCHNORM_ACTIVATIONS, extern)

}  // namespace halo3d::kernels
