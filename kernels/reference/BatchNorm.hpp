#pragma once
// Naive references of the batch-norm kernels (BatchNorm.hpp): plain host loops, same signatures and
// the same layout of partial sums, written from the formulas.

#include <cmath>

#include "halo3d/kernels/BatchNorm.hpp"
#include "halo3d/kernels/reference/Elementwise.hpp"

namespace halo3d::kernels::reference {

template <class ExecSpace, class T>
void batchNormStatistics(const ExecSpace&, const Tensor<T, ExecSpace>& x,
                         const Vector<double, ExecSpace>& stats, const Box& box,
                         bool accumulate = false) {
  detail::requireHostMemory<ExecSpace>();
  const index_t channels = x.block().channels();
  if (!accumulate)
    for (index_t k = 0; k < batchNormStatsSize(channels); ++k)
      stats(k) = 0.0;
  const auto xc = impl::readCells(x);
  detail::forEachCell(x, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    const double v = xc(n, c, d, h, w);
    stats(c) += v;
    stats(channels + c) += v * v;
  });
  stats(2 * channels) += double(x.block().localSamples() * box.size());
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
  detail::requireHostMemory<ExecSpace>();
  const auto xc = impl::readCells(x);
  const auto yc = impl::writeCells(y);
  detail::forEachCell(y, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    const double xhat =
        (double(xc(n, c, d, h, w)) - double(mean(c))) / std::sqrt(double(var(c)) + eps);
    yc(n, c, d, h, w) = T(double(gamma(c)) * xhat + double(beta(c)));
  });
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
  detail::requireHostMemory<ExecSpace>();
  const index_t channels = x.block().channels();
  if (!accumulate)
    for (index_t k = 0; k < batchNormBackwardSumsSize(channels); ++k)
      sums(k) = 0.0;
  const auto xc = impl::readCells(x);
  const auto dyc = impl::readCells(dy);
  detail::forEachCell(x, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    const double xhat =
        (double(xc(n, c, d, h, w)) - double(mean(c))) / std::sqrt(double(var(c)) + eps);
    sums(c) += double(dyc(n, c, d, h, w));
    sums(channels + c) += double(dyc(n, c, d, h, w)) * xhat;
  });
}

template <class ExecSpace, class T>
void batchNormBackward(const ExecSpace&, const Tensor<T, ExecSpace>& x,
                       const Tensor<T, ExecSpace>& dy,
                       const NonDeduced<Vector<const T, ExecSpace>>& mean,
                       const NonDeduced<Vector<const T, ExecSpace>>& var,
                       const NonDeduced<Vector<const T, ExecSpace>>& gamma, double eps,
                       const NonDeduced<Vector<const double, ExecSpace>>& sums, double count,
                       const Tensor<T, ExecSpace>& dx, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const index_t channels = dx.block().channels();
  const auto xc = impl::readCells(x);
  const auto dyc = impl::readCells(dy);
  const auto dxc = impl::writeCells(dx);
  detail::forEachCell(dx, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    const double invstd = 1.0 / std::sqrt(double(var(c)) + eps);
    const double xhat = (double(xc(n, c, d, h, w)) - double(mean(c))) * invstd;
    dxc(n, c, d, h, w) =
        T(double(gamma(c)) * invstd *
          (double(dyc(n, c, d, h, w)) - sums(c) / count - xhat * sums(channels + c) / count));
  });
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
