// Losses; see Losses.hpp for the formulas, the layout of the partial sums and the label rules.
#include "halo3d/kernels/Losses.hpp"

#include <algorithm>
#include <limits>

#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/impl/ElementwiseLoops.hpp"
#include "halo3d/kernels/impl/ElementwiseReduce.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"
#include "halo3d/kernels/impl/Softmax.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels {

template <class ExecSpace, class T>
void mseLossSums(const ExecSpace& exec, const Tensor<T, ExecSpace>& pred,
                 const Tensor<T, ExecSpace>& target, const Vector<double, ExecSpace>& sums,
                 const Box& box, bool accumulate, KernelPath path) {
  const char* kernel = "mseLossSums";
  impl::requireSameShape(kernel, target, pred);
  impl::requireAllocated(kernel, pred, box, "box");
  impl::requireAllocated(kernel, target, box, "box");
  impl::requireExtent(kernel, sums, 0, kMseSumsSize, "the MSE sums' size");
  const index_t channels = pred.block().channels();
  const auto pc = impl::readCells(pred);
  const auto tc = impl::readCells(target);
  // Per channel first, so that each sum walks contiguous rows; then the channels in order.
  Vector<double, ExecSpace> per_channel(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "halo3d::mseLossSums channels"),
      channels);
  impl::reduceBox<1>(
      exec, "halo3d::mseLossSums", channels, pred.block().localSamples(), box,
      KOKKOS_LAMBDA(index_t c, index_t n, index_t d, index_t h, index_t w) {
        const double e = double(pc(n, c, d, h, w)) - double(tc(n, c, d, h, w));
        return impl::sums(e * e);
      },
      per_channel, false, path);
  Kokkos::parallel_for(
      "halo3d::mseLossSums total", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1), KOKKOS_LAMBDA(int) {
        double total = 0.0;
        for (index_t c = 0; c < channels; ++c)
          total += per_channel(c);
        sums(0) = accumulate ? sums(0) + total : total;
      });
}

template <class ExecSpace, class T>
void mseLossBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& pred,
                     const Tensor<T, ExecSpace>& target, double count,
                     const Tensor<T, ExecSpace>& dpred, const Box& box, KernelPath path) {
  const char* kernel = "mseLossBackward";
  impl::requireCellwise(kernel, dpred, box, pred, target);
  require<ShapeError>(count > 0.0, kernel, ": count ", count, " must be positive");
  using C = ComputeType<T>;
  const C scale = C(2.0 / count);
  impl::forEachCellRow(
      exec, "halo3d::mseLossBackward", dpred, box, path,
      KOKKOS_LAMBDA(index_t width, T * g, const T* p, const T* t) {
        const C s = scale;
        for (index_t i = 0; i < width; ++i)
          g[i] = T(s * (C(p[i]) - C(t[i])));
      },
      pred, target);
}

template <class ExecSpace, class T>
void mseLossSums(const ExecSpace& exec, const Vector<T, ExecSpace>& pred,
                 const NonDeduced<Vector<const T, ExecSpace>>& target,
                 const Vector<double, ExecSpace>& sums, bool accumulate, KernelPath path) {
  const char* kernel = "mseLossSums";
  impl::requireExtent(kernel, target, 0, index_t(pred.extent(0)), "the prediction's extent");
  impl::requireExtent(kernel, sums, 0, kMseSumsSize, "the MSE sums' size");
  impl::reduceFlat<1>(
      exec, "halo3d::mseLossSums", index_t(pred.extent(0)),
      KOKKOS_LAMBDA(index_t k) {
        const double e = double(pred(k)) - double(target(k));
        return impl::sums(e * e);
      },
      sums, accumulate, path);
}

template <class ExecSpace, class T>
void mseLossBackward(const ExecSpace& exec, const NonDeduced<Vector<const T, ExecSpace>>& pred,
                     const NonDeduced<Vector<const T, ExecSpace>>& target, double count,
                     const Vector<T, ExecSpace>& dpred) {
  const char* kernel = "mseLossBackward";
  impl::requireExtent(kernel, pred, 0, index_t(dpred.extent(0)), "the gradient's extent");
  impl::requireExtent(kernel, target, 0, index_t(dpred.extent(0)), "the gradient's extent");
  require<ShapeError>(count > 0.0, kernel, ": count ", count, " must be positive");
  const T scale = T(2.0 / count);
  Kokkos::parallel_for(
      "halo3d::mseLossBackward",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, index_t(dpred.extent(0))),
      KOKKOS_LAMBDA(index_t k) { dpred(k) = scale * (pred(k) - target(k)); });
}

