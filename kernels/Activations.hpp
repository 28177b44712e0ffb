#pragma once
// ReLU and LeakyReLU on a box of global cells, all samples and channels.
//
// LeakyReLU: y = x for x > 0, slope * x otherwise (PyTorch's default slope is kLeakyReluSlope =
// 0.01); ReLU is slope 0. The backward pass takes the forward INPUT x and gives dx = dy for x > 0
// and slope * dy otherwise (PyTorch's rule at x = 0). For slope >= 0 the output y has the sign of
// x, so a layer that ran forward in place may pass y instead of x.
//
// Every tensor holds the same global (N, C, D, H, W) and samples; the output box must lie in the
// output's owned cells and in the inputs' allocations. Outputs may be the same tensor as an input
// (in place).

#include <Kokkos_Core.hpp>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/impl/ElementwiseViews.hpp"

namespace halo3d::kernels {

inline constexpr double kLeakyReluSlope = 0.01;

// y = leakyRelu(x) on `box`. x, y are (N, C, D, H, W).
template <class ExecSpace, class T>
void leakyReluForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, double slope,
                      const Tensor<T, ExecSpace>& y, const Box& box);
// dx = dy * (x > 0 ? 1 : slope) on `box`. x, dy, dx are (N, C, D, H, W).
template <class ExecSpace, class T>
void leakyReluBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                       const Tensor<T, ExecSpace>& dy, double slope, const Tensor<T, ExecSpace>& dx,
                       const Box& box);

// ReLU: LeakyReLU with slope 0.
template <class ExecSpace, class T>
void reluForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                 const Tensor<T, ExecSpace>& y, const Box& box) {
  leakyReluForward(exec, x, 0.0, y, box);
}
template <class ExecSpace, class T>
void reluBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                  const Tensor<T, ExecSpace>& dy, const Tensor<T, ExecSpace>& dx, const Box& box) {
  leakyReluBackward(exec, x, dy, 0.0, dx, box);
}

// The same on the default execution-space instance.
template <class T>
void leakyReluForward(const Tensor<T, Kokkos::DefaultExecutionSpace>& x, double slope,
                      const Tensor<T, Kokkos::DefaultExecutionSpace>& y, const Box& box) {
  leakyReluForward(Kokkos::DefaultExecutionSpace(), x, slope, y, box);
}
template <class T>
void leakyReluBackward(const Tensor<T, Kokkos::DefaultExecutionSpace>& x,
                       const Tensor<T, Kokkos::DefaultExecutionSpace>& dy, double slope,
                       const Tensor<T, Kokkos::DefaultExecutionSpace>& dx, const Box& box) {
  leakyReluBackward(Kokkos::DefaultExecutionSpace(), x, dy, slope, dx, box);
}

#define HALO3D_KERNELS_ACTIVATIONS(PREFIX, E, T)                                                   \
  PREFIX template void leakyReluForward<E, T>(const E&, const Tensor<T, E>&, double,               \
                                              const Tensor<T, E>&, const Box&);                    \
  PREFIX template void leakyReluBackward<E, T>(const E&, const Tensor<T, E>&, const Tensor<T, E>&, \
                                               double, const Tensor<T, E>&, const Box&);

HALO3D_KERNELS_ACTIVATIONS(extern, Kokkos::DefaultExecutionSpace, float)
HALO3D_KERNELS_ACTIVATIONS(extern, Kokkos::DefaultExecutionSpace, double)

}  // namespace halo3d::kernels
