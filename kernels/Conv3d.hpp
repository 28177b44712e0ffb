#pragma once
// 3D convolution on HaloTensors: forward, backward-data and backward-filter (with the bias
// gradient), for any kernel (odd, even, non-cubic), stride, dilation and padding (WindowGeometry).
// Conventions of kernels/README.md: boxes are global spatial cells, every sample of the tensors is
// processed, the padding is the zero ghost cells past the global volume, the execution-space
// instance comes first, and nothing fences.
//
// Shapes: x and dx (N, I, D, H, W); y and dy (N, O, Do, Ho, Wo), where per dimension
// Do = floor((D + 2p - dil (k - 1) - 1) / s) + 1; w and dw (O, I, kD, kH, kW); b and db (O), or
// extent 0 for "no bias". Tensors are HaloTensor<T, MemorySpace>, parameters LayoutRight Views in
// the same memory space.
//
// Paths (core/KernelPath.hpp): the host code is an AVX-512 engine (register tiles over the
// contiguous W axis) where it applies and a generic one-thread-per-value kernel elsewhere; the
// device code is a team kernel that tiles inputs and weights in scratch memory. Which code runs
// depends only on the path, the geometry and the scalar type, never on the boxes, so a result
// computed box by box (interior, then boundary slabs) is bitwise the whole-box result for forward
// and backward-data.

#include <Kokkos_Core.hpp>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

// Parameter Views of the conv3d kernels, in the memory space of the tensors, all LayoutRight:
// weights (O, I, kD, kH, kW), bias (O) or extent 0 for "no bias", and their gradients. NonDeduced,
// so that Views convert (non-const to const, default layout to LayoutRight) at the call.
template <class T, class MemorySpace>
using Conv3dWeights = NonDeduced<Kokkos::View<const T*****, Kokkos::LayoutRight, MemorySpace>>;
template <class T, class MemorySpace>
using Conv3dBias = NonDeduced<Kokkos::View<const T*, Kokkos::LayoutRight, MemorySpace>>;
template <class T, class MemorySpace>
using Conv3dWeightsGrad = NonDeduced<Kokkos::View<T*****, Kokkos::LayoutRight, MemorySpace>>;
template <class T, class MemorySpace>
using Conv3dBiasGrad = NonDeduced<Kokkos::View<T*, Kokkos::LayoutRight, MemorySpace>>;
// The same in the memory space of execution space E, as the kernels below take them (with
// Tensor<T, E> for the tensors).
template <class T, class E>
using Conv3dWeightsOn = Conv3dWeights<T, typename E::memory_space>;
template <class T, class E>
using Conv3dBiasOn = Conv3dBias<T, typename E::memory_space>;
template <class T, class E>
using Conv3dWeightsGradOn = Conv3dWeightsGrad<T, typename E::memory_space>;
template <class T, class E>
using Conv3dBiasGradOn = Conv3dBiasGrad<T, typename E::memory_space>;

// y(n, o, c) = b(o) + sum_{i, k} w(o, i, k) x(n, i, c * s - p + k * dil) for every sample n, output
// channel o and global output cell c in out_box (assigned). x is read in its allocation (owned
// cells and ghosts). Throws ShapeError if out_box is not inside y's owned cells, if the input
// window of out_box reaches past x's allocation (ghost region too thin), or on mismatched samples,
// channels, weight or bias shapes or volumes.
template <class ExecSpace, class T>
void conv3dForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                   const Conv3dWeightsOn<T, ExecSpace>& w, const Conv3dBiasOn<T, ExecSpace>& b,
                   const WindowGeometry& g, const Tensor<T, ExecSpace>& y, const Box& out_box,
                   KernelPath path = KernelPath::Fastest);

