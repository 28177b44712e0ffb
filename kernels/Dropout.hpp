#pragma once
// Dropout in training: each cell is kept with probability 1 - p and scaled by 1 / (1 - p), or
// zeroed. The mask is never stored: a cell's draw is randomBits(stream, global index), the C-order
// linear index of the cell in the GLOBAL (N, C, D, H, W) tensor (Random.hpp), so the mask is the
// same on every partition, and the backward pass regenerates it from the same stream. In evaluation
// dropout is the identity (copy or skip).
//
// A cell is dropped when its 32 random bits are below round(p * 2^32), the same test for float and
// double.
//
// bf16 tensors: the cell times the keep factor in float, rounded once to bf16 (the float result
// rounded), the same mask.
//
// Paths (core/KernelPath.hpp): the host code draws a W row's Philox blocks first, four cells per
// block, then applies them; the device code draws each cell's bits in its own thread. Both give
// every cell the same bits.

#include <Kokkos_Core.hpp>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/ComputeType.hpp"
#include "halo3d/kernels/KernelTypes.hpp"
#include "halo3d/kernels/Random.hpp"

namespace halo3d::kernels {

// y = mask * x / (1 - p) on `box`. Requires 0 <= p < 1 (InputError otherwise). x, y are (N, C, D,
// H, W), same global shape and samples; y may be x.
template <class ExecSpace, class T>
void dropoutForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, double p,
                    const RandomStream& stream, const Tensor<T, ExecSpace>& y, const Box& box,
                    KernelPath path = KernelPath::Fastest);
// dx = mask * dy / (1 - p) on `box`, with the forward pass's p and stream.
template <class ExecSpace, class T>
void dropoutBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy, double p,
                     const RandomStream& stream, const Tensor<T, ExecSpace>& dx, const Box& box,
                     KernelPath path = KernelPath::Fastest);

// The same on the default execution-space instance.
template <class T>
void dropoutForward(const Tensor<T, DefaultExec>& x, double p, const RandomStream& stream,
                    const Tensor<T, DefaultExec>& y, const Box& box) {
  dropoutForward(DefaultExec(), x, p, stream, y, box);
}
template <class T>
void dropoutBackward(const Tensor<T, DefaultExec>& dy, double p, const RandomStream& stream,
                     const Tensor<T, DefaultExec>& dx, const Box& box) {
  dropoutBackward(DefaultExec(), dy, p, stream, dx, box);
}

#define HALO3D_KERNELS_DROPOUT(PREFIX, E, T)                                                       \
  PREFIX template void dropoutForward<E, T>(const E&, const Tensor<T, E>&, double,                 \
                                            const RandomStream&, const Tensor<T, E>&, const Box&,  \
                                            KernelPath);                                           \
  PREFIX template void dropoutBackward<E, T>(const E&, const Tensor<T, E>&, double,                \
                                             const RandomStream&, const Tensor<T, E>&, const Box&, \
                                             KernelPath);

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_DROPOUT, extern)
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_DROPOUT, extern)

}  // namespace halo3d::kernels
