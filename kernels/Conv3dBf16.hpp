#pragma once
// conv3d forward on bf16 tensors (core/BFloat16.hpp): x and y hold bf16; the weights and bias stay
// float (the master copy the optimizer updates). Each product is of x and the weight rounded to
// bf16, as PyTorch's bf16 autocast computes it; the products are summed in float and y is rounded
// to bf16 once, to nearest even. Conventions as in Conv3d.hpp: global boxes, every sample, zero
// ghosts past the volume as the padding, the instance first, nothing fences; the same shape checks.
//
// Paths: on a host space with KernelPath::Fastest, where the compiler targets AVX512-BF16 and the
// geometry has stride and dilation 1, an engine of vdpbf16ps (two input channels' products per
// float lane, so twice the multiply-adds per instruction of float FMA); elsewhere a generic kernel
// (one thread per output value, converting in registers), which is also the device code. The two
// differ only in the order of the float sums.
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

// Whether conv3dForwardBf16 runs the vdpbf16ps engine for `g` on a host space with
// KernelPath::Fastest in this build (benchmarks report it).
bool conv3dBf16HostEngine(const WindowGeometry& g);

extern template void conv3dForwardBf16<Kokkos::DefaultExecutionSpace>(
    const Kokkos::DefaultExecutionSpace&, const Tensor<bf16, Kokkos::DefaultExecutionSpace>&,
    const Conv3dWeightsOn<float, Kokkos::DefaultExecutionSpace>&,
    const Conv3dBiasOn<float, Kokkos::DefaultExecutionSpace>&, const WindowGeometry&,
    const Tensor<bf16, Kokkos::DefaultExecutionSpace>&, const Box&, KernelPath);

}  // namespace halo3d::kernels
