#pragma once
// Naive references of ReLU and LeakyReLU (Activations.hpp): plain host loops, same signatures.

#include "halo3d/kernels/reference/Elementwise.hpp"

namespace halo3d::kernels::reference {

template <class ExecSpace, class T>
void leakyReluForward(const ExecSpace&, const Tensor<T, ExecSpace>& x, double slope,
                      const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::mapCells(
      y, box, [&](index_t, T v) { return v > T(0) ? v : T(slope) * v; }, x);
}

template <class ExecSpace, class T>
void leakyReluBackward(const ExecSpace&, const Tensor<T, ExecSpace>& x,
                       const Tensor<T, ExecSpace>& dy, double slope, const Tensor<T, ExecSpace>& dx,
                       const Box& box) {
  detail::mapCells(
      dx, box, [&](index_t, T xv, T g) { return xv > T(0) ? g : T(slope) * g; }, x, dy);
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
