#pragma once
// Naive references of ReLU and LeakyReLU (Activations.hpp): plain host loops, same signatures.

#include "halo3d/kernels/reference/Elementwise.hpp"

namespace halo3d::kernels::reference {

template <class ExecSpace, class T>
void leakyReluForward(const ExecSpace&, const Tensor<T, ExecSpace>& x, double slope,
                      const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const auto xc = impl::readCells(x);
  const auto yc = impl::writeCells(y);
  detail::forEachCell(y, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    const T v = xc(n, c, d, h, w);
    yc(n, c, d, h, w) = v > T(0) ? v : T(slope) * v;
  });
}

template <class ExecSpace, class T>
void leakyReluBackward(const ExecSpace&, const Tensor<T, ExecSpace>& x,
                       const Tensor<T, ExecSpace>& dy, double slope, const Tensor<T, ExecSpace>& dx,
                       const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const auto xc = impl::readCells(x);
  const auto dyc = impl::readCells(dy);
  const auto dxc = impl::writeCells(dx);
  detail::forEachCell(dx, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    dxc(n, c, d, h, w) =
        xc(n, c, d, h, w) > T(0) ? dyc(n, c, d, h, w) : T(slope) * dyc(n, c, d, h, w);
  });
}

template <class ExecSpace, class T>
void reluForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                 const Tensor<T, ExecSpace>& y, const Box& box) {
  reference::leakyReluForward(exec, x, 0.0, y, box);
}

template <class ExecSpace, class T>
void reluBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                  const Tensor<T, ExecSpace>& dy, const Tensor<T, ExecSpace>& dx, const Box& box) {
  reference::leakyReluBackward(exec, x, dy, 0.0, dx, box);
}

}  // namespace halo3d::kernels::reference