// Pull form: assigns dx(n, i, q) = sum of w(o, i, k) dy(n, o, c) over the output cells c in dy_box
// and taps k with c * s - p + k * dil = q, for every global input cell q in dx_box. dx_box may hold
// ghost cells of dx (a layer then sums them into their owners with HaloExchange::scatter) but must
// lie inside the volume; dy_box must lie in dy's allocation. Throws ShapeError otherwise, or on
// mismatched samples, channels, weights, volumes.
template <class ExecSpace, class T>
void conv3dBackwardData(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy,
                        const Conv3dWeightsOn<T, ExecSpace>& w, const WindowGeometry& g,
                        const Tensor<T, ExecSpace>& dx, const Box& dx_box, const Box& dy_box,
                        KernelPath path = KernelPath::Fastest);

// conv3dBackwardData with dy_box = dy's owned cells.
template <class ExecSpace, class T>
void conv3dBackwardData(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy,
                        const Conv3dWeightsOn<T, ExecSpace>& w, const WindowGeometry& g,
                        const Tensor<T, ExecSpace>& dx, const Box& dx_box) {
  conv3dBackwardData(exec, dy, w, g, dx, dx_box, dy.block().owned());
}

// dw(o, i, k) (+)= sum over samples n and output cells c in out_box of dy(n, o, c) x(n, i, c * s -
// p + k * dil), and db(o) (+)= sum of dy(n, o, c) likewise (skipped when db has extent 0):
// assigned, or added to the existing values when `accumulate`. These are partial sums: summing the
// partials of disjoint boxes (the blocks of a grid, or the pieces of one block) gives the gradient
// over their union. out_box must lie in dy's owned cells and its input window in x's allocation;
// throws ShapeError otherwise or on mismatched shapes.
template <class ExecSpace, class T>
void conv3dBackwardFilter(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                          const Tensor<T, ExecSpace>& dy, const WindowGeometry& g,
                          const Conv3dWeightsGradOn<T, ExecSpace>& dw,
                          const Conv3dBiasGradOn<T, ExecSpace>& db, const Box& out_box,
                          bool accumulate, KernelPath path = KernelPath::Fastest);

// Overloads on the default instance of the tensors' execution space: the arguments of the
// overloads above (the first tensor first), without exec and path.
template <class T, class MemorySpace, class... Rest>
void conv3dForward(const HaloTensor<T, MemorySpace>& x, const Rest&... rest) {
  conv3dForward(typename MemorySpace::execution_space(), x, rest...);
}
template <class T, class MemorySpace, class... Rest>
void conv3dBackwardData(const HaloTensor<T, MemorySpace>& dy, const Rest&... rest) {
  conv3dBackwardData(typename MemorySpace::execution_space(), dy, rest...);
}
template <class T, class MemorySpace, class... Rest>
void conv3dBackwardFilter(const HaloTensor<T, MemorySpace>& x, const Rest&... rest) {
  conv3dBackwardFilter(typename MemorySpace::execution_space(), x, rest...);
}

// Explicit instantiations (kernels/Conv3d.cpp) for float and double on the default execution space.
#define HALO3D_CONV3D_INSTANTIATE(PREFIX, T, E)                                               \
  PREFIX template void conv3dForward<E, T>(                                                   \
      const E&, const Tensor<T, E>&, const Conv3dWeightsOn<T, E>&, const Conv3dBiasOn<T, E>&, \
      const WindowGeometry&, const Tensor<T, E>&, const Box&, KernelPath);                    \
  PREFIX template void conv3dBackwardData<E, T>(                                              \
      const E&, const Tensor<T, E>&, const Conv3dWeightsOn<T, E>&, const WindowGeometry&,     \
      const Tensor<T, E>&, const Box&, const Box&, KernelPath);                               \
  PREFIX template void conv3dBackwardFilter<E, T>(                                            \
      const E&, const Tensor<T, E>&, const Tensor<T, E>&, const WindowGeometry&,              \
      const Conv3dWeightsGradOn<T, E>&, const Conv3dBiasGradOn<T, E>&, const Box&, bool,      \
      KernelPath);

HALO3D_CONV3D_INSTANTIATE(extern, float, Kokkos::DefaultExecutionSpace)
HALO3D_CONV3D_INSTANTIATE(extern, double, Kokkos::DefaultExecutionSpace)

}  // namespace halo3d::kernels
