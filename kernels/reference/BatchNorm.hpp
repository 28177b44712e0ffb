#pragma once
// Naive references of the batch-norm kernels (BatchNorm.hpp): plain host loops, same signatures and
// the same layout of partial sums, written from the formulas.

#include <array>
#include <cmath>

#include "halo3d/kernels/BatchNorm.hpp"
#include "halo3d/kernels/reference/Elementwise.hpp"

namespace halo3d::kernels::reference {

template <class ExecSpace, class T>
void batchNormStatistics(const ExecSpace&, const Tensor<T, ExecSpace>& x,
                         const Vector<double, ExecSpace>& stats, const Box& box,
                         bool accumulate = false) {
  detail::sumPerChannel(
      stats, batchNormStatsSize(x.block().channels()), accumulate, box,
      [](index_t, T xv) {
        const double v = xv;
        return std::array<double, 2>{v, v * v};
      },
      x);
  stats(2 * x.block().channels()) += double(x.block().localSamples() * box.size());
}

template <class ExecSpace, class T>
void batchNormMoments(const ExecSpace&, const NonDeduced<Vector<const double, ExecSpace>>& stats,
                      const Vector<T, ExecSpace>& mean, const Vector<T, ExecSpace>& var) {
  detail::requireHostMemory<ExecSpace>();
  const index_t channels = index_t(mean.extent(0));
  const double count = stats(2 * channels);
  for (index_t c = 0; c < channels; ++c) {
    const double mu = stats(c) / count;
    mean(c) = T(mu);
    var(c) = T(std::max(0.0, stats(channels + c) / count - mu * mu));
  }
}

template <class ExecSpace, class T>
void batchNormForward(const ExecSpace&, const Tensor<T, ExecSpace>& x,
                      const NonDeduced<Vector<const T, ExecSpace>>& mean,
                      const NonDeduced<Vector<const T, ExecSpace>>& var,
                      const NonDeduced<Vector<const T, ExecSpace>>& gamma,
                      const NonDeduced<Vector<const T, ExecSpace>>& beta, double eps,
                      const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::mapCells(
      y, box,
      [&](index_t c, T xv) {
        const double xhat = (double(xv) - double(mean(c))) / std::sqrt(double(var(c)) + eps);
        return T(double(gamma(c)) * xhat + double(beta(c)));
      },
      x);
}

template <class ExecSpace, class T>
void batchNormUpdateRunningStats(const ExecSpace&,
                                 const NonDeduced<Vector<const T, ExecSpace>>& mean,
                                 const NonDeduced<Vector<const T, ExecSpace>>& var, double count,
                                 double momentum, const Vector<T, ExecSpace>& running_mean,
                                 const Vector<T, ExecSpace>& running_var) {
  detail::requireHostMemory<ExecSpace>();
  for (std::size_t c = 0; c < running_mean.extent(0); ++c) {
    running_mean(c) = T((1.0 - momentum) * running_mean(c) + momentum * mean(c));
    running_var(c) =
        T((1.0 - momentum) * running_var(c) + momentum * var(c) * count / (count - 1.0));
  }
}

template <class ExecSpace, class T>
void batchNormBackwardSums(const ExecSpace&, const Tensor<T, ExecSpace>& x,
                           const Tensor<T, ExecSpace>& dy,
                           const NonDeduced<Vector<const T, ExecSpace>>& mean,
                           const NonDeduced<Vector<const T, ExecSpace>>& var, double eps,
                           const Vector<double, ExecSpace>& sums, const Box& box,
                           bool accumulate = false) {
  detail::sumPerChannel(
      sums, batchNormBackwardSumsSize(x.block().channels()), accumulate, box,
      [&](index_t c, T xv, T g) {
        const double xhat = (double(xv) - double(mean(c))) / std::sqrt(double(var(c)) + eps);
        return std::array<double, 2>{double(g), double(g) * xhat};
      },
      x, dy);
}

template <class ExecSpace, class T>
void batchNormBackward(const ExecSpace&, const Tensor<T, ExecSpace>& x,
                       const Tensor<T, ExecSpace>& dy,
                       const NonDeduced<Vector<const T, ExecSpace>>& mean,
                       const NonDeduced<Vector<const T, ExecSpace>>& var,
                       const NonDeduced<Vector<const T, ExecSpace>>& gamma, double eps,
                       const NonDeduced<Vector<const double, ExecSpace>>& sums, double count,
                       const Tensor<T, ExecSpace>& dx, const Box& box) {
  const index_t channels = dx.block().channels();
  detail::mapCells(
      dx, box,
      [&](index_t c, T xv, T g) {
        const double invstd = 1.0 / std::sqrt(double(var(c)) + eps);
        const double xhat = (double(xv) - double(mean(c))) * invstd;
        return T(double(gamma(c)) * invstd *
                 (double(g) - sums(c) / count - xhat * sums(channels + c) / count));
      },
      x, dy);
}

template <class ExecSpace, class T>
void batchNormParameterGradients(const ExecSpace&,
                                 const NonDeduced<Vector<const double, ExecSpace>>& sums,
                                 const Vector<T, ExecSpace>& dgamma,
                                 const Vector<T, ExecSpace>& dbeta, bool accumulate = false) {
  detail::requireHostMemory<ExecSpace>();
  const std::size_t channels = dgamma.extent(0);
  for (std::size_t c = 0; c < channels; ++c) {
    dgamma(c) = T((accumulate ? double(dgamma(c)) : 0.0) + sums(channels + c));
    dbeta(c) = T((accumulate ? double(dbeta(c)) : 0.0) + sums(c));
  }
}

}  // namespace halo3d::kernels::reference