template <class ExecSpace, class T, class L>
void softmaxCrossEntropySums(const ExecSpace& exec, const Tensor<T, ExecSpace>& logits,
                             const Tensor<L, ExecSpace>& labels,
                             const Vector<double, ExecSpace>& sums, const Box& box, bool accumulate,
                             KernelPath path) {
  const char* kernel = "softmaxCrossEntropySums";
  impl::requireAllocated(kernel, logits, box, "box");
  impl::requireLabelsFor(kernel, logits, labels, box);
  impl::requireExtent(kernel, sums, 0, kCrossEntropySumsSize, "the cross-entropy sums' size");
  const index_t classes = logits.block().channels();
  const auto xc = impl::readCells(logits);
  const auto lc = impl::readCells(labels);
  impl::reduceBox<2>(
      exec, "halo3d::softmaxCrossEntropySums", 1, logits.block().localSamples(), box,
      KOKKOS_LAMBDA(index_t, index_t n, index_t d, index_t h, index_t w) {
        const L label = lc(n, 0, d, h, w);
        if (label < 0 || label >= classes) return impl::sums(0.0, 1.0);
        const impl::SoftmaxNorm z = impl::softmaxNorm(xc, classes, n, d, h, w);
        return impl::sums(z.m + math::log(z.s) - double(xc(n, index_t(label), d, h, w)), 0.0);
      },
      sums, accumulate, path);
}

template <class ExecSpace, class T, class L>
void softmaxCrossEntropyBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& logits,
                                 const Tensor<L, ExecSpace>& labels, double count,
                                 const Tensor<T, ExecSpace>& dlogits, const Box& box,
                                 KernelPath path) {
  const char* kernel = "softmaxCrossEntropyBackward";
  impl::requireCellwise(kernel, dlogits, box, logits);
  impl::requireLabelsFor(kernel, logits, labels, box);
  require<ShapeError>(count > 0.0, kernel, ": count ", count, " must be positive");
  const index_t classes = logits.block().channels();
  const double inv_count = 1.0 / count;
  const auto xc = impl::readCells(logits);
  const auto lc = impl::readCells(labels);
  const auto dc = impl::writeCells(dlogits);
  impl::forEachRow(
      exec, "halo3d::softmaxCrossEntropyBackward", dlogits.block().localSamples(), 1, box,
      KOKKOS_LAMBDA(index_t n, index_t, index_t d, index_t h, index_t w0, index_t w1) {
        for (index_t w = w0; w < w1; ++w) {
          const L label = lc(n, 0, d, h, w);
          const bool valid = label >= 0 && label < classes;
          const impl::SoftmaxNorm z = impl::softmaxNorm(xc, classes, n, d, h, w);
          for (index_t c = 0; c < classes; ++c) {
            const double g = z.p(double(xc(n, c, d, h, w))) - (c == index_t(label) ? 1.0 : 0.0);
            dc(n, c, d, h, w) = valid ? T(g * inv_count) : T(0);
          }
        }
      },
      path);
}

template <class ExecSpace, class T, class L>
void softDiceSums(const ExecSpace& exec, const Tensor<T, ExecSpace>& logits,
                  const Tensor<L, ExecSpace>& labels, const Vector<double, ExecSpace>& sums,
                  const Box& box, bool accumulate, KernelPath path) {
  const char* kernel = "softDiceSums";
  impl::requireAllocated(kernel, logits, box, "box");
  impl::requireLabelsFor(kernel, logits, labels, box);
  const index_t classes = logits.block().channels();
  impl::requireExtent(kernel, sums, 0, softDiceSumsSize(classes), "3 C");
  const auto xc = impl::readCells(logits);
  // One group per class: each recomputes the voxel's softmax normaliser, cheap for the few classes
  // of a segmentation, and keeps every sum a fixed-size accumulator.
  impl::classOverlapSums(
      exec, "halo3d::softDiceSums", classes, labels, box,
      KOKKOS_LAMBDA(index_t c, index_t n, index_t d, index_t h, index_t w) {
        return impl::softmaxNorm(xc, classes, n, d, h, w).p(double(xc(n, c, d, h, w)));
      },
      sums, accumulate, path);
}

