#pragma once
// The bf16 transposed-convolution kernels (ConvTranspose3dBf16.hpp): the device code of the fp32
// kernels (ConvTranspose3dGather.hpp, ConvTranspose3dFilter.hpp) with bf16 loads converted to
// float in registers and float sums; also what the host runs.
// - gather (forward, backward-data): one destination value per work item, sums in (kd, kh, kw,
//   channel) order, rounded to bf16 on the store;
// - filter gradient: one team per weight (and per bias entry), each thread summing whole source
//   rows in float, the row sums reduced in float (the error grows with the row length plus the
//   row count, not with their product).

#include <Kokkos_Core.hpp>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dTaps.hpp"
#include "halo3d/kernels/impl/TeamTuning.hpp"

namespace halo3d::kernels::impl {

template <class MemorySpace>
struct GatherConvBf16 {
  Kokkos::View<const bf16*****, Kokkos::LayoutRight, MemorySpace> src;  // (N, R, ...) allocation
  Extents3 src_shift{};                                                 // local = global + shift
  Kokkos::View<const bf16*****, Kokkos::LayoutRight, MemorySpace> w;    // rounded, (I, O, k...)
  bool swap_channels = false;  // weight(r, q, k) = w(q, r, k)
  Kokkos::View<const float*, Kokkos::LayoutRight, MemorySpace> bias;  // (Q) or empty
  Kokkos::View<bf16*****, Kokkos::LayoutRight, MemorySpace> dst;      // (N, Q, ...) allocation
  Extents3 dst_shift{};
  Box dst_box;  // global destination cells
  Kokkos::Array<TapAxis, 3> axes;
};

template <class ExecSpace, class MemorySpace>
void gatherConvBf16(const ExecSpace& exec, const GatherConvBf16<MemorySpace>& p) {
  if (p.dst_box.empty()) return;
  const auto src = p.src;
  const auto w = p.w;
  const auto bias = p.bias;
  const auto dst = p.dst;
  const Kokkos::Array<TapAxis, 3> ax = p.axes;
  const bool swap = p.swap_channels, has_bias = bias.extent(0) > 0;
  const index_t N = index_t(dst.extent(0)), Q = index_t(dst.extent(1));
  const index_t R = index_t(src.extent(1));
  const Box& box = p.dst_box;
  const index_t ed = box.extent(0), eh = box.extent(1), ew = box.extent(2);
  const index_t d0 = box.min(0), h0 = box.min(1), w0 = box.min(2);
  const index_t sd = p.src_shift[0], sh = p.src_shift[1], sw = p.src_shift[2];
  const index_t td = p.dst_shift[0], th = p.dst_shift[1], tw = p.dst_shift[2];
  Kokkos::parallel_for(
      "halo3d::convTranspose3dGatherBf16",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, N * Q * ed * eh * ew),
      KOKKOS_LAMBDA(const index_t e) {
        const index_t cw = w0 + e % ew, ch = h0 + (e / ew) % eh, cd = d0 + (e / (ew * eh)) % ed;
        const index_t q = (e / (ew * eh * ed)) % Q, n = e / (ew * eh * ed * Q);
        float acc = has_bias ? bias(q) : 0.0f;
        for (int kd = 0; kd < ax[0].taps; ++kd) {
          index_t id;
          if (!ax[0].source(cd, kd, id)) continue;
          for (int kh = 0; kh < ax[1].taps; ++kh) {
            index_t ih;
            if (!ax[1].source(ch, kh, ih)) continue;
            for (int kw = 0; kw < ax[2].taps; ++kw) {
              index_t iw;
              if (!ax[2].source(cw, kw, iw)) continue;
              for (index_t r = 0; r < R; ++r)
                acc += float(src(n, r, id + sd, ih + sh, iw + sw)) *
                       float(swap ? w(q, r, kd, kh, kw) : w(r, q, kd, kh, kw));
            }
          }
        }
        dst(n, q, cd + td, ch + th, cw + tw) = bf16(acc);
      });
}

