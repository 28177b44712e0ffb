#pragma once
// Naive references of the dense kernels (Dense.hpp): triple loops, same signatures, sums in double.

#include "halo3d/kernels/reference/Elementwise.hpp"

namespace halo3d::kernels::reference {

namespace detail {

// out(a, b) = T(start(a, b) + sum_{k < K} term(a, b, k)), summed in double in the order of k, for
// a < A and b < B: the loop of every dense reference.
template <class T, class Out, class Start, class Term>
void sumInDouble(const Out& out, std::size_t A, std::size_t B, std::size_t K, const Start& start,
                 const Term& term) {
  for (std::size_t a = 0; a < A; ++a)
    for (std::size_t b = 0; b < B; ++b) {
      double sum = start(a, b);
      for (std::size_t k = 0; k < K; ++k)
        sum += term(a, b, k);
      out(a, b) = T(sum);
    }
}

}  // namespace detail

template <class ExecSpace, class T>
void denseForward(const ExecSpace&, const NonDeduced<Matrix<const T, ExecSpace>>& x,
                  const NonDeduced<Matrix<const T, ExecSpace>>& w,
                  const NonDeduced<Vector<const T, ExecSpace>>& b, const Matrix<T, ExecSpace>& y) {
  detail::requireHostMemory<ExecSpace>();
  detail::sumInDouble<T>(
      y, x.extent(0), w.extent(0), x.extent(1),
      [&](std::size_t, std::size_t o) { return b.extent(0) ? double(b(o)) : 0.0; },
      [&](std::size_t n, std::size_t o, std::size_t i) {
        return double(x(n, i)) * double(w(o, i));
      });
}

template <class ExecSpace, class T>
void denseBackwardData(const ExecSpace&, const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                       const NonDeduced<Matrix<const T, ExecSpace>>& w,
                       const Matrix<T, ExecSpace>& dx) {
  detail::requireHostMemory<ExecSpace>();
  detail::sumInDouble<T>(
      dx, dy.extent(0), w.extent(1), w.extent(0), [](std::size_t, std::size_t) { return 0.0; },
      [&](std::size_t n, std::size_t i, std::size_t o) {
        return double(dy(n, o)) * double(w(o, i));
      });
}

template <class ExecSpace, class T>
void denseBackwardWeights(const ExecSpace&, const NonDeduced<Matrix<const T, ExecSpace>>& x,
                          const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                          const Matrix<T, ExecSpace>& dw, bool accumulate = false) {
  detail::requireHostMemory<ExecSpace>();
  detail::sumInDouble<T>(
      dw, dy.extent(1), x.extent(1), x.extent(0),
      [&](std::size_t o, std::size_t i) { return accumulate ? double(dw(o, i)) : 0.0; },
      [&](std::size_t o, std::size_t i, std::size_t n) {
        return double(dy(n, o)) * double(x(n, i));
      });
}

template <class ExecSpace, class T>
void denseBackwardBias(const ExecSpace&, const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                       const Vector<T, ExecSpace>& db, bool accumulate = false) {
  detail::requireHostMemory<ExecSpace>();
  detail::sumInDouble<T>(
      [&](std::size_t, std::size_t o) -> T& { return db(o); }, 1, dy.extent(1), dy.extent(0),
      [&](std::size_t, std::size_t o) { return accumulate ? double(db(o)) : 0.0; },
      [&](std::size_t, std::size_t o, std::size_t n) { return double(dy(n, o)); });
}

}  // namespace halo3d::kernels::reference
