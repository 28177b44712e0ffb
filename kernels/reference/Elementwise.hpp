#pragma once
// Naive references of the element-wise kernels (Elementwise.hpp): plain host loops, same
// signatures. Also the loop over a box that the other references share. Memory must be
// host-accessible; callers fence before.

#include <Kokkos_Core.hpp>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/KernelTypes.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"

namespace halo3d::kernels::reference {

namespace detail {

template <class ExecSpace>
constexpr void requireHostMemory() {
  static_assert(
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible,
      "reference kernels run plain host loops: use host-accessible tensors");
}

// f(n, c, d, h, w) for local samples [0, samples), channels [0, channels) and the global cells of
// `box`.
template <class F>
void forEachCell(index_t samples, index_t channels, const Box& box, const F& f) {
  for (index_t n = 0; n < samples; ++n)
    for (index_t c = 0; c < channels; ++c)
      for (index_t d = box.min(0); d < box.max(0); ++d)
        for (index_t h = box.min(1); h < box.max(1); ++h)
          for (index_t w = box.min(2); w < box.max(2); ++w)
            f(n, c, d, h, w);
}

// Every cell of `box` in `t`, all samples and channels.
template <class Tensor, class F>
void forEachCell(const Tensor& t, const Box& box, const F& f) {
  forEachCell(t.block().localSamples(), t.block().channels(), box, f);
}

}  // namespace detail

template <class ExecSpace, class T>
void fill(const ExecSpace&, NonDeduced<T> value, const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const auto yc = impl::writeCells(y);
  detail::forEachCell(y, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    yc(n, c, d, h, w) = value;
  });
}

template <class ExecSpace, class T>
void copy(const ExecSpace&, const Tensor<T, ExecSpace>& x, const Tensor<T, ExecSpace>& y,
          const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const auto xc = impl::readCells(x);
  const auto yc = impl::writeCells(y);
  detail::forEachCell(y, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    yc(n, c, d, h, w) = xc(n, c, d, h, w);
  });
}

template <class ExecSpace, class T>
void scale(const ExecSpace&, NonDeduced<T> alpha, const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const auto yc = impl::writeCells(y);
  detail::forEachCell(y, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    yc(n, c, d, h, w) *= alpha;
  });
}

template <class ExecSpace, class T>
void add(const ExecSpace&, const Tensor<T, ExecSpace>& a, const Tensor<T, ExecSpace>& b,
         const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const auto ac = impl::readCells(a);
  const auto bc = impl::readCells(b);
  const auto yc = impl::writeCells(y);
  detail::forEachCell(y, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    yc(n, c, d, h, w) = ac(n, c, d, h, w) + bc(n, c, d, h, w);
  });
}

template <class ExecSpace, class T>
void axpby(const ExecSpace&, NonDeduced<T> alpha, const Tensor<T, ExecSpace>& x, NonDeduced<T> beta,
           const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const auto xc = impl::readCells(x);
  const auto yc = impl::writeCells(y);
  detail::forEachCell(y, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    T& out = yc(n, c, d, h, w);
    out = beta == T(0) ? alpha * xc(n, c, d, h, w) : alpha * xc(n, c, d, h, w) + beta * out;
  });
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
