#pragma once
// The generic conv3d path: one Kokkos thread per output value, plain loops over channels and taps.
// Device-callable and correct for every geometry; the dispatcher in kernels/Conv3d.hpp uses it on
// the host where the SIMD path does not apply. Callers have run the shape checks
// (Conv3dChecks.hpp).
//
// Each value is summed in one fixed order (bias, then input channel, then tap), whatever box it is
// computed in, so that results do not depend on how a caller splits its boxes.

#include <Kokkos_Core.hpp>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/impl/Conv3dChecks.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"

namespace halo3d::kernels::impl {

template <class ExecSpace>
using Conv3dPolicy5 = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<5>, Kokkos::IndexType<index_t>>;

// See conv3dForward in kernels/Conv3d.hpp.
template <class ExecSpace, class T>
void conv3dForwardGeneric(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                          const Conv3dWeightsOn<T, ExecSpace>& w,
                          const Conv3dBiasOn<T, ExecSpace>& b, const WindowGeometry& g,
                          const Tensor<T, ExecSpace>& y, const Box& out_box) {
  const index_t samples = y.block().localSamples();
  if (out_box.empty() || samples == 0) return;
  const Conv3dIndexing ix = makeIndexing(g, x, y);
  const auto xv = x.view();
  const auto yv = y.view();
  const index_t in_ch = x.block().channels();
  const bool has_bias = b.extent(0) > 0;
  Kokkos::parallel_for(
      "halo3d::conv3dForward(generic)",
      Conv3dPolicy5<ExecSpace>(
          exec, {0, 0, out_box.min(0), out_box.min(1), out_box.min(2)},
          {samples, index_t(y.block().channels()), out_box.max(0), out_box.max(1), out_box.max(2)}),
      KOKKOS_LAMBDA(index_t n, index_t o, index_t d, index_t h, index_t c) {
        T acc = has_bias ? b(o) : T(0);
        for (index_t i = 0; i < in_ch; ++i)
          for (int kd = 0; kd < ix.kernel[0]; ++kd) {
            const index_t xd = ix.inputOf(0, d, kd) + ix.in_shift[0];
            for (int kh = 0; kh < ix.kernel[1]; ++kh) {
              const index_t xh = ix.inputOf(1, h, kh) + ix.in_shift[1];
              for (int kw = 0; kw < ix.kernel[2]; ++kw)
                acc +=
                    w(o, i, kd, kh, kw) * xv(n, i, xd, xh, ix.inputOf(2, c, kw) + ix.in_shift[2]);
            }
          }
        yv(n, o, d + ix.out_shift[0], h + ix.out_shift[1], c + ix.out_shift[2]) = acc;
      });
}

// The output coordinate whose tap k reads input coordinate q along dimension d, if any: q + p - k
// dil must be a multiple of the stride (exact division also holds for negative values) and the
// result must lie in [lo, hi), which may reach into dy's ghost cells.
KOKKOS_INLINE_FUNCTION bool outputOf(const Conv3dIndexing& ix, int d, index_t q, int k, index_t lo,
                                     index_t hi, index_t& out) {
  const index_t num = q + ix.padding[d] - index_t(k) * ix.dilation[d];
  if (num % ix.stride[d] != 0) return false;
  out = num / ix.stride[d];
  return out >= lo && out < hi;
}

// See conv3dBackwardData in kernels/Conv3d.hpp.
template <class ExecSpace, class T>
void conv3dBackwardDataGeneric(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy,
                               const Conv3dWeightsOn<T, ExecSpace>& w, const WindowGeometry& g,
                               const Tensor<T, ExecSpace>& dx, const Box& dx_box,
                               const Box& dy_box) {
  const index_t samples = dx.block().localSamples();
  if (dx_box.empty() || samples == 0) return;
  const Conv3dIndexing ix = makeIndexing(g, dx, dy);
  const auto dyv = dy.view();
  const auto dxv = dx.view();
  const index_t out_ch = dy.block().channels();
  const Kokkos::Array<index_t, 3> lo{dy_box.min(0), dy_box.min(1), dy_box.min(2)};
  const Kokkos::Array<index_t, 3> hi{dy_box.max(0), dy_box.max(1), dy_box.max(2)};
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardData(generic)",
      Conv3dPolicy5<ExecSpace>(
          exec, {0, 0, dx_box.min(0), dx_box.min(1), dx_box.min(2)},
          {samples, index_t(dx.block().channels()), dx_box.max(0), dx_box.max(1), dx_box.max(2)}),
      KOKKOS_LAMBDA(index_t n, index_t i, index_t d, index_t h, index_t c) {
        // Taps outside, output channels inside: the stride/bounds test of a tap (integer divisions)
        // runs once per tap instead of once per (tap, output channel); that order made CosmoFlow's
        // stride-2 layer 9x slower.
        T acc = 0;
        for (int kd = 0; kd < ix.kernel[0]; ++kd) {
          index_t od;
          if (!outputOf(ix, 0, d, kd, lo[0], hi[0], od)) continue;
          for (int kh = 0; kh < ix.kernel[1]; ++kh) {
            index_t oh;
            if (!outputOf(ix, 1, h, kh, lo[1], hi[1], oh)) continue;
            for (int kw = 0; kw < ix.kernel[2]; ++kw) {
              index_t ow;
              if (!outputOf(ix, 2, c, kw, lo[2], hi[2], ow)) continue;
              for (index_t o = 0; o < out_ch; ++o)
                acc += w(o, i, kd, kh, kw) *
                       dyv(n, o, od + ix.out_shift[0], oh + ix.out_shift[1], ow + ix.out_shift[2]);
            }
          }
        }
        dxv(n, i, d + ix.in_shift[0], h + ix.in_shift[1], c + ix.in_shift[2]) = acc;
      });
}

