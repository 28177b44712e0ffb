#pragma once
// Transposed 3D convolution (PyTorch ConvTranspose3d, one group): forward, backward-data and
// backward-filter with the bias gradient, for any kernel, stride, padding, dilation and
// output_padding.
//
// Along one dimension, input cell i and tap k feed output cell  o = i * s - p + k * dil,  so the
// output extent is (E - 1) s - 2p + dil (k - 1) + output_padding + 1. Tensors (README.md
// conventions):
//   x  (N, I, D, H, W)         input, read within its allocation (owned + ghosts)
//   w  (I, O, kD, kH, kW)      weights, PyTorch's layout for transposed convolutions
//   b  (O) or extent 0         bias ("no bias" when empty)
//   y  (N, O, D', H', W')      output, D' = outputExtent(D) and so on
//
// Which cells each kernel reads (all in global coordinates, per dimension):
// - Forward, output cells [o0, o1): input cells inputWindow(o0, o1) =
//   [ceil((o0 + p - dil (k - 1)) / s), floor((o1 - 1 + p) / s) + 1), clipped to the input volume.
//   Cells past the volume contribute zero and are never read, so a block only needs ghosts toward
//   its neighbours (convTranspose3dHaloWidths*).
// - Backward-data, input cells [i0, i1): output cells outputWindow(i0, i1) = [i0 s - p,
//   (i1 - 1) s - p + dil (k - 1) + 1) that also lie in dy_box. dx(i) is the sum over exactly those
//   dy cells o = i s - p + k dil in dy_box, so a dx cell whose window leaves dy_box gets only part
//   of its gradient; the caller sums the parts (HaloExchange::scatter) or exchanges dy halos and
//   widens dy_box.
// - Backward-filter, output cells out_box: the same x cells as forward. The box is one of *output*
//   cells, as in forward, so the partials over the owned outputs of every block sum to the global
//   gradient.
// The geometry type and the ghost-width helpers live in ConvTranspose3dGeometry.hpp.
//
// Paths (core/KernelPath.hpp): the host code blocks destination cells that share their weights
// and holds their sums in registers; the device code is one thread per destination element
// (forward, backward-data) and one team per weight (backward-filter).
//
// Worked example, the U-Net upsampling k = 2, s = 2, p = 0: output cells [2a, 2b) read input cells
// [a, b), each output cell exactly one input cell per dimension, and a block split evenly needs no
// ghosts at all.

#include <Kokkos_Core.hpp>

#include <array>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/ConvTranspose3dGeometry.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

// Parameter view types, spelled out so that callers' non-const views convert at the call.
template <class T, class MemorySpace>
struct ConvTranspose3dViews {
  using weights_type =
      Kokkos::View<const T*****, Kokkos::LayoutRight, MemorySpace>;            // (I, O, kD, kH, kW)
  using bias_type = Kokkos::View<const T*, Kokkos::LayoutRight, MemorySpace>;  // (O) or extent 0
  using weights_grad_type =
      Kokkos::View<T*****, Kokkos::LayoutRight, MemorySpace>;                 // (I, O, kD, kH, kW)
  using bias_grad_type = Kokkos::View<T*, Kokkos::LayoutRight, MemorySpace>;  // (O) or extent 0
};

// Forward: assigns y(n, o, q) = b(o) + sum_{i, k} x(n, i, (q + p - k dil) / s) w(i, o, k) over the
// taps where the division is exact and lands in the input volume, for every sample and every q in
// `out_box`. Requires: x (N, I, ...), w (I, O, kD, kH, kW) matching g.window.kernel, b (O) or
// empty, y (N, O, ...) with y's volume = g.outputExtents(x's volume), the same samples, out_box
// inside y's owned cells, and the input cells out_box reads inside x's allocation. Throws
// ShapeError naming the tensors otherwise.
template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                            const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
                            const typename ConvTranspose3dViews<T, MemorySpace>::bias_type& b,
                            const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& y,
                            const Box& out_box, KernelPath path = KernelPath::Fastest);

// Backward-data (pull form): assigns, for every sample and every input cell i in `dx_box`,
//   dx(n, c, i) = sum_{o, k} dy(n, o, i s - p + k dil) w(c, o, k)   over the taps whose output cell
//   is in dy_box.
// Requires: dy (N, O, ...), dx (N, I, ...) laid out like x, dx_box inside dx's allocation and the
// input volume (it may cover ghost cells of dx), dy_box inside dy's allocation and the output
// volume. ShapeError otherwise. The overload without dy_box uses dy's owned cells.
template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardData(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& dx, const Box& dx_box,
    const Box& dy_box, KernelPath path = KernelPath::Fastest);

