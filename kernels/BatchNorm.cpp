// Batch normalisation; see BatchNorm.hpp for the contracts and the layout of the partial sums.
#include "halo3d/kernels/BatchNorm.hpp"

#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/impl/ElementwiseLoops.hpp"
#include "halo3d/kernels/impl/ElementwiseReduce.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels {

namespace {

template <class View>
void requirePerChannel(const char* kernel, const View& v, index_t channels) {
  impl::requireExtent(kernel, v, 0, channels, "the tensor's channel count");
}

}  // namespace

template <class ExecSpace, class T>
void batchNormStatistics(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                         const Vector<double, ExecSpace>& stats, const Box& box, bool accumulate,
                         KernelPath path) {
  const char* kernel = "batchNormStatistics";
  const index_t channels = x.block().channels();
  impl::requireAllocated(kernel, x, box, "box");
  impl::requireExtent(kernel, stats, 0, batchNormStatsSize(channels), "2 C + 1");
  const auto xc = impl::readCells(x);
  impl::reduceBox<2>(
      exec, "halo3d::batchNormStatistics", channels, x.block().localSamples(), box,
      KOKKOS_LAMBDA(index_t c, index_t n, index_t d, index_t h, index_t w) {
        const double v = double(xc(n, c, d, h, w));
        return impl::sums(v, v * v);
      },
      stats, accumulate, path);
  const double count = double(x.block().localSamples() * box.size());
  Kokkos::parallel_for(
      "halo3d::batchNormStatistics count", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
      KOKKOS_LAMBDA(int) {
        stats(2 * channels) = accumulate ? stats(2 * channels) + count : count;
      });
}

template <class ExecSpace, class T>
void batchNormMoments(const ExecSpace& exec,
                      const NonDeduced<Vector<const double, ExecSpace>>& stats,
                      const Vector<T, ExecSpace>& mean, const Vector<T, ExecSpace>& var) {
  const char* kernel = "batchNormMoments";
  const index_t channels = index_t(mean.extent(0));
  impl::requireExtent(kernel, stats, 0, batchNormStatsSize(channels), "2 C + 1 for the mean's C");
  requirePerChannel(kernel, var, channels);
  Kokkos::parallel_for(
      "halo3d::batchNormMoments", Kokkos::RangePolicy<ExecSpace>(exec, 0, channels),
      KOKKOS_LAMBDA(index_t c) {
        const double m = stats(2 * channels);
        const double mu = stats(c) / m;
        // E[x^2] - E[x]^2 can round below zero when the variance is tiny against the mean.
        const double v = stats(channels + c) / m - mu * mu;
        mean(c) = T(mu);
        var(c) = T(v > 0.0 ? v : 0.0);
      });
}

template <class ExecSpace, class T, class P>
void batchNormForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                      const NonDeduced<Vector<const P, ExecSpace>>& mean,
                      const NonDeduced<Vector<const P, ExecSpace>>& var,
                      const NonDeduced<Vector<const P, ExecSpace>>& gamma,
                      const NonDeduced<Vector<const P, ExecSpace>>& beta, double eps,
                      const Tensor<T, ExecSpace>& y, const Box& box, KernelPath path) {
  const char* kernel = "batchNormForward";
  impl::requireCellwise(kernel, y, box, x);
  const index_t channels = y.block().channels();
  for (const auto* v : {&mean, &var, &gamma, &beta})
    requirePerChannel(kernel, *v, channels);
  const auto xc = impl::readCells(x);
  const auto yc = impl::writeCells(y);
  impl::forEachRow(
      exec, "halo3d::batchNormForward", y.block().localSamples(), channels, box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w0, index_t w1) {
        using C = ComputeType<T>;
        const C mu = C(mean(c));
        const C scale = C(double(gamma(c)) / math::sqrt(double(var(c)) + eps));
        const C shift = C(beta(c));
        const T* x = xc.row(n, c, d, h, w0);
        T* y = yc.row(n, c, d, h, w0);
        for (index_t i = 0; i < w1 - w0; ++i)
          y[i] = T((C(x[i]) - mu) * scale + shift);
      },
      path);
}

template <class ExecSpace, class T>
void batchNormUpdateRunningStats(const ExecSpace& exec,
                                 const NonDeduced<Vector<const T, ExecSpace>>& mean,
                                 const NonDeduced<Vector<const T, ExecSpace>>& var, double count,
                                 double momentum, const Vector<T, ExecSpace>& running_mean,
                                 const Vector<T, ExecSpace>& running_var) {
  const char* kernel = "batchNormUpdateRunningStats";
  require<ShapeError>(count > 1.0, kernel,
                      ": the unbiased variance needs more than 1 value per channel, got count ",
                      count);
  const index_t channels = index_t(running_mean.extent(0));
  for (const auto* v : {&mean, &var})
    requirePerChannel(kernel, *v, channels);
  requirePerChannel(kernel, running_var, channels);
  const double unbias = count / (count - 1.0);
  Kokkos::parallel_for(
      "halo3d::batchNormUpdateRunningStats", Kokkos::RangePolicy<ExecSpace>(exec, 0, channels),
      KOKKOS_LAMBDA(index_t c) {
        running_mean(c) = T((1.0 - momentum) * running_mean(c) + momentum * mean(c));
        running_var(c) = T((1.0 - momentum) * running_var(c) + momentum * unbias * var(c));
      });
}