// See conv3dBackwardFilter in kernels/Conv3d.hpp. One thread per weight, summing in double over all
// samples and cells of out_box.
template <class ExecSpace, class T>
void conv3dBackwardFilterGeneric(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                                 const Tensor<T, ExecSpace>& dy, const WindowGeometry& g,
                                 const Conv3dWeightsGradOn<T, ExecSpace>& dw,
                                 const Conv3dBiasGradOn<T, ExecSpace>& db, const Box& out_box,
                                 bool accumulate) {
  const Conv3dIndexing ix = makeIndexing(g, x, dy);
  const auto xv = x.view();
  const auto dyv = dy.view();
  const index_t samples = x.block().localSamples();
  const index_t in_ch = x.block().channels(), out_ch = dy.block().channels();
  const index_t taps = ix.taps();
  const Kokkos::Array<index_t, 3> lo{out_box.min(0), out_box.min(1), out_box.min(2)};
  const Kokkos::Array<index_t, 3> hi{out_box.max(0), out_box.max(1), out_box.max(2)};
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardFilter(generic)",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, out_ch * in_ch * taps),
      KOKKOS_LAMBDA(index_t flat) {
        const index_t o = flat / (in_ch * taps), i = (flat / taps) % in_ch;
        const int t = int(flat % taps);
        const int kd = t / (ix.kernel[1] * ix.kernel[2]), kh = (t / ix.kernel[2]) % ix.kernel[1],
                  kw = t % ix.kernel[2];
        double acc = accumulate ? double(dw(o, i, kd, kh, kw)) : 0.0;
        for (index_t n = 0; n < samples; ++n)
          for (index_t d = lo[0]; d < hi[0]; ++d)
            for (index_t h = lo[1]; h < hi[1]; ++h)
              for (index_t c = lo[2]; c < hi[2]; ++c)
                acc += double(dyv(n, o, d + ix.out_shift[0], h + ix.out_shift[1],
                                  c + ix.out_shift[2])) *
                       double(xv(n, i, ix.inputOf(0, d, kd) + ix.in_shift[0],
                                 ix.inputOf(1, h, kh) + ix.in_shift[1],
                                 ix.inputOf(2, c, kw) + ix.in_shift[2]));
        dw(o, i, kd, kh, kw) = T(acc);
      });
  if (db.extent(0) == 0) return;
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardFilter(generic bias)",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, out_ch),
      KOKKOS_LAMBDA(index_t o) {
        double acc = accumulate ? double(db(o)) : 0.0;
        for (index_t n = 0; n < samples; ++n)
          for (index_t d = lo[0]; d < hi[0]; ++d)
            for (index_t h = lo[1]; h < hi[1]; ++h)
              for (index_t c = lo[2]; c < hi[2]; ++c)
                acc += double(
                    dyv(n, o, d + ix.out_shift[0], h + ix.out_shift[1], c + ix.out_shift[2]));
        db(o) = T(acc);
      });
}

}  // namespace halo3d::kernels::impl
