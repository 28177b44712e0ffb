#pragma once
// Naive reference of the transposed convolution (kernels/ConvTranspose3d.hpp): the same signatures
// and checks, plain host loops written from the definition "input cell i and tap k feed output cell
// o = i s - p + k dil" (scatter form), independent of the optimized kernels' gather (pull) form.
// Host-accessible memory only; it fences `exec` before reading.

#include <Kokkos_Core.hpp>

#include <vector>

#include "halo3d/kernels/ConvTranspose3d.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dChecks.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"
#include "halo3d/kernels/reference/CellLoops.hpp"

namespace halo3d::kernels::reference {

namespace detail {

// The output cell that input cell i feeds through tap k.
inline Extents3 fed(const ConvTranspose3dGeometry& g, const Extents3& i, int kd, int kh, int kw) {
  const int k[3] = {kd, kh, kw};
  Extents3 o;
  for (int d = 0; d < 3; ++d)
    o[d] = i[d] * g.window.stride[d] - g.window.padding[d] + index_t(k[d]) * g.window.dilation[d];
  return o;
}

template <class Tensor>
auto& at(const Tensor& t, index_t n, index_t c, const Extents3& global) {
  const Extents3 l = t.toLocal(global);
  return t.view()(n, c, l[0], l[1], l[2]);
}

// The scatter of forward and backward-filter: f(n, i, o, kd, kh, kw) for every input cell i of the
// volume that x holds and every tap k whose output cell o lies in out_box.
template <class Tensor, class F>
void forEachFeed(const ConvTranspose3dGeometry& g, const Tensor& x, const Box& out_box,
                 const F& f) {
  const Box inputs = intersect(impl::allocatedBox(x), Box::fromExtents(x.block().globalExtents()));
  forEachVoxel(x.block().localSamples(), inputs, [&](index_t n, const Extents3& i) {
    for (int kd = 0; kd < g.window.kernel[0]; ++kd)
      for (int kh = 0; kh < g.window.kernel[1]; ++kh)
        for (int kw = 0; kw < g.window.kernel[2]; ++kw) {
          const Extents3 o = fed(g, i, kd, kh, kw);
          if (out_box.contains(o)) f(n, i, o, kd, kh, kw);
        }
  });
}

}  // namespace detail

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                            const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
                            const typename ConvTranspose3dViews<T, MemorySpace>::bias_type& b,
                            const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& y,
                            const Box& out_box) {
  detail::requireHostSpace<MemorySpace>();
  impl::requireTransposedWindow("reference::convTranspose3dForward", g, x, y, "weights", w, "bias",
                                b, out_box);
  exec.fence();
  const index_t I = x.block().channels(), O = y.block().channels();
  detail::forEachVoxel(y.block().localSamples(), out_box, [&](index_t n, const Extents3& o) {
    for (index_t co = 0; co < O; ++co)
      detail::at(y, n, co, o) = b.extent(0) ? b(co) : T(0);
  });
  // Every input cell of the volume that x holds scatters into the output cells of out_box.
  detail::forEachFeed(
      g, x, out_box, [&](index_t n, const Extents3& i, const Extents3& o, int kd, int kh, int kw) {
        for (index_t ci = 0; ci < I; ++ci)
          for (index_t co = 0; co < O; ++co)
            detail::at(y, n, co, o) += detail::at(x, n, ci, i) * w(ci, co, kd, kh, kw);
      });
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardData(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<T, MemorySpace>& dx, const Box& dx_box,
    const Box& dy_box) {
  detail::requireHostSpace<MemorySpace>();
  impl::requireTransposedBackwardData("reference::convTranspose3dBackwardData", g, dx, dy, w,
                                      dx_box, dy_box);
  exec.fence();
  const index_t I = dx.block().channels(), O = dy.block().channels();
  detail::forEachVoxel(dx.block().localSamples(), dx_box, [&](index_t n, const Extents3& i) {
    for (index_t ci = 0; ci < I; ++ci) {
      T sum = T(0);
      for (int kd = 0; kd < g.window.kernel[0]; ++kd)
        for (int kh = 0; kh < g.window.kernel[1]; ++kh)
          for (int kw = 0; kw < g.window.kernel[2]; ++kw) {
            const Extents3 o = detail::fed(g, i, kd, kh, kw);
            if (!dy_box.contains(o)) continue;
            for (index_t co = 0; co < O; ++co)
              sum += detail::at(dy, n, co, o) * w(ci, co, kd, kh, kw);
          }
      detail::at(dx, n, ci, i) = sum;
    }
  });
}

template <class ExecSpace, class T, class MemorySpace>
void convTranspose3dBackwardFilter(
    const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
    const HaloTensor<T, MemorySpace>& dy, const ConvTranspose3dGeometry& g,
    const typename ConvTranspose3dViews<T, MemorySpace>::weights_grad_type& dw,
    const typename ConvTranspose3dViews<T, MemorySpace>::bias_grad_type& db, const Box& out_box,
    bool accumulate) {
  detail::requireHostSpace<MemorySpace>();
  impl::requireTransposedWindow("reference::convTranspose3dBackwardFilter", g, x, dy,
                                "weight gradient", dw, "bias gradient", db, out_box);
  exec.fence();
  const index_t I = x.block().channels(), O = dy.block().channels();
  if (!accumulate) {
    Kokkos::deep_copy(dw, T(0));
    if (db.extent(0)) Kokkos::deep_copy(db, T(0));
  }
  detail::forEachFeed(
      g, x, out_box, [&](index_t n, const Extents3& i, const Extents3& o, int kd, int kh, int kw) {
        for (index_t ci = 0; ci < I; ++ci)
          for (index_t co = 0; co < O; ++co)
            dw(ci, co, kd, kh, kw) += detail::at(x, n, ci, i) * detail::at(dy, n, co, o);
      });
  if (db.extent(0))
    detail::forEachVoxel(dy.block().localSamples(), out_box, [&](index_t n, const Extents3& o) {
      for (index_t co = 0; co < O; ++co)
        db(co) += detail::at(dy, n, co, o);
    });
}

}  // namespace halo3d::kernels::reference