// Backward-filter: the partial gradients over the *output* cells of `out_box`, all samples:
//   dw(i, o, k) (+)= sum_{n, q in out_box} x(n, i, (q + p - k dil) / s) dy(n, o, q)
//                    (over the exact taps that land in the input volume)
//   db(o) (+)= sum_{n, q in out_box} dy(n, o, q)   (skipped if db is empty)
// `accumulate` adds to dw and db; otherwise they are overwritten. Requires out_box inside dy's
// owned cells and the input cells it reads inside x's allocation, as forward. ShapeError otherwise.
template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardFilter(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
    const HaloTensor<T, MemorySpace>& dy, const ConvTranspose3dGeometry& g,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_grad_type& dw,
    const typename ConvTranspose3dViews<T, MemorySpace>::bias_grad_type& db, const Box& out_box,
    bool accumulate, KernelPath path = KernelPath::Fastest);

// Overloads on the default instance of the tensors' execution space; backward-data also defaults
// dy_box to dy's owned cells.
template <class T, class MemorySpace>
void convTranspose3dForward(const HaloTensor<T, MemorySpace>& x,
                            const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
                            const typename ConvTranspose3dViews<T, MemorySpace>::bias_type& b,
                            const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& y,
                            const Box& out_box) {
  convTranspose3dForward(typename MemorySpace::execution_space(), x, w, b, g, y, out_box);
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardData(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& dx, const Box& dx_box) {
  convTranspose3dBackwardData(exec, dy, w, g, dx, dx_box, dy.block().owned());
}

template <class T, class MemorySpace>
void convTranspose3dBackwardData(
    const HaloTensor<T, MemorySpace>& dy,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& dx, const Box& dx_box,
    const Box& dy_box) {
  convTranspose3dBackwardData(typename MemorySpace::execution_space(), dy, w, g, dx, dx_box,
                              dy_box);
}

template <class T, class MemorySpace>
void convTranspose3dBackwardData(
    const HaloTensor<T, MemorySpace>& dy,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& dx, const Box& dx_box) {
  convTranspose3dBackwardData(typename MemorySpace::execution_space(), dy, w, g, dx, dx_box,
                              dy.block().owned());
}

template <class T, class MemorySpace>
void convTranspose3dBackwardFilter(
    const HaloTensor<T, MemorySpace>& x, const HaloTensor<T, MemorySpace>& dy,
    const ConvTranspose3dGeometry& g,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_grad_type& dw,
    const typename ConvTranspose3dViews<T, MemorySpace>::bias_grad_type& db, const Box& out_box,
    bool accumulate) {
  convTranspose3dBackwardFilter(typename MemorySpace::execution_space(), x, dy, g, dw, db, out_box,
                                accumulate);
}

// Explicit instantiations (kernels/ConvTranspose3d.cpp) for float and double on the default
// execution space.
#define HALO3D_CONV_TRANSPOSE3D_INSTANTIATE(EXTERN, T, EXEC)                                \
  EXTERN template void convTranspose3dForward<EXEC, T, EXEC::memory_space>(                 \
      const EXEC&, const HaloTensor<T, EXEC::memory_space>&,                                \
      const ConvTranspose3dViews<T, EXEC::memory_space>::weights_type&,                     \
      const ConvTranspose3dViews<T, EXEC::memory_space>::bias_type&,                        \
      const ConvTranspose3dGeometry&, const HaloTensor<T, EXEC::memory_space>&, const Box&, \
      KernelPath);                                                                          \
  EXTERN template void convTranspose3dBackwardData<EXEC, T, EXEC::memory_space>(            \
      const EXEC&, const HaloTensor<T, EXEC::memory_space>&,                                \
      const ConvTranspose3dViews<T, EXEC::memory_space>::weights_type&,                     \
      const ConvTranspose3dGeometry&, const HaloTensor<T, EXEC::memory_space>&, const Box&, \
      const Box&, KernelPath);                                                              \
  EXTERN template void convTranspose3dBackwardFilter<EXEC, T, EXEC::memory_space>(          \
      const EXEC&, const HaloTensor<T, EXEC::memory_space>&,                                \
      const HaloTensor<T, EXEC::memory_space>&, const ConvTranspose3dGeometry&,             \
      const ConvTranspose3dViews<T, EXEC::memory_space>::weights_grad_type&,                \
      const ConvTranspose3dViews<T, EXEC::memory_space>::bias_grad_type&, const Box&, bool, \
      KernelPath);

HALO3D_CONV_TRANSPOSE3D_INSTANTIATE(extern, float, Kokkos::DefaultExecutionSpace)
HALO3D_CONV_TRANSPOSE3D_INSTANTIATE(extern, double, Kokkos::DefaultExecutionSpace)

}  // namespace halo3d::kernels
