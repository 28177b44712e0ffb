#pragma once
// Channel concatenation and slicing of HaloTensors on a box of global cells, for U-Net's skip
// connections: the decoder concatenates [skip, upsampled] along C, and its backward pass slices the
// gradient back apart.
//
// Tensors hold the same global N, D, H, W and the same samples; their channel counts differ. The
// box must lie in the output's owned cells and in the input's allocation. T is float, double or
// bf16 (copies: the same bits). Host code copies whole W
// rows, device code one cell per thread (`path`, core/KernelPath.hpp).

#include <Kokkos_Core.hpp>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/ComputeType.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

// y = [a, b] along C on `box`: a (N, Ca, D, H, W), b (N, Cb, D, H, W), y (N, Ca + Cb, D, H, W).
template <class ExecSpace, class T>
void concatChannels(const ExecSpace& exec, const Tensor<T, ExecSpace>& a,
                    const Tensor<T, ExecSpace>& b, const Tensor<T, ExecSpace>& y, const Box& box,
                    KernelPath path = KernelPath::Fastest);
// x = y[:, c0 : c0 + Cx] on `box`: y (N, Cy, D, H, W), x (N, Cx, D, H, W), c0 + Cx <= Cy.
template <class ExecSpace, class T>
void sliceChannels(const ExecSpace& exec, const Tensor<T, ExecSpace>& y, index_t c0,
                   const Tensor<T, ExecSpace>& x, const Box& box,
                   KernelPath path = KernelPath::Fastest);
// y[:, c0 : c0 + Cx] = x on `box`, the other channels untouched: the backward pass of
// sliceChannels.
template <class ExecSpace, class T>
void insertChannels(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, index_t c0,
                    const Tensor<T, ExecSpace>& y, const Box& box,
                    KernelPath path = KernelPath::Fastest);

// The same on the default execution-space instance.
template <class T>
void concatChannels(const Tensor<T, DefaultExec>& a, const Tensor<T, DefaultExec>& b,
                    const Tensor<T, DefaultExec>& y, const Box& box) {
  concatChannels(DefaultExec(), a, b, y, box);
}
template <class T>
void sliceChannels(const Tensor<T, DefaultExec>& y, index_t c0, const Tensor<T, DefaultExec>& x,
                   const Box& box) {
  sliceChannels(DefaultExec(), y, c0, x, box);
}
template <class T>
void insertChannels(const Tensor<T, DefaultExec>& x, index_t c0, const Tensor<T, DefaultExec>& y,
                    const Box& box) {
  insertChannels(DefaultExec(), x, c0, y, box);
}

#define HALO3D_KERNELS_CHANNELS(PREFIX, E, T)                                                   \
  PREFIX template void concatChannels<E, T>(const E&, const Tensor<T, E>&, const Tensor<T, E>&, \
                                            const Tensor<T, E>&, const Box&, KernelPath);       \
  PREFIX template void sliceChannels<E, T>(const E&, const Tensor<T, E>&, index_t,              \
                                           const Tensor<T, E>&, const Box&, KernelPath);        \
  PREFIX template void insertChannels<E, T>(const E&, const Tensor<T, E>&, index_t,             \
                                            const Tensor<T, E>&, const Box&, KernelPath);

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_CHANNELS, extern)
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_CHANNELS, extern)

}  // namespace halo3d::kernels
