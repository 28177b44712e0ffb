#pragma once
// Definitions of the ConvTranspose3d.hpp kernels: shape checks at the boundary, then the host path
// on host-accessible execution spaces and the portable path elsewhere. impl:: entry points take the
// path, so that tests run the device kernels on the host too.

#include <Kokkos_Core.hpp>

#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/ConvTranspose3d.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dFilter.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dGather.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dTaps.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels::impl {

enum class KernelPath { Fastest, Portable };

template <class ExecSpace>
constexpr bool runsOnHost() {
  return Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
}

// `input`'s volume maps to `output`'s volume through g, and both hold the same samples.
template <class In, class Out>
void requireTransposedShapes(const char* kernel, const ConvTranspose3dGeometry& g, const In& input,
                             const Out& output) {
  g.validate();
  requireSameSamples(kernel, input, output);
  const Extents3 expected = g.outputExtents(input.block().globalExtents());
  require<ShapeError>(output.block().globalExtents() == expected, kernel, ": ", describe(output),
                      " has volume ", output.block().globalExtents(),
                      " but a transposed convolution (kernel ", g.window.kernel, ", stride ",
                      g.window.stride, ", padding ", g.window.padding, ", dilation ",
                      g.window.dilation, ", output_padding ", g.output_padding, ") of ",
                      describe(input), " gives ", expected);
}

template <class Weights>
void requireWeights(const char* kernel, const char* name, const Weights& w, index_t in_channels,
                    index_t out_channels, const ConvTranspose3dGeometry& g) {
  const std::array<index_t, 5> found{index_t(w.extent(0)), index_t(w.extent(1)),
                                     index_t(w.extent(2)), index_t(w.extent(3)),
                                     index_t(w.extent(4))};
  const std::array<index_t, 5> expected{in_channels, out_channels, g.window.kernel[0],
                                        g.window.kernel[1], g.window.kernel[2]};
  require<ShapeError>(found == expected, kernel, ": ", name, " '", w.label(), "' has extents ",
                      found, " but (I, O, kD, kH, kW) = ", expected,
                      " is expected from the tensors' channels and the kernel");
}

template <class Bias>
void requireBias(const char* kernel, const char* name, const Bias& b, index_t out_channels) {
  require<ShapeError>(b.extent(0) == 0 || index_t(b.extent(0)) == out_channels, kernel, ": ", name,
                      " '", b.label(), "' has extent ", b.extent(0), " but the output has ",
                      out_channels, " channels (use extent 0 for no bias)");
}

// The input cells that output cells `out_box` read, clipped to the input volume, must be allocated
// in x.
template <class Tensor>
void requireForwardInput(const char* kernel, const ConvTranspose3dGeometry& g, const Tensor& x,
                         const Box& out_box) {
  if (out_box.empty()) return;
  const Extents3 e = x.block().globalExtents();
  Extents3 lo, hi;
  for (int d = 0; d < 3; ++d) {
    const auto win = g.inputWindow(d, out_box.min(d), out_box.max(d));
    lo[d] = std::max<index_t>(win[0], 0);
    hi[d] = std::max(lo[d], std::min(win[1], e[d]));
  }
  requireAllocated(kernel, x, Box(lo, hi),
                   concat("input cells read by output box ", out_box, ":").c_str());
}

