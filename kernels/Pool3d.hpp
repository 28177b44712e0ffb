#pragma once
// 3D max and average pooling with PyTorch's semantics (MaxPool3d; AvgPool3d with
// count_include_pad=True; ceil_mode=False), forward and backward, any window, stride, padding and
// dilation (`WindowGeometry`).
//
// Along one dimension, output cell o pools input cells o s - p + k dil, k < kernel. Tensors:
//   x, dx   (N, C, D, H, W)     read within the allocation (owned + ghosts)
//   y, dy   (N, C, D', H', W')  D' = g.outputExtent(0, D) = (D + 2p - dil (k - 1) - 1) / s + 1
//   argmax  (N, C, D', H', W')  index_t: the *global* linear spatial index (d H + h) W + w of the
//                               input cell that won, so that it means the same on every block
//
// Padding: PyTorch pads max pooling with -inf and average pooling with zeros that count in the
// divisor. So max pooling compares only the cells inside the *global* volume (decided from global
// coordinates, never from the zero ghosts past the boundary, which must not win over negative
// data), while ghost cells inside the volume (a neighbour's data) take part like owned ones.
// Average pooling sums the cells inside the volume and always divides by kD kH kW. Cells past the
// volume are never read, so a block only needs ghosts toward its neighbours: the input cells of
// output cells [o0, o1) are g.inputWindow(o0, o1) clipped to the volume.
//
// Backward in pull form: for every input cell i of dx_box,
//   dx(i) = sum over the output cells o in dy_box whose window holds i of
//           dy(o) / (kD kH kW)        (average)
//           dy(o) [argmax(o) == i]    (max),
// that is, dx(i) reads the cells o of dy_box with o s - p <= i <= o s - p + dil (k - 1) (per
// dimension).
//
// Paths (core/KernelPath.hpp): the host code walks (sample, channel, d) planes through row
// pointers, vectorised across the cells of a row for dilation 1 and stride and width 1-3 along W
// (max: compares in window order; average forward: D, then H, then W sums for up to 3 taps along D
// and H; backward: dense dx rows for max k2s2 and average k3s2p1 along W, dy spread over the W
// taps otherwise; average pooling with channels a multiple of 16, float on AVX-512 hosts, forward
// on planes up to 32x32: 16 channels at a time, the same per-cell order); the device code is one
// thread per cell, neighbouring threads on neighbouring w.
// Both give the same argmax, and each the same bits for a cell whatever box it is computed in.
//
// T may be bf16 (ComputeType.hpp): values load as float, comparisons, sums and the average's scale
// are in float (float accumulators and row buffers), each output rounds once to bf16. So each path
// gives its float result rounded to bf16, and max pooling picks the same cell as on the float
// values and returns it unchanged.

#include <Kokkos_Core.hpp>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/ComputeType.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

// Throws ShapeError unless g is a valid window whose padding is at most half its effective extent
// dil (k - 1) + 1 along every dimension (PyTorch's rule).
void validatePool3d(const WindowGeometry& g);

// The dx size (bytes of one host call) from which the backward passes store dx around the caches
// (non-temporal stores): max pooling's dense k2s2 planes (16 MiB by default) and average pooling's
// k3s2p1 rows (off by default: infinity). Process-wide, for benchmarks that compare the two kinds
// of store; not thread-safe against running kernels.
struct PoolStreamBytes {
  double max_pool;
  double avg_pool;
};
PoolStreamBytes poolStreamBytes();
void setPoolStreamBytes(const PoolStreamBytes& bytes);

// Max pooling forward: assigns y(n, c, o) = max of x over the window of o inside the volume, and
// argmax(n, c, o) = the global linear index of the first maximum in window order (kd, kh, kw), for
// every sample, channel and o in `out_box`. Requires x (N, C, ...), y and argmax (N, C,
// g.outputExtents(x's volume)) with the same samples, out_box inside y's owned cells and argmax's
// allocation, and the input cells out_box reads inside x's allocation. Throws ShapeError naming the
// tensors otherwise.
template <class ExecSpace, class T, class MemorySpace>
void maxPool3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                      const WindowGeometry& g, const HaloTensor<T, MemorySpace>& y,
                      const HaloTensor<index_t, MemorySpace>& argmax, const Box& out_box,
                      KernelPath path = KernelPath::Fastest);

// Max pooling backward (pull form): assigns dx(n, c, i) = sum of dy(n, c, o) over the o in dy_box
// with argmax(n, c, o) == i, for every i in dx_box. Requires dx_box inside dx's allocation and the
// input volume, dy_box inside the allocations of dy and argmax and inside the output volume.
template <class ExecSpace, class T, class MemorySpace>
void maxPool3dBackward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
                       const HaloTensor<index_t, MemorySpace>& argmax, const WindowGeometry& g,
                       const HaloTensor<T, MemorySpace>& dx, const Box& dx_box, const Box& dy_box,
                       KernelPath path = KernelPath::Fastest);