template <class ExecSpace, class T, class P>
void batchNormBackwardSums(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                           const Tensor<T, ExecSpace>& dy,
                           const NonDeduced<Vector<const P, ExecSpace>>& mean,
                           const NonDeduced<Vector<const P, ExecSpace>>& var, double eps,
                           const Vector<double, ExecSpace>& sums, const Box& box, bool accumulate,
                           KernelPath path) {
  const char* kernel = "batchNormBackwardSums";
  const index_t channels = x.block().channels();
  impl::requireSameShape(kernel, dy, x);
  impl::requireAllocated(kernel, x, box, "box");
  impl::requireAllocated(kernel, dy, box, "box");
  for (const auto* v : {&mean, &var})
    requirePerChannel(kernel, *v, channels);
  impl::requireExtent(kernel, sums, 0, batchNormBackwardSumsSize(channels), "2 C");
  // 1 / sqrt per channel up front: the reduction's inner loop then only loads it.
  Vector<double, ExecSpace> invstd(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "halo3d::batchNormBackwardSums invstd"),
      channels);
  Kokkos::parallel_for(
      "halo3d::batchNormBackwardSums invstd", Kokkos::RangePolicy<ExecSpace>(exec, 0, channels),
      KOKKOS_LAMBDA(index_t c) { invstd(c) = 1.0 / math::sqrt(double(var(c)) + eps); });
  const auto xc = impl::readCells(x);
  const auto dyc = impl::readCells(dy);
  impl::reduceBox<2>(
      exec, "halo3d::batchNormBackwardSums", channels, x.block().localSamples(), box,
      KOKKOS_LAMBDA(index_t c, index_t n, index_t d, index_t h, index_t w) {
        const double g = double(dyc(n, c, d, h, w));
        const double xhat = (double(xc(n, c, d, h, w)) - double(mean(c))) * invstd(c);
        return impl::sums(g, g * xhat);
      },
      sums, accumulate, path);
}

template <class ExecSpace, class T, class P>
void batchNormBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                       const Tensor<T, ExecSpace>& dy,
                       const NonDeduced<Vector<const P, ExecSpace>>& mean,
                       const NonDeduced<Vector<const P, ExecSpace>>& var,
                       const NonDeduced<Vector<const P, ExecSpace>>& gamma, double eps,
                       const NonDeduced<Vector<const double, ExecSpace>>& sums, double count,
                       const Tensor<T, ExecSpace>& dx, const Box& box, KernelPath path) {
  const char* kernel = "batchNormBackward";
  impl::requireCellwise(kernel, dx, box, x, dy);
  const index_t channels = dx.block().channels();
  for (const auto* v : {&mean, &var, &gamma})
    requirePerChannel(kernel, *v, channels);
  impl::requireExtent(kernel, sums, 0, batchNormBackwardSumsSize(channels), "2 C");
  require<ShapeError>(count > 0.0, kernel, ": count ", count, " must be positive");
  const auto xc = impl::readCells(x);
  const auto dyc = impl::readCells(dy);
  const auto dxc = impl::writeCells(dx);
  impl::forEachRow(
      exec, "halo3d::batchNormBackward", dx.block().localSamples(), channels, box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w0, index_t w1) {
        const double invstd = 1.0 / math::sqrt(double(var(c)) + eps);
        using C = ComputeType<T>;
        const C mu = C(mean(c));
        const C inv = C(invstd);
        const C scale = C(double(gamma(c)) * invstd);
        const C mean_dy = C(sums(c) / count);
        const C mean_dy_xhat = C(sums(channels + c) / count);
        const T* x = xc.row(n, c, d, h, w0);
        const T* dy = dyc.row(n, c, d, h, w0);
        T* dx = dxc.row(n, c, d, h, w0);
        for (index_t i = 0; i < w1 - w0; ++i) {
          const C xhat = (C(x[i]) - mu) * inv;
          dx[i] = T(scale * (C(dy[i]) - mean_dy - xhat * mean_dy_xhat));
        }
      },
      path);
}

template <class ExecSpace, class T>
void batchNormParameterGradients(const ExecSpace& exec,
                                 const NonDeduced<Vector<const double, ExecSpace>>& sums,
                                 const Vector<T, ExecSpace>& dgamma,
                                 const Vector<T, ExecSpace>& dbeta, bool accumulate) {
  const char* kernel = "batchNormParameterGradients";
  const index_t channels = index_t(dgamma.extent(0));
  requirePerChannel(kernel, dbeta, channels);
  impl::requireExtent(kernel, sums, 0, batchNormBackwardSumsSize(channels), "2 C for dgamma's C");
  Kokkos::parallel_for(
      "halo3d::batchNormParameterGradients", Kokkos::RangePolicy<ExecSpace>(exec, 0, channels),
      KOKKOS_LAMBDA(index_t c) {
        dgamma(c) = T(accumulate ? dgamma(c) + sums(channels + c) : sums(channels + c));
        dbeta(c) = T(accumulate ? dbeta(c) + sums(c) : sums(c));
      });
}

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_BATCHNORM, )
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_BATCHNORM_ACTIVATIONS, )

}  // namespace halo3d::kernels
