#pragma once
// Naive references of the element-wise kernels (Elementwise.hpp): plain host loops, same
// signatures. Memory must be host-accessible; callers fence before.

#include <Kokkos_Core.hpp>

#include "halo3d/kernels/KernelTypes.hpp"
#include "halo3d/kernels/reference/CellLoops.hpp"

namespace halo3d::kernels::reference {

template <class ExecSpace, class T>
void fill(const ExecSpace&, NonDeduced<T> value, const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::mapCells(y, box, [&](index_t) { return T(value); });
}

template <class ExecSpace, class T>
void copy(const ExecSpace&, const Tensor<T, ExecSpace>& x, const Tensor<T, ExecSpace>& y,
          const Box& box) {
  detail::mapCells(
      y, box, [](index_t, T v) { return v; }, x);
}

template <class ExecSpace, class T>
void scale(const ExecSpace&, NonDeduced<T> alpha, const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::mapCells(
      y, box, [&](index_t, T v) { return v * alpha; }, y);
}

template <class ExecSpace, class T>
void add(const ExecSpace&, const Tensor<T, ExecSpace>& a, const Tensor<T, ExecSpace>& b,
         const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::mapCells(
      y, box, [](index_t, T av, T bv) { return av + bv; }, a, b);
}

template <class ExecSpace, class T>
void axpby(const ExecSpace&, NonDeduced<T> alpha, const Tensor<T, ExecSpace>& x, NonDeduced<T> beta,
           const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::mapCells(
      y, box,
      [&](index_t, T xv, T out) { return beta == T(0) ? alpha * xv : alpha * xv + beta * out; }, x,
      y);
}

template <class ExecSpace, class T>
void fill(const ExecSpace&, NonDeduced<T> value, const Vector<T, ExecSpace>& y) {
  detail::requireHostMemory<ExecSpace>();
  for (std::size_t i = 0; i < y.extent(0); ++i)
    y(i) = value;
}

template <class ExecSpace, class T>
void copy(const ExecSpace&, const NonDeduced<Vector<const T, ExecSpace>>& x,
          const Vector<T, ExecSpace>& y) {
  detail::requireHostMemory<ExecSpace>();
  for (std::size_t i = 0; i < y.extent(0); ++i)
    y(i) = x(i);
}

template <class ExecSpace, class T>
void scale(const ExecSpace&, NonDeduced<T> alpha, const Vector<T, ExecSpace>& y) {
  detail::requireHostMemory<ExecSpace>();
  for (std::size_t i = 0; i < y.extent(0); ++i)
    y(i) *= alpha;
}

template <class ExecSpace, class T>
void axpy(const ExecSpace&, NonDeduced<T> alpha, const NonDeduced<Vector<const T, ExecSpace>>& x,
          const Vector<T, ExecSpace>& y) {
  detail::requireHostMemory<ExecSpace>();
  for (std::size_t i = 0; i < y.extent(0); ++i)
    y(i) += alpha * x(i);
}

template <class ExecSpace, class T>
void axpby(const ExecSpace&, NonDeduced<T> alpha, const NonDeduced<Vector<const T, ExecSpace>>& x,
           NonDeduced<T> beta, const Vector<T, ExecSpace>& y) {
  detail::requireHostMemory<ExecSpace>();
  for (std::size_t i = 0; i < y.extent(0); ++i)
    y(i) = beta == T(0) ? alpha * x(i) : alpha * x(i) + beta * y(i);
}

template <class ExecSpace, class T>
void sumOfSquares(const ExecSpace&, const Vector<T, ExecSpace>& x,
                  const Vector<double, ExecSpace>& out, bool accumulate = false) {
  detail::requireHostMemory<ExecSpace>();
  double sum = 0.0;
  for (std::size_t i = 0; i < x.extent(0); ++i)
    sum += double(x(i)) * double(x(i));
  out(0) = accumulate ? out(0) + sum : sum;
}

}  // namespace halo3d::kernels::reference
