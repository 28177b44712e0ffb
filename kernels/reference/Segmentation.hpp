#pragma once
// Naive references of the segmentation kernels (Segmentation.hpp): plain host loops, same
// signatures and the same layout of the counts, written from the definitions. The softmax is
// computed in double.

#include <cmath>
#include <vector>

#include "halo3d/kernels/Segmentation.hpp"
#include "halo3d/kernels/reference/Elementwise.hpp"

namespace halo3d::kernels::reference {

template <class ExecSpace, class T, class L>
void softmaxArgmax(const ExecSpace&, const Tensor<T, ExecSpace>& logits,
                   const Tensor<L, ExecSpace>& labels, const Tensor<T, ExecSpace>& probs,
                   const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const index_t classes = logits.block().channels();
  const auto x = impl::readCells(logits);
  const auto y = impl::writeCells(labels);
  detail::forEachCell(
      logits.block().localSamples(), 1, box,
      [&](index_t n, index_t, index_t d, index_t h, index_t w) {
        index_t arg = 0;
        for (index_t c = 1; c < classes; ++c)
          if (x(n, c, d, h, w) > x(n, arg, d, h, w)) arg = c;
        y(n, 0, d, h, w) = L(arg);
        if (!probs.isAllocated()) return;
        const auto p = impl::writeCells(probs);
        double sum = 0.0;
        for (index_t c = 0; c < classes; ++c)
          sum += std::exp(double(x(n, c, d, h, w)) - double(x(n, arg, d, h, w)));
        for (index_t c = 0; c < classes; ++c)
          p(n, c, d, h, w) =
              T(std::exp(double(x(n, c, d, h, w)) - double(x(n, arg, d, h, w))) / sum);
      });
}

template <class ExecSpace, class L>
void diceCounts(const ExecSpace&, const Tensor<L, ExecSpace>& pred,
                const Tensor<L, ExecSpace>& truth, index_t classes,
                const Vector<double, ExecSpace>& counts, const Box& box, bool accumulate = false) {
  detail::requireHostMemory<ExecSpace>();
  const auto a = impl::readCells(pred);
  const auto b = impl::readCells(truth);
  std::vector<double> sum(std::size_t(3 * classes), 0.0);
  detail::forEachCell(pred.block().localSamples(), 1, box,
                      [&](index_t n, index_t, index_t d, index_t h, index_t w) {
                        const L p = a(n, 0, d, h, w), t = b(n, 0, d, h, w);
                        if (p >= 0 && p < classes) sum[std::size_t(classes + p)] += 1.0;
                        if (t >= 0 && t < classes) sum[std::size_t(2 * classes + t)] += 1.0;
                        if (p == t && p >= 0 && p < classes) sum[std::size_t(p)] += 1.0;
                      });
  for (std::size_t k = 0; k < sum.size(); ++k)
    counts(k) = accumulate ? counts(k) + sum[k] : sum[k];
}

}  // namespace halo3d::kernels::reference