template <class MemorySpace>
struct FilterGradBf16 {
  Kokkos::View<const bf16*****, Kokkos::LayoutRight, MemorySpace> x;  // (N, I, ...) allocation
  Extents3 x_shift{};
  Kokkos::View<const bf16*****, Kokkos::LayoutRight, MemorySpace> dy;  // (N, O, ...) allocation
  Extents3 dy_shift{};
  Box box;                                                        // global output cells
  Kokkos::Array<TapAxis, 3> axes;                                 // forward axes
  Kokkos::View<float*****, Kokkos::LayoutRight, MemorySpace> dw;  // (I, O, kD, kH, kW)
  Kokkos::View<float*, Kokkos::LayoutRight, MemorySpace> db;      // (O) or empty
  bool accumulate = false;
  TeamTuning tuning;
};

template <class ExecSpace, class MemorySpace>
void filterGradBf16(const ExecSpace& exec, const FilterGradBf16<MemorySpace>& p) {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const auto x = p.x;
  const auto dy = p.dy;
  const auto dw = p.dw;
  const auto db = p.db;
  const Kokkos::Array<TapAxis, 3> ax = p.axes;
  const bool accumulate = p.accumulate;
  const index_t N = index_t(dy.extent(0)), R = index_t(x.extent(1)), Q = index_t(dy.extent(1));
  const int KD = ax[0].taps, KH = ax[1].taps, KW = ax[2].taps;
  const bool empty = p.box.empty();
  const index_t ed = p.box.extent(0), eh = p.box.extent(1), ew = p.box.extent(2);
  const index_t d0 = p.box.min(0), h0 = p.box.min(1), w0 = p.box.min(2);
  const Kokkos::Array<index_t, 3> xs{p.x_shift[0], p.x_shift[1], p.x_shift[2]};
  const Kokkos::Array<index_t, 3> ys{p.dy_shift[0], p.dy_shift[1], p.dy_shift[2]};
  Kokkos::parallel_for(
      "halo3d::convTranspose3dFilterBf16", teamPolicy(exec, R * Q * KD * KH * KW, p.tuning),
      KOKKOS_LAMBDA(const Team& team) {
        index_t t = team.league_rank();
        const int kw = int(t % KW), kh = int((t / KW) % KH), kd = int((t / (KW * KH)) % KD);
        t /= index_t(KD) * KH * KW;
        const index_t q = t % Q, r = t / Q;
        // The source cells of this tap (dense for any stride), as in filterGradDevice.
        index_t sd0 = 0, sd1 = 0, sh0 = 0, sh1 = 0, sw0 = 0, sw1 = 0;
        if (!empty) {
          ax[0].sources(d0, d0 + ed, kd, sd0, sd1);
          ax[1].sources(h0, h0 + eh, kh, sh0, sh1);
          ax[2].sources(w0, w0 + ew, kw, sw0, sw1);
        }
        const index_t nd = sd1 - sd0, nh = sh1 - sh0;
        float sum = 0.0f;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, N * nd * nh),
            [&](const index_t e, float& part) {
              const index_t ih = sh0 + e % nh, id = sd0 + (e / nh) % nd, n = e / (nh * nd);
              const index_t yd = ax[0].destination(id, kd) + ys[0];
              const index_t yh = ax[1].destination(ih, kh) + ys[1];
              float row = 0.0f;
              for (index_t iw = sw0; iw < sw1; ++iw)
                row += float(x(n, r, id + xs[0], ih + xs[1], iw + xs[2])) *
                       float(dy(n, q, yd, yh, ax[2].destination(iw, kw) + ys[2]));
              part += row;
            },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          dw(r, q, kd, kh, kw) = (accumulate ? dw(r, q, kd, kh, kw) : 0.0f) + sum;
        });
      });
  if (db.extent(0) == 0) return;
  const index_t rows = empty ? 0 : N * ed * eh;
  Kokkos::parallel_for(
      "halo3d::convTranspose3dBiasGradBf16", teamPolicy(exec, Q, p.tuning),
      KOKKOS_LAMBDA(const Team& team) {
        const index_t q = team.league_rank();
        float sum = 0.0f;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, rows),
            [&](const index_t e, float& part) {
              const index_t ch = h0 + e % eh, cd = d0 + (e / eh) % ed, n = e / (eh * ed);
              float row = 0.0f;
              for (index_t cw = w0; cw < w0 + ew; ++cw)
                row += float(dy(n, q, cd + ys[0], ch + ys[1], cw + ys[2]));
              part += row;
            },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { db(q) = (accumulate ? db(q) : 0.0f) + sum; });
      });
}

}  // namespace halo3d::kernels::impl
