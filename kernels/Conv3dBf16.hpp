#pragma once
// The three conv3d passes on bf16 tensors (core/BFloat16.hpp): activations (x, y) and their
// gradients (dy, dx) hold bf16; the weights and bias stay float (the master copy the optimizer
// updates) and so do their gradients (dw, db). What is rounded where, as PyTorch's bf16 autocast
// computes it:
//   - forward and backward-data multiply a bf16 activation (x or dy) by the weight rounded to bf16
//     (nearest even); the product of two bf16 is exact in float;
//   - backward-filter multiplies bf16 x by bf16 dy (exact in float); the bias gradient sums dy;
//   - every sum is in float; y and dx are rounded to bf16 once, on the store; dw and db are float
//     (added to their float values when accumulating).
// Conventions as in Conv3d.hpp: global boxes, every sample, zero ghosts past the volume as the
// padding, the instance first, nothing fences; the same shape checks and the same box semantics
// as conv3dForward / conv3dBackwardData / conv3dBackwardFilter.
//
// Paths: on a host space with KernelPath::Fastest, where the compiler targets AVX512-BF16 and the
// geometry has stride and dilation 1, engines of vdpbf16ps (two bf16 products per float lane, so
// twice the multiply-adds per instruction of float FMA): forward and backward-data (a forward
// convolution of dy with the weights transposed and flipped) pair input channels; backward-filter
// pairs neighbouring W cells (its bias gradient stays generic). Other geometries on a host space
// with KernelPath::Fastest run the float host kernels of Conv3d.hpp on float copies of the bf16
// operands and of the bf16-rounded weights (the same products, float sums), the destination box
// rounded to bf16; the copies last for the call. The device code (and KernelPath::Device) is a
// generic kernel converting in registers (one thread per output or dx value; one team per weight
// for backward-filter). Paths differ only in the order of the float sums.
#include <Kokkos_Core.hpp>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

// y(n, o, c) = bf16(b(o) + sum_{i, k} bf16(w(o, i, k)) x(n, i, c * s - p + k * dil)) for every
// sample n, output channel o and global output cell c in out_box. Throws ShapeError as
// conv3dForward does.
template <class ExecSpace>
void conv3dForwardBf16(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x,
                       const Conv3dWeightsOn<float, ExecSpace>& w,
                       const Conv3dBiasOn<float, ExecSpace>& b, const WindowGeometry& g,
                       const Tensor<bf16, ExecSpace>& y, const Box& out_box,
                       KernelPath path = KernelPath::Fastest);

// dx(n, i, q) = bf16(sum over output channels o, taps k and dy cells c in dy_box with
// c * s - p + k * dil = q of bf16(w(o, i, k)) dy(n, o, c)) for every global input cell q in dx_box
// (assigned). Box rules and ShapeError as conv3dBackwardData.
template <class ExecSpace>
void conv3dBackwardDataBf16(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& dy,
                            const Conv3dWeightsOn<float, ExecSpace>& w, const WindowGeometry& g,
                            const Tensor<bf16, ExecSpace>& dx, const Box& dx_box, const Box& dy_box,
                            KernelPath path = KernelPath::Fastest);

// conv3dBackwardDataBf16 with dy_box = dy's owned cells.
template <class ExecSpace>
void conv3dBackwardDataBf16(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& dy,
                            const Conv3dWeightsOn<float, ExecSpace>& w, const WindowGeometry& g,
                            const Tensor<bf16, ExecSpace>& dx, const Box& dx_box) {
  conv3dBackwardDataBf16(exec, dy, w, g, dx, dx_box, dy.block().owned());
}

// dw(o, i, k) (+)= sum over samples n and output cells c in out_box of float(dy(n, o, c)) *
// float(x(n, i, c * s - p + k * dil)), db(o) (+)= sum of float(dy(n, o, c)) (skipped when db has
// extent 0), all in float: assigned, or added to the existing values when `accumulate`. Partial
// sums over out_box as conv3dBackwardFilter; ShapeError likewise.
template <class ExecSpace>
void conv3dBackwardFilterBf16(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x,
                              const Tensor<bf16, ExecSpace>& dy, const WindowGeometry& g,
                              const Conv3dWeightsGradOn<float, ExecSpace>& dw,
                              const Conv3dBiasGradOn<float, ExecSpace>& db, const Box& out_box,
                              bool accumulate, KernelPath path = KernelPath::Fastest);

// Whether the three passes run their vdpbf16ps engines for `g` on a host space with
// KernelPath::Fastest in this build (benchmarks report it).
bool conv3dBf16HostEngine(const WindowGeometry& g);

// The bytes the largest of those engine passes takes from the host scratchpad
// (HostScratchpad.hpp) for one call on an x block of `x_owned` cells and a y block of `y_owned`
// (N, C, D, H, W), with the ghosts a stride-1 window reads: 0 where the engines do not run for `g`.
// The memory model prices the scratchpad with it.
std::size_t conv3dBf16HostEngineScratchBytes(const Shape5& x_owned, const Shape5& y_owned,
                                             const WindowGeometry& g);

extern template void conv3dForwardBf16<Kokkos::DefaultExecutionSpace>(
    const Kokkos::DefaultExecutionSpace&, const Tensor<bf16, Kokkos::DefaultExecutionSpace>&,
    const Conv3dWeightsOn<float, Kokkos::DefaultExecutionSpace>&,
    const Conv3dBiasOn<float, Kokkos::DefaultExecutionSpace>&, const WindowGeometry&,
    const Tensor<bf16, Kokkos::DefaultExecutionSpace>&, const Box&, KernelPath);
extern template void conv3dBackwardDataBf16<Kokkos::DefaultExecutionSpace>(
    const Kokkos::DefaultExecutionSpace&, const Tensor<bf16, Kokkos::DefaultExecutionSpace>&,
    const Conv3dWeightsOn<float, Kokkos::DefaultExecutionSpace>&, const WindowGeometry&,
    const Tensor<bf16, Kokkos::DefaultExecutionSpace>&, const Box&, const Box&, KernelPath);
extern template void conv3dBackwardFilterBf16<Kokkos::DefaultExecutionSpace>(
    const Kokkos::DefaultExecutionSpace&, const Tensor<bf16, Kokkos::DefaultExecutionSpace>&,
    const Tensor<bf16, Kokkos::DefaultExecutionSpace>&, const WindowGeometry&,
    const Conv3dWeightsGradOn<float, Kokkos::DefaultExecutionSpace>&,
    const Conv3dBiasGradOn<float, Kokkos::DefaultExecutionSpace>&, const Box&, bool, KernelPath);

}  // namespace halo3d::kernels
