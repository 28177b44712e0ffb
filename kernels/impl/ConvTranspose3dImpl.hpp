#pragma once
// Definitions of the ConvTranspose3d.hpp kernels: shape checks at the boundary, then the host code
// (KernelPath::Fastest on a host execution space) or the device code. The impl:: entry points also
// take the team size of the device code's team kernels (backward-filter), so that the tests run
// them on the host backend with one and several threads per team. Included by
// kernels/ConvTranspose3d.cpp (the instantiations) and by tests.

#include <Kokkos_Core.hpp>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/KernelPath.hpp"
#include "halo3d/kernels/ConvTranspose3d.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dChecks.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dFilter.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dGather.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dTaps.hpp"
#include "halo3d/kernels/impl/TeamTuning.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels::impl {

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                            const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
                            const typename ConvTranspose3dViews<T, MemorySpace>::bias_type& b,
                            const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& y,
                            const Box& out_box, KernelPath path) {
  constexpr const char* kernel = "convTranspose3dForward";
  requireTransposedShapes(kernel, g, x, y);
  requireTransposedWeights(kernel, "weights", w, x.block().channels(), y.block().channels(), g);
  requireBiasShape(kernel, "bias", b, y.block().channels());
  requireOwned(kernel, y, out_box);
  requireClippedWindow(kernel, g, x, out_box);
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
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) return gatherConvHost(exec, p);
  }
  gatherConvDevice(exec, p);
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardData(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& dx, const Box& dx_box,
    const Box& dy_box, KernelPath path) {
  constexpr const char* kernel = "convTranspose3dBackwardData";
  requireTransposedShapes(kernel, g, dx, dy);
  requireTransposedWeights(kernel, "weights", w, dx.block().channels(), dy.block().channels(), g);
  requireInVolume(kernel, dx, dx_box, "input-gradient box");
  requireInVolume(kernel, dy, dy_box, "output-gradient box dy_box");
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
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) return gatherConvHost(exec, p);
  }
  gatherConvDevice(exec, p);
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardFilter(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
    const HaloTensor<T, MemorySpace>& dy, const ConvTranspose3dGeometry& g,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_grad_type& dw,
    const typename ConvTranspose3dViews<T, MemorySpace>::bias_grad_type& db, const Box& out_box,
    bool accumulate, KernelPath path, const TeamTuning& tuning) {
  constexpr const char* kernel = "convTranspose3dBackwardFilter";
  requireTransposedShapes(kernel, g, x, dy);
  requireTransposedWeights(kernel, "weight gradient", dw, x.block().channels(),
                           dy.block().channels(), g);
  requireBiasShape(kernel, "bias gradient", db, dy.block().channels());
  requireOwned(kernel, dy, out_box);
  requireClippedWindow(kernel, g, x, out_box);
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
  p.tuning = tuning;
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) return filterGradHost(exec, p);
  }
  filterGradDevice(exec, p);
}

}  // namespace halo3d::kernels::impl

namespace halo3d::kernels {

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                            const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
                            const typename ConvTranspose3dViews<T, MemorySpace>::bias_type& b,
                            const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& y,
                            const Box& out_box, KernelPath path) {
  impl::convTranspose3dForward(exec, x, w, b, g, y, out_box, path);
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardData(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& dx, const Box& dx_box,
    const Box& dy_box, KernelPath path) {
  impl::convTranspose3dBackwardData(exec, dy, w, g, dx, dx_box, dy_box, path);
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardFilter(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
    const HaloTensor<T, MemorySpace>& dy, const ConvTranspose3dGeometry& g,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_grad_type& dw,
    const typename ConvTranspose3dViews<T, MemorySpace>::bias_grad_type& db, const Box& out_box,
    bool accumulate, KernelPath path) {
  impl::convTranspose3dBackwardFilter(exec, x, dy, g, dw, db, out_box, accumulate, path,
                                      impl::TeamTuning{});
}

}  // namespace halo3d::kernels