// Average pooling forward: assigns y(n, c, o) = (sum of x over the window of o inside the volume) /
// (kD kH kW) for every o in `out_box`. Requirements as maxPool3dForward, without argmax.
template <class ExecSpace, class T, class MemorySpace>
void avgPool3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                      const WindowGeometry& g, const HaloTensor<T, MemorySpace>& y,
                      const Box& out_box, KernelPath path = KernelPath::Fastest);

// Average pooling backward (pull form): assigns dx(n, c, i) = (sum of dy(n, c, o) over the o in
// dy_box whose window holds i) / (kD kH kW) for every i in dx_box. Requirements as
// maxPool3dBackward, without argmax.
template <class ExecSpace, class T, class MemorySpace>
void avgPool3dBackward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
                       const WindowGeometry& g, const HaloTensor<T, MemorySpace>& dx,
                       const Box& dx_box, const Box& dy_box, KernelPath path = KernelPath::Fastest);

// Overloads on the default instance of the tensors' execution space, and with dy_box = dy's owned
// cells.
template <class T, class MemorySpace>
void maxPool3dForward(const HaloTensor<T, MemorySpace>& x, const WindowGeometry& g,
                      const HaloTensor<T, MemorySpace>& y,
                      const HaloTensor<index_t, MemorySpace>& argmax, const Box& out_box) {
  maxPool3dForward(typename MemorySpace::execution_space(), x, g, y, argmax, out_box);
}

template <class ExecSpace, class T, class MemorySpace>
void maxPool3dBackward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
                       const HaloTensor<index_t, MemorySpace>& argmax, const WindowGeometry& g,
                       const HaloTensor<T, MemorySpace>& dx, const Box& dx_box) {
  maxPool3dBackward(exec, dy, argmax, g, dx, dx_box, dy.block().owned());
}

template <class T, class MemorySpace>
void maxPool3dBackward(const HaloTensor<T, MemorySpace>& dy,
                       const HaloTensor<index_t, MemorySpace>& argmax, const WindowGeometry& g,
                       const HaloTensor<T, MemorySpace>& dx, const Box& dx_box) {
  maxPool3dBackward(typename MemorySpace::execution_space(), dy, argmax, g, dx, dx_box,
                    dy.block().owned());
}

template <class T, class MemorySpace>
void avgPool3dForward(const HaloTensor<T, MemorySpace>& x, const WindowGeometry& g,
                      const HaloTensor<T, MemorySpace>& y, const Box& out_box) {
  avgPool3dForward(typename MemorySpace::execution_space(), x, g, y, out_box);
}

template <class ExecSpace, class T, class MemorySpace>
void avgPool3dBackward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
                       const WindowGeometry& g, const HaloTensor<T, MemorySpace>& dx,
                       const Box& dx_box) {
  avgPool3dBackward(exec, dy, g, dx, dx_box, dy.block().owned());
}

template <class T, class MemorySpace>
void avgPool3dBackward(const HaloTensor<T, MemorySpace>& dy, const WindowGeometry& g,
                       const HaloTensor<T, MemorySpace>& dx, const Box& dx_box) {
  avgPool3dBackward(typename MemorySpace::execution_space(), dy, g, dx, dx_box, dy.block().owned());
}

// Explicit instantiations (kernels/Pool3d.cpp) for float, double and bf16 on the default execution
// space.
#define HALO3D_POOL3D_INSTANTIATE(EXTERN, T, EXEC)                                              \
  EXTERN template void maxPool3dForward<EXEC, T, EXEC::memory_space>(                           \
      const EXEC&, const HaloTensor<T, EXEC::memory_space>&, const WindowGeometry&,             \
      const HaloTensor<T, EXEC::memory_space>&, const HaloTensor<index_t, EXEC::memory_space>&, \
      const Box&, KernelPath);                                                                  \
  EXTERN template void maxPool3dBackward<EXEC, T, EXEC::memory_space>(                          \
      const EXEC&, const HaloTensor<T, EXEC::memory_space>&,                                    \
      const HaloTensor<index_t, EXEC::memory_space>&, const WindowGeometry&,                    \
      const HaloTensor<T, EXEC::memory_space>&, const Box&, const Box&, KernelPath);            \
  EXTERN template void avgPool3dForward<EXEC, T, EXEC::memory_space>(                           \
      const EXEC&, const HaloTensor<T, EXEC::memory_space>&, const WindowGeometry&,             \
      const HaloTensor<T, EXEC::memory_space>&, const Box&, KernelPath);                        \
  EXTERN template void avgPool3dBackward<EXEC, T, EXEC::memory_space>(                          \
      const EXEC&, const HaloTensor<T, EXEC::memory_space>&, const WindowGeometry&,             \
      const HaloTensor<T, EXEC::memory_space>&, const Box&, const Box&, KernelPath);

HALO3D_POOL3D_INSTANTIATE(extern, float, Kokkos::DefaultExecutionSpace)
HALO3D_POOL3D_INSTANTIATE(extern, double, Kokkos::DefaultExecutionSpace)
HALO3D_POOL3D_INSTANTIATE(extern, ::halo3d::bf16, Kokkos::DefaultExecutionSpace)

}  // namespace halo3d::kernels
