#pragma once
// Naive reference of 3D pooling (kernels/Pool3d.hpp): the same signatures and checks, plain host
// loops. Backward is written in scatter form (each output cell hands its gradient to its window or
// its argmax), independent of the optimized kernels' pull form. Host-accessible memory only; it
// fences `exec` first.

#include <Kokkos_Core.hpp>

#include <limits>

#include "halo3d/kernels/Pool3d.hpp"
#include "halo3d/kernels/impl/Pool3dChecks.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels::reference {

namespace pool_detail {

template <class Tensor>
auto& at(const Tensor& t, index_t n, index_t c, const Extents3& global) {
  const Extents3 l = t.toLocal(global);
  return t.view()(n, c, l[0], l[1], l[2]);
}

// Calls f(input cell) for every tap of output cell o's window, in window order (kd, kh, kw), inside
// or outside the volume.
template <class F>
void forEachTap(const WindowGeometry& g, const Extents3& o, const F& f) {
  for (index_t kd = 0; kd < g.kernel[0]; ++kd)
    for (index_t kh = 0; kh < g.kernel[1]; ++kh)
      for (index_t kw = 0; kw < g.kernel[2]; ++kw)
        f(Extents3{o[0] * g.stride[0] - g.padding[0] + kd * g.dilation[0],
                   o[1] * g.stride[1] - g.padding[1] + kh * g.dilation[1],
                   o[2] * g.stride[2] - g.padding[2] + kw * g.dilation[2]});
}

template <class F>
void forEachCell(index_t samples, index_t channels, const Box& box, const F& f) {
  for (index_t n = 0; n < samples; ++n)
    for (index_t c = 0; c < channels; ++c)
      for (index_t d = box.min(0); d < box.max(0); ++d)
        for (index_t h = box.min(1); h < box.max(1); ++h)
          for (index_t w = box.min(2); w < box.max(2); ++w)
            f(n, c, Extents3{d, h, w});
}

template <class MemorySpace>
void requireHost() {
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible,
                "kernels::reference runs on the host: tensors must be host-accessible");
}

}  // namespace pool_detail

template <class ExecSpace, class T, class MemorySpace>
void maxPool3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                      const WindowGeometry& g, const HaloTensor<T, MemorySpace>& y,
                      const HaloTensor<index_t, MemorySpace>& argmax, const Box& out_box) {
  pool_detail::requireHost<MemorySpace>();
  constexpr const char* kernel = "reference::maxPool3dForward";
  impl::requirePoolShapes(kernel, g, x, y);
  impl::requireOwned(kernel, y, out_box);
  impl::requireClippedWindow(kernel, g, x, out_box);
  impl::requireArgmax(kernel, argmax, y, out_box);
  exec.fence();
  const Extents3 e = x.block().globalExtents();
  const Box volume = Box::fromExtents(e);
  pool_detail::forEachCell(y.block().localSamples(), y.block().channels(), out_box,
                           [&](index_t n, index_t c, const Extents3& o) {
                             T best = -std::numeric_limits<T>::infinity();
                             index_t where = -1;
                             pool_detail::forEachTap(g, o, [&](const Extents3& i) {
                               if (!volume.contains(i)) return;  // PyTorch pads with -inf
                               const T v = pool_detail::at(x, n, c, i);
                               if (where < 0 || v > best) {
                                 best = v;
                                 where = (i[0] * e[1] + i[1]) * e[2] + i[2];
                               }
                             });
                             pool_detail::at(y, n, c, o) = best;
                             pool_detail::at(argmax, n, c, o) = where;
                           });
}

template <class ExecSpace, class T, class MemorySpace>
void maxPool3dBackward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
                       const HaloTensor<index_t, MemorySpace>& argmax, const WindowGeometry& g,
                       const HaloTensor<T, MemorySpace>& dx, const Box& dx_box, const Box& dy_box) {
  pool_detail::requireHost<MemorySpace>();
  constexpr const char* kernel = "reference::maxPool3dBackward";
  impl::requirePoolShapes(kernel, g, dx, dy);
  impl::requireInVolume(kernel, dx, dx_box, "input-gradient box");
  impl::requireInVolume(kernel, dy, dy_box, "output-gradient box dy_box");
  impl::requireArgmax(kernel, argmax, dy, dy_box);
  exec.fence();
  const Extents3 e = dx.block().globalExtents();
  const index_t N = dx.block().localSamples(), C = dx.block().channels();
  pool_detail::forEachCell(N, C, dx_box, [&](index_t n, index_t c, const Extents3& i) {
    pool_detail::at(dx, n, c, i) = T(0);
  });
  pool_detail::forEachCell(N, C, dy_box, [&](index_t n, index_t c, const Extents3& o) {
    const index_t a = pool_detail::at(argmax, n, c, o);
    const Extents3 i{a / (e[1] * e[2]), (a / e[2]) % e[1], a % e[2]};
    if (dx_box.contains(i)) pool_detail::at(dx, n, c, i) += pool_detail::at(dy, n, c, o);
  });
}

template <class ExecSpace, class T, class MemorySpace>
void avgPool3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                      const WindowGeometry& g, const HaloTensor<T, MemorySpace>& y,
                      const Box& out_box) {
  pool_detail::requireHost<MemorySpace>();
  constexpr const char* kernel = "reference::avgPool3dForward";
  impl::requirePoolShapes(kernel, g, x, y);
  impl::requireOwned(kernel, y, out_box);
  impl::requireClippedWindow(kernel, g, x, out_box);
  exec.fence();
  const Box volume = Box::fromExtents(x.block().globalExtents());
  const double taps = double(g.kernel[0]) * g.kernel[1] * g.kernel[2];
  pool_detail::forEachCell(y.block().localSamples(), y.block().channels(), out_box,
                           [&](index_t n, index_t c, const Extents3& o) {
                             double sum = 0;  // zero padding: cells past the volume add nothing
                             pool_detail::forEachTap(g, o, [&](const Extents3& i) {
                               if (volume.contains(i)) sum += double(pool_detail::at(x, n, c, i));
                             });
                             pool_detail::at(y, n, c, o) = T(sum / taps);
                           });
}

template <class ExecSpace, class T, class MemorySpace>
void avgPool3dBackward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
                       const WindowGeometry& g, const HaloTensor<T, MemorySpace>& dx,
                       const Box& dx_box, const Box& dy_box) {
  pool_detail::requireHost<MemorySpace>();
  constexpr const char* kernel = "reference::avgPool3dBackward";
  impl::requirePoolShapes(kernel, g, dx, dy);
  impl::requireInVolume(kernel, dx, dx_box, "input-gradient box");
  impl::requireInVolume(kernel, dy, dy_box, "output-gradient box dy_box");
  exec.fence();
  const index_t N = dx.block().localSamples(), C = dx.block().channels();
  const T taps = T(index_t(g.kernel[0]) * g.kernel[1] * g.kernel[2]);
  pool_detail::forEachCell(N, C, dx_box, [&](index_t n, index_t c, const Extents3& i) {
    pool_detail::at(dx, n, c, i) = T(0);
  });
  pool_detail::forEachCell(N, C, dy_box, [&](index_t n, index_t c, const Extents3& o) {
    pool_detail::forEachTap(g, o, [&](const Extents3& i) {
      if (dx_box.contains(i)) pool_detail::at(dx, n, c, i) += pool_detail::at(dy, n, c, o) / taps;
    });
  });
}

}  // namespace halo3d::kernels::reference