template <class ExecSpace, class T, class L>
void softDiceBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& logits,
                      const Tensor<L, ExecSpace>& labels,
                      const NonDeduced<Vector<const double, ExecSpace>>& sums, double eps,
                      const Tensor<T, ExecSpace>& dlogits, const Box& box, KernelPath path) {
  const char* kernel = "softDiceBackward";
  impl::requireCellwise(kernel, dlogits, box, logits);
  impl::requireLabelsFor(kernel, logits, labels, box);
  const index_t classes = logits.block().channels();
  impl::requireExtent(kernel, sums, 0, softDiceSumsSize(classes), "3 C");
  const auto xc = impl::readCells(logits);
  const auto lc = impl::readCells(labels);
  const auto dc = impl::writeCells(dlogits);
  // loss = 1 - (1/C) sum_c N_c / S_c with N_c = 2 I_c + eps, S_c = P_c + T_c + eps, so
  // dloss/dp_c = -(1/C) (2 t_c S_c - N_c) / S_c^2, and through the softmax
  // dloss/dx_k = p_k (g_k - sum_j p_j g_j).
  const double inv_classes = 1.0 / double(classes);
  impl::forEachRow(
      exec, "halo3d::softDiceBackward", dlogits.block().localSamples(), 1, box,
      KOKKOS_LAMBDA(index_t n, index_t, index_t d, index_t h, index_t w0, index_t w1) {
        for (index_t w = w0; w < w1; ++w) {
          const L label = lc(n, 0, d, h, w);
          const impl::SoftmaxNorm z = impl::softmaxNorm(xc, classes, n, d, h, w);
          auto grad_p = [&](index_t c) {
            const double s = sums(classes + c) + sums(2 * classes + c) + eps;
            const double t = label == L(c) ? 1.0 : 0.0;
            return -inv_classes * (2.0 * t * s - (2.0 * sums(c) + eps)) / (s * s);
          };
          double dot = 0.0;
          for (index_t c = 0; c < classes; ++c)
            dot += z.p(double(xc(n, c, d, h, w))) * grad_p(c);
          for (index_t c = 0; c < classes; ++c)
            dc(n, c, d, h, w) = T(z.p(double(xc(n, c, d, h, w))) * (grad_p(c) - dot));
        }
      },
      path);
}

double softDiceLoss(const Kokkos::View<const double*, Kokkos::HostSpace>& sums, double eps) {
  require<ShapeError>(sums.extent(0) > 0 && sums.extent(0) % 3 == 0, "softDiceLoss: sums '",
                      sums.label(), "' has extent ", sums.extent(0), ", not 3 C for some C >= 1");
  const index_t classes = index_t(sums.extent(0)) / 3;
  double mean_score = 0.0;
  for (index_t c = 0; c < classes; ++c)
    mean_score += (2.0 * sums(c) + eps) / (sums(classes + c) + sums(2 * classes + c) + eps);
  return 1.0 - mean_score / double(classes);
}

double softDiceBadLabels(const Kokkos::View<const double*, Kokkos::HostSpace>& sums,
                         double voxels) {
  require<ShapeError>(sums.extent(0) % 3 == 0, "softDiceBadLabels: sums '", sums.label(),
                      "' has extent ", sums.extent(0), ", not 3 C");
  const index_t classes = index_t(sums.extent(0)) / 3;
  double labelled = 0.0;
  for (index_t c = 0; c < classes; ++c)
    labelled += sums(2 * classes + c);
  return voxels - labelled;
}

template <class ExecSpace, class L>
void requireValidLabels(const ExecSpace& exec, const Tensor<L, ExecSpace>& labels, index_t classes,
                        const Box& box, KernelPath path) {
  const char* kernel = "requireValidLabels";
  require<ShapeError>(labels.block().channels() == 1, kernel, ": labels ", impl::describe(labels),
                      " should have 1 channel");
  impl::requireAllocated(kernel, labels, box, "box");
  Vector<double, ExecSpace> bad("halo3d::requireValidLabels count", 1);
  const auto lc = impl::readCells(labels);
  impl::reduceBox<1>(
      exec, "halo3d::requireValidLabels", 1, labels.block().localSamples(), box,
      KOKKOS_LAMBDA(index_t, index_t n, index_t d, index_t h, index_t w) {
        const L label = lc(n, 0, d, h, w);
        return impl::sums(label < 0 || label >= classes ? 1.0 : 0.0);
      },
      bad, false, path);
  const auto bad_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bad);
  if (bad_host(0) == 0.0) return;
  // The error path only: find the offending values on the host for the message.
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), labels.view());
  const Box local = box.shifted(labels.toLocal({0, 0, 0}));
  L lo = std::numeric_limits<L>::max(), hi = std::numeric_limits<L>::lowest();
  for (index_t n = 0; n < index_t(host.extent(0)); ++n)
    for (index_t d = local.min(0); d < local.max(0); ++d)
      for (index_t h = local.min(1); h < local.max(1); ++h)
        for (index_t w = local.min(2); w < local.max(2); ++w) {
          const L label = host(n, 0, d, h, w);
          if (label < 0 || label >= classes) {
            lo = std::min(lo, label);
            hi = std::max(hi, label);
          }
        }
  throw InputError(concat(kernel, ": labels ", impl::describe(labels), " hold ",
                          index_t(bad_host(0)), " values outside [0, ", classes, ") in box ", box,
                          ": smallest ", lo, ", largest ", hi));
}

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_LOSSES, )
HALO3D_KERNELS_FOR_REALS_AND_LABELS(HALO3D_KERNELS_LABEL_LOSSES, )
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_TENSOR_LOSSES, )
HALO3D_KERNELS_FOR_BF16_AND_LABELS(HALO3D_KERNELS_LABEL_LOSSES, )
HALO3D_KERNELS_FOR_LABELS(HALO3D_KERNELS_LABEL_CHECKS, )

}  // namespace halo3d::kernels