// `box` lies in the allocation of `t` and inside its global volume.
template <class Tensor>
void requireAllocatedInVolume(const char* kernel, const Tensor& t, const Box& box,
                              const char* what) {
  require<ShapeError>(Box::fromExtents(t.block().globalExtents()).contains(box), kernel, ": ", what,
                      " ", box, " reaches past the volume ", t.block().globalExtents(), " of ",
                      describe(t));
  requireAllocated(kernel, t, box, what);
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                            const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
                            const typename ConvTranspose3dViews<T, MemorySpace>::bias_type& b,
                            const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& y,
                            const Box& out_box, KernelPath path) {
  constexpr const char* kernel = "convTranspose3dForward";
  requireTransposedShapes(kernel, g, x, y);
  requireWeights(kernel, "weights", w, x.block().channels(), y.block().channels(), g);
  requireBias(kernel, "bias", b, y.block().channels());
  requireOwned(kernel, y, out_box);
  requireForwardInput(kernel, g, x, out_box);
  if (out_box.empty()) return;
  GatherConv<T, MemorySpace> p;
  p.src = x.view();
  p.src_shift = localShift(x);
  p.w = w;
  p.bias = b;
  p.dst = y.view();
  p.dst_shift = localShift(y);
  p.dst_box = out_box;
  const Extents3 e = x.block().globalExtents();
  for (int d = 0; d < 3; ++d)
    p.axes[d] = forwardAxis(g, d, e[d]);
  if constexpr (runsOnHost<ExecSpace>()) {
    if (path == KernelPath::Fastest) return gatherConvHost(exec, p);
  }
  gatherConvPortable(exec, p);
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardData(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& dx, const Box& dx_box,
    const Box& dy_box, KernelPath path) {
  constexpr const char* kernel = "convTranspose3dBackwardData";
  requireTransposedShapes(kernel, g, dx, dy);
  requireWeights(kernel, "weights", w, dx.block().channels(), dy.block().channels(), g);
  requireAllocatedInVolume(kernel, dx, dx_box, "input-gradient box");
  requireAllocatedInVolume(kernel, dy, dy_box, "output-gradient box dy_box");
  if (dx_box.empty()) return;
  GatherConv<T, MemorySpace> p;
  p.src = dy.view();
  p.src_shift = localShift(dy);
  p.w = w;
  p.swap_channels = true;
  p.dst = dx.view();
  p.dst_shift = localShift(dx);
  p.dst_box = dx_box;
  for (int d = 0; d < 3; ++d)
    p.axes[d] = backwardDataAxis(g, d, dy_box);
  if constexpr (runsOnHost<ExecSpace>()) {
    if (path == KernelPath::Fastest) return gatherConvHost(exec, p);
  }
  gatherConvPortable(exec, p);
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardFilter(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
    const HaloTensor<T, MemorySpace>& dy, const ConvTranspose3dGeometry& g,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_grad_type& dw,
    const typename ConvTranspose3dViews<T, MemorySpace>::bias_grad_type& db, const Box& out_box,
    bool accumulate, KernelPath path) {
  constexpr const char* kernel = "convTranspose3dBackwardFilter";
  requireTransposedShapes(kernel, g, x, dy);
  requireWeights(kernel, "weight gradient", dw, x.block().channels(), dy.block().channels(), g);
  requireBias(kernel, "bias gradient", db, dy.block().channels());
  requireOwned(kernel, dy, out_box);
  requireForwardInput(kernel, g, x, out_box);
  FilterGrad<T, MemorySpace> p;
  p.x = x.view();
  p.x_shift = localShift(x);
  p.dy = dy.view();
  p.dy_shift = localShift(dy);
  p.box = out_box;
  const Extents3 e = x.block().globalExtents();
  for (int d = 0; d < 3; ++d)
    p.axes[d] = forwardAxis(g, d, e[d]);
  p.dw = dw;
  p.db = db;
  p.accumulate = accumulate;
  if constexpr (runsOnHost<ExecSpace>()) {
    if (path == KernelPath::Fastest) return filterGradHost(exec, p);
  }
  filterGradPortable(exec, p);
}

}  // namespace halo3d::kernels::impl

namespace halo3d::kernels {

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                            const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
                            const typename ConvTranspose3dViews<T, MemorySpace>::bias_type& b,
                            const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& y,
                            const Box& out_box) {
  impl::convTranspose3dForward(exec, x, w, b, g, y, out_box, impl::KernelPath::Fastest);
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardData(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& dx, const Box& dx_box,
    const Box& dy_box) {
  impl::convTranspose3dBackwardData(exec, dy, w, g, dx, dx_box, dy_box, impl::KernelPath::Fastest);
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardFilter(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
    const HaloTensor<T, MemorySpace>& dy, const ConvTranspose3dGeometry& g,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_grad_type& dw,
    const typename ConvTranspose3dViews<T, MemorySpace>::bias_grad_type& db, const Box& out_box,
    bool accumulate) {
  impl::convTranspose3dBackwardFilter(exec, x, dy, g, dw, db, out_box, accumulate,
                                      impl::KernelPath::Fastest);
}

}  // namespace halo3d::kernels
