#pragma once
// Definitions of the ConvTranspose3d.hpp kernels: shape checks at the boundary, then the host code
// (KernelPath::Fastest on a host execution space) or the device code. impl::
// convTranspose3dBackwardFilter also takes the team size of the device code's team kernels, so that
// the tests run them on the host backend with one and several threads per team. Included by
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

// Runs the gather p (weights, bias and axes set) from `src` into the cells `dst_box` of `dst`.
template <class ExecSpace, class T, class MemorySpace>
void runGather(const ExecSpace& exec, GatherConv<T, MemorySpace> p,
               const HaloTensor<T, MemorySpace>& src, const HaloTensor<T, MemorySpace>& dst,
               const Box& dst_box, KernelPath path) {
  if (dst_box.empty()) return;
  p.src = src.view();
  p.src_shift = localShift(src);
  p.dst = dst.view();
  p.dst_shift = localShift(dst);
  p.dst_box = dst_box;
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
  requireTransposedWindow("convTranspose3dBackwardFilter", g, x, dy, "weight gradient", dw,
                          "bias gradient", db, out_box);
  FilterGrad<T, MemorySpace> p;
  p.x = x.view();
  p.x_shift = localShift(x);
  p.dy = dy.view();
  p.dy_shift = localShift(dy);
  p.box = out_box;
  p.axes = forwardAxes(g, x.block().globalExtents());
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
  impl::requireTransposedWindow("convTranspose3dForward", g, x, y, "weights", w, "bias", b,
                                out_box);
  impl::GatherConv<T, MemorySpace> p;
  p.w = w;
  p.bias = b;
  p.axes = impl::forwardAxes(g, x.block().globalExtents());
  impl::runGather(exec, p, x, y, out_box, path);
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardData(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& dx, const Box& dx_box,
    const Box& dy_box, KernelPath path) {
  impl::requireTransposedBackwardData("convTranspose3dBackwardData", g, dx, dy, w, dx_box, dy_box);
  impl::GatherConv<T, MemorySpace> p;
  p.w = w;
  p.swap_channels = true;
  p.axes = impl::backwardDataAxes(g, dy_box);
  impl::runGather(exec, p, dy, dx, dx_box, path);
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
