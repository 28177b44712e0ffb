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

}  // namespace detail

template <class ExecSpace, class T>
void mseLossSums(const ExecSpace&, const Tensor<T, ExecSpace>& pred,
                 const Tensor<T, ExecSpace>& target, const Vector<double, ExecSpace>& sums,
                 const Box& box, bool accumulate = false) {
  detail::requireHostMemory<ExecSpace>();
  const auto pc = impl::readCells(pred);
  const auto tc = impl::readCells(target);
  double sum = 0.0;
  detail::forEachCell(pred, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    const double e = double(pc(n, c, d, h, w)) - double(tc(n, c, d, h, w));
    sum += e * e;
  });
  sums(0) = accumulate ? sums(0) + sum : sum;
}

template <class ExecSpace, class T>
void mseLossBackward(const ExecSpace&, const Tensor<T, ExecSpace>& pred,
                     const Tensor<T, ExecSpace>& target, double count,
                     const Tensor<T, ExecSpace>& dpred, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const auto pc = impl::readCells(pred);
  const auto tc = impl::readCells(target);
  const auto dc = impl::writeCells(dpred);
  detail::forEachCell(dpred, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    dc(n, c, d, h, w) = T(2.0 / count) * (pc(n, c, d, h, w) - tc(n, c, d, h, w));
  });
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
  detail::requireHostMemory<ExecSpace>();
  const index_t classes = logits.block().channels();
  const auto xc = impl::readCells(logits);
  const auto lc = impl::readCells(labels);
  double loss = 0.0, bad = 0.0;
  detail::forEachCell(labels, box, [&](index_t n, index_t, index_t d, index_t h, index_t w) {
    const L label = lc(n, 0, d, h, w);
    if (label < 0 || label >= classes) {
      bad += 1.0;
      return;
    }
    loss -= std::log(detail::softmaxAt(xc, classes, n, d, h, w)[std::size_t(label)]);
  });
  sums(0) = accumulate ? sums(0) + loss : loss;
  sums(1) = accumulate ? sums(1) + bad : bad;
}

template <class ExecSpace, class T, class L>
void softmaxCrossEntropyBackward(const ExecSpace&, const Tensor<T, ExecSpace>& logits,
                                 const Tensor<L, ExecSpace>& labels, double count,
                                 const Tensor<T, ExecSpace>& dlogits, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const index_t classes = logits.block().channels();
  const auto xc = impl::readCells(logits);
  const auto lc = impl::readCells(labels);
  const auto dc = impl::writeCells(dlogits);
  detail::forEachCell(labels, box, [&](index_t n, index_t, index_t d, index_t h, index_t w) {
    const L label = lc(n, 0, d, h, w);
    const std::vector<double> p = detail::softmaxAt(xc, classes, n, d, h, w);
    for (index_t c = 0; c < classes; ++c) {
      const bool valid = label >= 0 && label < classes;
      dc(n, c, d, h, w) = valid ? T((p[std::size_t(c)] - (c == label ? 1.0 : 0.0)) / count) : T(0);
    }
  });
}

template <class ExecSpace, class T, class L>
void softDiceSums(const ExecSpace&, const Tensor<T, ExecSpace>& logits,
                  const Tensor<L, ExecSpace>& labels, const Vector<double, ExecSpace>& sums,
                  const Box& box, bool accumulate = false) {
  detail::requireHostMemory<ExecSpace>();
  const index_t classes = logits.block().channels();
  if (!accumulate)
    for (index_t k = 0; k < softDiceSumsSize(classes); ++k)
      sums(k) = 0.0;
  const auto xc = impl::readCells(logits);
  const auto lc = impl::readCells(labels);
  detail::forEachCell(labels, box, [&](index_t n, index_t, index_t d, index_t h, index_t w) {
    const std::vector<double> p = detail::softmaxAt(xc, classes, n, d, h, w);
    for (index_t c = 0; c < classes; ++c) {
      const double t = lc(n, 0, d, h, w) == c ? 1.0 : 0.0;
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
  detail::requireHostMemory<ExecSpace>();
  const index_t classes = logits.block().channels();
  const auto xc = impl::readCells(logits);
  const auto lc = impl::readCells(labels);
  const auto dc = impl::writeCells(dlogits);
  detail::forEachCell(labels, box, [&](index_t n, index_t, index_t d, index_t h, index_t w) {
    const std::vector<double> p = detail::softmaxAt(xc, classes, n, d, h, w);
    // dloss/dp_c of loss = 1 - (1/C) sum_c (2 I_c + eps) / (P_c + T_c + eps).
    std::vector<double> g(static_cast<std::size_t>(classes));
    for (index_t c = 0; c < classes; ++c) {
      const double t = lc(n, 0, d, h, w) == c ? 1.0 : 0.0;
      const double num = 2.0 * sums(c) + eps, den = sums(classes + c) + sums(2 * classes + c) + eps;
      g[std::size_t(c)] = -(2.0 * t / den - num / (den * den)) / double(classes);
    }
    // Through the softmax Jacobian dp_j/dx_k = p_j (delta_jk - p_k).
    for (index_t k = 0; k < classes; ++k) {
      double sum = 0.0;
      for (index_t j = 0; j < classes; ++j)
        sum += g[std::size_t(j)] * p[std::size_t(j)] * ((j == k ? 1.0 : 0.0) - p[std::size_t(k)]);
      dc(n, k, d, h, w) = T(sum);
    }
  });
}

}  // namespace halo3d::kernels::reference
