#pragma once
// Naive references of the dense kernels (Dense.hpp): triple loops, same signatures, sums in double.

#include "halo3d/kernels/reference/Elementwise.hpp"

namespace halo3d::kernels::reference {

template <class ExecSpace, class T>
void denseForward(const ExecSpace&, const NonDeduced<Matrix<const T, ExecSpace>>& x,
                  const NonDeduced<Matrix<const T, ExecSpace>>& w,
                  const NonDeduced<Vector<const T, ExecSpace>>& b, const Matrix<T, ExecSpace>& y) {
  detail::requireHostMemory<ExecSpace>();
  for (std::size_t n = 0; n < x.extent(0); ++n)
    for (std::size_t o = 0; o < w.extent(0); ++o) {
      double sum = b.extent(0) ? double(b(o)) : 0.0;
      for (std::size_t i = 0; i < x.extent(1); ++i)
        sum += double(x(n, i)) * double(w(o, i));
      y(n, o) = T(sum);
    }
}

template <class ExecSpace, class T>
void denseBackwardData(const ExecSpace&, const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                       const NonDeduced<Matrix<const T, ExecSpace>>& w,
                       const Matrix<T, ExecSpace>& dx) {
  detail::requireHostMemory<ExecSpace>();
  for (std::size_t n = 0; n < dy.extent(0); ++n)
    for (std::size_t i = 0; i < w.extent(1); ++i) {
      double sum = 0.0;
      for (std::size_t o = 0; o < w.extent(0); ++o)
        sum += double(dy(n, o)) * double(w(o, i));
      dx(n, i) = T(sum);
    }
}

template <class ExecSpace, class T>
void denseBackwardWeights(const ExecSpace&, const NonDeduced<Matrix<const T, ExecSpace>>& x,
                          const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                          const Matrix<T, ExecSpace>& dw, bool accumulate = false) {
  detail::requireHostMemory<ExecSpace>();
  for (std::size_t o = 0; o < dy.extent(1); ++o)
    for (std::size_t i = 0; i < x.extent(1); ++i) {
      double sum = accumulate ? double(dw(o, i)) : 0.0;
      for (std::size_t n = 0; n < x.extent(0); ++n)
        sum += double(dy(n, o)) * double(x(n, i));
      dw(o, i) = T(sum);
    }
}

template <class ExecSpace, class T>
void denseBackwardBias(const ExecSpace&, const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                       const Vector<T, ExecSpace>& db, bool accumulate = false) {
  detail::requireHostMemory<ExecSpace>();
  for (std::size_t o = 0; o < dy.extent(1); ++o) {
    double sum = accumulate ? double(db(o)) : 0.0;
    for (std::size_t n = 0; n < dy.extent(0); ++n)
      sum += double(dy(n, o));
    db(o) = T(sum);
  }
}

}  // namespace halo3d::kernels::reference
