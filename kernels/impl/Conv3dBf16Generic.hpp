#pragma once
// The generic bf16 conv3d passes, the host fallback and the device code; bf16 read and converted
// in registers, every sum in float:
// - forward: one thread per output value, sums in (channel, kd, kh, kw) order;
// - backward-data: one thread per dx value, sums in (kd, kh, kw, output channel) order as the fp32
//   generic kernel (Conv3dGeneric.hpp);
// - backward-filter: one team per weight (and per bias entry), each thread summing whole W rows of
//   the box in float, the row sums reduced in float. Row sums keep a long reduction's rounding
//   error near (W + rows / threads) u instead of (N D H W) u for one running float.

#include <Kokkos_Core.hpp>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/kernels/KernelTypes.hpp"
#include "halo3d/kernels/impl/Conv3dGeneric.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"
#include "halo3d/kernels/impl/TeamTuning.hpp"

namespace halo3d::kernels::impl {

// `wb`: the weights already rounded to bf16, (O, I, kD, kH, kW).
template <class ExecSpace, class WView, class BView>
void conv3dForwardBf16Generic(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x,
                              const WView& wb, const BView& b, const WindowGeometry& g,
                              const Tensor<bf16, ExecSpace>& y, const Box& out_box) {
  if (out_box.empty()) return;
  const Conv3dIndexing ix = makeIndexing(g, x, y);
  const auto xv = x.view();
  const auto yv = y.view();
  const index_t N = index_t(yv.extent(0)), O = index_t(yv.extent(1));
  const index_t C = index_t(xv.extent(1));
  const index_t d0 = out_box.min(0), h0 = out_box.min(1), w0 = out_box.min(2);
  const index_t ed = out_box.extent(0), eh = out_box.extent(1), ew = out_box.extent(2);
  const bool has_bias = b.extent(0) > 0;
  Kokkos::parallel_for(
      "halo3d::conv3dForwardBf16Generic",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, N * O * ed * eh * ew),
      KOKKOS_LAMBDA(const index_t i) {
        const index_t w = w0 + i % ew, h = h0 + (i / ew) % eh, d = d0 + (i / (ew * eh)) % ed;
        const index_t o = (i / (ew * eh * ed)) % O, n = i / (ew * eh * ed * O);
        float acc = 0.0f;
        for (index_t c = 0; c < C; ++c)
          for (int kd = 0; kd < ix.kernel[0]; ++kd) {
            const index_t xd = ix.inputOf(0, d, kd) + ix.in_shift[0];
            for (int kh = 0; kh < ix.kernel[1]; ++kh) {
              const index_t xh = ix.inputOf(1, h, kh) + ix.in_shift[1];
              for (int kw = 0; kw < ix.kernel[2]; ++kw)
                acc += float(xv(n, c, xd, xh, ix.inputOf(2, w, kw) + ix.in_shift[2])) *
                       float(wb(o, c, kd, kh, kw));
            }
          }
        if (has_bias) acc += b(o);
        yv(n, o, d + ix.out_shift[0], h + ix.out_shift[1], w + ix.out_shift[2]) = bf16(acc);
      });
}

// `wb`: the weights already rounded to bf16, (O, I, kD, kH, kW). dx(n, i, q) = bf16(sum over the
// taps k and dy cells c in dy_box with c * s - p + k * dil = q of wb(o, i, k) dy(n, o, c)).
template <class ExecSpace, class WView>
void conv3dBackwardDataBf16Generic(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& dy,
                                   const WView& wb, const WindowGeometry& g,
                                   const Tensor<bf16, ExecSpace>& dx, const Box& dx_box,
                                   const Box& dy_box) {
  if (dx_box.empty()) return;
  const Conv3dIndexing ix = makeIndexing(g, dx, dy);
  const auto dyv = dy.view();
  const auto dxv = dx.view();
  const index_t N = index_t(dxv.extent(0)), I = index_t(dxv.extent(1));
  const index_t O = index_t(dyv.extent(1));
  const index_t d0 = dx_box.min(0), h0 = dx_box.min(1), w0 = dx_box.min(2);
  const index_t ed = dx_box.extent(0), eh = dx_box.extent(1), ew = dx_box.extent(2);
  const Kokkos::Array<index_t, 3> lo{dy_box.min(0), dy_box.min(1), dy_box.min(2)};
  const Kokkos::Array<index_t, 3> hi{dy_box.max(0), dy_box.max(1), dy_box.max(2)};
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardDataBf16Generic",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, N * I * ed * eh * ew),
      KOKKOS_LAMBDA(const index_t e) {
        const index_t c = w0 + e % ew, h = h0 + (e / ew) % eh, d = d0 + (e / (ew * eh)) % ed;
        const index_t i = (e / (ew * eh * ed)) % I, n = e / (ew * eh * ed * I);
        float acc = 0.0f;
        for (int kd = 0; kd < ix.kernel[0]; ++kd) {
          index_t od;
          if (!outputOf(ix, 0, d, kd, lo[0], hi[0], od)) continue;
          for (int kh = 0; kh < ix.kernel[1]; ++kh) {
            index_t oh;
            if (!outputOf(ix, 1, h, kh, lo[1], hi[1], oh)) continue;
            for (int kw = 0; kw < ix.kernel[2]; ++kw) {
              index_t ow;
              if (!outputOf(ix, 2, c, kw, lo[2], hi[2], ow)) continue;
              for (index_t o = 0; o < O; ++o)
                acc += float(wb(o, i, kd, kh, kw)) *
                       float(dyv(n, o, od + ix.out_shift[0], oh + ix.out_shift[1],
                                 ow + ix.out_shift[2]));
            }
          }
        }
        dxv(n, i, d + ix.in_shift[0], h + ix.in_shift[1], c + ix.in_shift[2]) = bf16(acc);
      });
}

