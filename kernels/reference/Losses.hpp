#pragma once
// Naive references of the losses (Losses.hpp): plain host loops, same signatures and the same
// layout of partial sums, written from the formulas. Softmax probabilities are computed once per
// voxel, in double.

#include <cmath>
#include <vector>

#include "halo3d/kernels/Losses.hpp"
#include "halo3d/kernels/reference/Elementwise.hpp"

namespace halo3d::kernels::reference {

namespace detail {

// softmax over the classes of voxel (n, d, h, w).
template <class Cells>
std::vector<double> softmaxAt(const Cells& x, index_t classes, index_t n, index_t d, index_t h,
                              index_t w) {
  std::vector<double> p(static_cast<std::size_t>(classes));
  double m = -INFINITY;
  for (index_t c = 0; c < classes; ++c)
    m = std::max(m, double(x(n, c, d, h, w)));
  double s = 0.0;
  for (index_t c = 0; c < classes; ++c)
    s += p[std::size_t(c)] = std::exp(double(x(n, c, d, h, w)) - m);
  for (double& v : p)
    v /= s;
  return p;
}

// f(n, d, h, w, label, p) for every voxel of `box`: its label and its softmax p over the classes.
template <class MemorySpace, class T, class L, class F>
void forEachSoftmaxVoxel(const HaloTensor<T, MemorySpace>& logits,
                         const HaloTensor<L, MemorySpace>& labels, const Box& box, const F& f) {
  requireHostSpace<MemorySpace>();
  const index_t classes = logits.block().channels();
  const auto xc = impl::readCells(logits);
  const auto lc = impl::readCells(labels);
  forEachCell(labels, box, [&](index_t n, index_t, index_t d, index_t h, index_t w) {
    f(n, d, h, w, lc(n, 0, d, h, w), softmaxAt(xc, classes, n, d, h, w));
  });
}

// dlogits = T(grad(label, p)[c]) at every voxel of `box`: grad gives the loss's gradient over the
// classes, in double.
template <class MemorySpace, class T, class L, class G>
void softmaxBackward(const HaloTensor<T, MemorySpace>& logits,
                     const HaloTensor<L, MemorySpace>& labels,
                     const HaloTensor<T, MemorySpace>& dlogits, const Box& box, const G& grad) {
  const auto dc = impl::writeCells(dlogits);
  forEachSoftmaxVoxel(
      logits, labels, box,
      [&](index_t n, index_t d, index_t h, index_t w, L label, const std::vector<double>& p) {
        const std::vector<double> g = grad(label, p);
        for (index_t c = 0; c < index_t(g.size()); ++c)
          dc(n, c, d, h, w) = T(g[std::size_t(c)]);
      });
}

}  // namespace detail

template <class ExecSpace, class T>
void mseLossSums(const ExecSpace&, const Tensor<T, ExecSpace>& pred,
                 const Tensor<T, ExecSpace>& target, const Vector<double, ExecSpace>& sums,
                 const Box& box, bool accumulate = false) {
  double sum = 0.0;
  detail::forEachValue(
      box,
      [&](index_t, T p, T t) {
        const double e = double(p) - double(t);
        sum += e * e;
      },
      pred, target);
  sums(0) = accumulate ? sums(0) + sum : sum;
}

template <class ExecSpace, class T>
void mseLossBackward(const ExecSpace&, const Tensor<T, ExecSpace>& pred,
                     const Tensor<T, ExecSpace>& target, double count,
                     const Tensor<T, ExecSpace>& dpred, const Box& box) {
  detail::mapCells(
      dpred, box, [&](index_t, T p, T t) { return T(2.0 / count) * (p - t); }, pred, target);
}

template <class ExecSpace, class T>
void mseLossSums(const ExecSpace&, const Vector<T, ExecSpace>& pred,
                 const NonDeduced<Vector<const T, ExecSpace>>& target,
                 const Vector<double, ExecSpace>& sums, bool accumulate = false) {
  detail::requireHostMemory<ExecSpace>();
  double sum = 0.0;
  for (std::size_t k = 0; k < pred.extent(0); ++k) {
    const double e = double(pred(k)) - double(target(k));
    sum += e * e;
  }
  sums(0) = accumulate ? sums(0) + sum : sum;
}

template <class ExecSpace, class T>
void mseLossBackward(const ExecSpace&, const NonDeduced<Vector<const T, ExecSpace>>& pred,
                     const NonDeduced<Vector<const T, ExecSpace>>& target, double count,
                     const Vector<T, ExecSpace>& dpred) {
  detail::requireHostMemory<ExecSpace>();
  for (std::size_t k = 0; k < dpred.extent(0); ++k)
    dpred(k) = T(2.0 / count) * (pred(k) - target(k));
}

template <class ExecSpace, class T, class L>
void softmaxCrossEntropySums(const ExecSpace&, const Tensor<T, ExecSpace>& logits,
                             const Tensor<L, ExecSpace>& labels,
                             const Vector<double, ExecSpace>& sums, const Box& box,
                             bool accumulate = false) {
  const index_t classes = logits.block().channels();
  double loss = 0.0, bad = 0.0;
  detail::forEachSoftmaxVoxel(
      logits, labels, box,
      [&](index_t, index_t, index_t, index_t, L label, const std::vector<double>& p) {
        if (label < 0 || label >= classes) {
          bad += 1.0;
          return;
        }
        loss -= std::log(p[std::size_t(label)]);
      });
  sums(0) = accumulate ? sums(0) + loss : loss;
  sums(1) = accumulate ? sums(1) + bad : bad;
}

template <class ExecSpace, class T, class L>
void softmaxCrossEntropyBackward(const ExecSpace&, const Tensor<T, ExecSpace>& logits,
                                 const Tensor<L, ExecSpace>& labels, double count,
                                 const Tensor<T, ExecSpace>& dlogits, const Box& box) {
  const index_t classes = logits.block().channels();
  detail::softmaxBackward(logits, labels, dlogits, box, [&](L label, const std::vector<double>& p) {
    std::vector<double> g(static_cast<std::size_t>(classes), 0.0);
    if (label >= 0 && label < classes)
      for (index_t c = 0; c < classes; ++c)
        g[std::size_t(c)] = (p[std::size_t(c)] - (c == label ? 1.0 : 0.0)) / count;
    return g;
  });
}

template <class ExecSpace, class T, class L>
void softDiceSums(const ExecSpace&, const Tensor<T, ExecSpace>& logits,
                  const Tensor<L, ExecSpace>& labels, const Vector<double, ExecSpace>& sums,
                  const Box& box, bool accumulate = false) {
  const index_t classes = logits.block().channels();
  detail::startSums(sums, softDiceSumsSize(classes), accumulate);
  detail::forEachSoftmaxVoxel(
      logits, labels, box,
      [&](index_t, index_t, index_t, index_t, L label, const std::vector<double>& p) {
        for (index_t c = 0; c < classes; ++c) {
          const double t = label == c ? 1.0 : 0.0;
          sums(c) += p[std::size_t(c)] * t;
          sums(classes + c) += p[std::size_t(c)];
          sums(2 * classes + c) += t;
        }
      });
}

template <class ExecSpace, class T, class L>
void softDiceBackward(const ExecSpace&, const Tensor<T, ExecSpace>& logits,
                      const Tensor<L, ExecSpace>& labels,
                      const NonDeduced<Vector<const double, ExecSpace>>& sums, double eps,
                      const Tensor<T, ExecSpace>& dlogits, const Box& box) {
  const index_t classes = logits.block().channels();
  detail::softmaxBackward(logits, labels, dlogits, box, [&](L label, const std::vector<double>& p) {
    // dloss/dp_c of loss = 1 - (1/C) sum_c (2 I_c + eps) / (P_c + T_c + eps).
    std::vector<double> g(static_cast<std::size_t>(classes));
    for (index_t c = 0; c < classes; ++c) {
      const double t = label == c ? 1.0 : 0.0;
      const double num = 2.0 * sums(c) + eps, den = sums(classes + c) + sums(2 * classes + c) + eps;
      g[std::size_t(c)] = -(2.0 * t / den - num / (den * den)) / double(classes);
    }
    // Through the softmax Jacobian dp_j/dx_k = p_j (delta_jk - p_k).
    std::vector<double> dx(static_cast<std::size_t>(classes));
    for (index_t k = 0; k < classes; ++k) {
      double sum = 0.0;
      for (index_t j = 0; j < classes; ++j)
        sum += g[std::size_t(j)] * p[std::size_t(j)] * ((j == k ? 1.0 : 0.0) - p[std::size_t(k)]);
      dx[std::size_t(k)] = sum;
    }
    return dx;
  });
}

}  // namespace halo3d::kernels::reference
