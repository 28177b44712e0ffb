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
// (in place). T is float, double or bf16 (computed in float, rounded once on the store: the bf16
// result is the float result rounded to bf16). Host code takes whole W rows, device code one cell
// per thread (`path`, core/KernelPath.hpp).

#include <Kokkos_Core.hpp>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/ComputeType.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

inline constexpr double kLeakyReluSlope = 0.01;

// y = leakyRelu(x) on `box`. x, y are (N, C, D, H, W).
template <class ExecSpace, class T>
void leakyReluForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, double slope,
                      const Tensor<T, ExecSpace>& y, const Box& box,
                      KernelPath path = KernelPath::Fastest);
// dx = dy * (x > 0 ? 1 : slope) on `box`. x, dy, dx are (N, C, D, H, W).
template <class ExecSpace, class T>
void leakyReluBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                       const Tensor<T, ExecSpace>& dy, double slope, const Tensor<T, ExecSpace>& dx,
                       const Box& box, KernelPath path = KernelPath::Fastest);

// ReLU: LeakyReLU with slope 0.
template <class ExecSpace, class T>
void reluForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                 const Tensor<T, ExecSpace>& y, const Box& box,
                 KernelPath path = KernelPath::Fastest) {
  leakyReluForward(exec, x, 0.0, y, box, path);
}
template <class ExecSpace, class T>
void reluBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                  const Tensor<T, ExecSpace>& dy, const Tensor<T, ExecSpace>& dx, const Box& box,
                  KernelPath path = KernelPath::Fastest) {
  leakyReluBackward(exec, x, dy, 0.0, dx, box, path);
}

// The same on the default execution-space instance.
template <class T>
void leakyReluForward(const Tensor<T, DefaultExec>& x, double slope,
                      const Tensor<T, DefaultExec>& y, const Box& box) {
  leakyReluForward(DefaultExec(), x, slope, y, box);
}
template <class T>
void leakyReluBackward(const Tensor<T, DefaultExec>& x, const Tensor<T, DefaultExec>& dy,
                       double slope, const Tensor<T, DefaultExec>& dx, const Box& box) {
  leakyReluBackward(DefaultExec(), x, dy, slope, dx, box);
}

#define HALO3D_KERNELS_ACTIVATIONS(PREFIX, E, T)                                                   \
  PREFIX template void leakyReluForward<E, T>(const E&, const Tensor<T, E>&, double,               \
                                              const Tensor<T, E>&, const Box&, KernelPath);        \
  PREFIX template void leakyReluBackward<E, T>(const E&, const Tensor<T, E>&, const Tensor<T, E>&, \
                                               double, const Tensor<T, E>&, const Box&,            \
                                               KernelPath);

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_ACTIVATIONS, extern)
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_ACTIVATIONS, extern)

}  // namespace halo3d::kernels