// db(o) (+)= the float sum of dy(n, o, c) over samples and out_box cells c: one team per entry,
// W rows summed in float, row sums reduced in float. Nothing if db has extent 0.
template <class ExecSpace, class DbView>
void conv3dBiasGradBf16Generic(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& dy,
                               const DbView& db, const Box& out_box, bool accumulate,
                               const TeamTuning& tuning) {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  if (db.extent(0) == 0) return;
  const auto dyv = dy.view();
  const auto shift = localShift(dy);
  const Kokkos::Array<index_t, 3> out_shift{shift[0], shift[1], shift[2]};
  const index_t N = index_t(dyv.extent(0)), O = index_t(dyv.extent(1));
  const index_t d0 = out_box.min(0), h0 = out_box.min(1), w0 = out_box.min(2);
  const index_t ed = out_box.extent(0), eh = out_box.extent(1), ew = out_box.extent(2);
  const index_t rows = out_box.empty() ? 0 : N * ed * eh;
  Kokkos::parallel_for(
      "halo3d::conv3dBiasGradBf16Generic", teamPolicy(exec, O, tuning),
      KOKKOS_LAMBDA(const Team& team) {
        const index_t o = team.league_rank();
        float sum = 0.0f;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, rows),
            [&](const index_t r, float& part) {
              const index_t h = h0 + r % eh, d = d0 + (r / eh) % ed, n = r / (eh * ed);
              float row = 0.0f;
              for (index_t c = w0; c < w0 + ew; ++c)
                row += float(dyv(n, o, d + out_shift[0], h + out_shift[1], c + out_shift[2]));
              part += row;
            },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { db(o) = (accumulate ? db(o) : 0.0f) + sum; });
      });
}

// dw(o, i, k) (+)= sum over samples and out_box cells c of float(dy(n, o, c)) float(x(n, i, c s -
// p + k dil)) (each product exact in float), db(o) (+)= sum of dy(n, o, c); in float throughout.
template <class ExecSpace, class DwView, class DbView>
void conv3dBackwardFilterBf16Generic(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x,
                                     const Tensor<bf16, ExecSpace>& dy, const WindowGeometry& g,
                                     const DwView& dw, const DbView& db, const Box& out_box,
                                     bool accumulate, const TeamTuning& tuning) {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const Conv3dIndexing ix = makeIndexing(g, x, dy);
  const auto xv = x.view();
  const auto dyv = dy.view();
  const index_t N = index_t(dyv.extent(0)), O = index_t(dyv.extent(1));
  const index_t I = index_t(xv.extent(1));
  const index_t taps = index_t(ix.taps());
  const index_t d0 = out_box.min(0), h0 = out_box.min(1), w0 = out_box.min(2);
  const index_t ed = out_box.extent(0), eh = out_box.extent(1), ew = out_box.extent(2);
  const index_t rows = out_box.empty() ? 0 : N * ed * eh;
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardFilterBf16Generic", teamPolicy(exec, O * I * taps, tuning),
      KOKKOS_LAMBDA(const Team& team) {
        const index_t flat = team.league_rank();
        const index_t o = flat / (I * taps), i = (flat / taps) % I;
        const int t = int(flat % taps);
        const int kd = t / (ix.kernel[1] * ix.kernel[2]), kh = (t / ix.kernel[2]) % ix.kernel[1],
                  kw = t % ix.kernel[2];
        float sum = 0.0f;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, rows),
            [&](const index_t r, float& part) {
              const index_t h = h0 + r % eh, d = d0 + (r / eh) % ed, n = r / (eh * ed);
              const index_t xd = ix.inputOf(0, d, kd) + ix.in_shift[0];
              const index_t xh = ix.inputOf(1, h, kh) + ix.in_shift[1];
              const index_t yd = d + ix.out_shift[0], yh = h + ix.out_shift[1];
              float row = 0.0f;
              for (index_t c = w0; c < w0 + ew; ++c)
                row += float(dyv(n, o, yd, yh, c + ix.out_shift[2])) *
                       float(xv(n, i, xd, xh, ix.inputOf(2, c, kw) + ix.in_shift[2]));
              part += row;
            },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          dw(o, i, kd, kh, kw) = (accumulate ? dw(o, i, kd, kh, kw) : 0.0f) + sum;
        });
      });
  conv3dBiasGradBf16Generic(exec, dy, db, out_box, accumulate, tuning);
}

}  // namespace halo3d::kernels::impl
