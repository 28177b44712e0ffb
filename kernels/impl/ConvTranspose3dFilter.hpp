#pragma once
// Backward-filter of the transposed convolution: partial sums over a box of output cells q,
//   dw(i, o, k) = sum_{n, q} x(n, i, source(q, k)) dy(n, o, q),   db(o) = sum_{n, q} dy(n, o, q),
// with the forward tap map (ConvTranspose3dTaps.hpp). Two paths:
// - device: one team per weight (and per bias entry), its threads reducing over the input cells
//   that the weight's tap reaches from the box;
// - host: the rows (n, d, h) of the box are cut into a fixed number of chunks, each summing into
//   its own copy of the gradient, then the copies are added in chunk order. The chunk count depends
//   on the problem only, never on the thread count, so results are reproducible. Inside a row and a
//   tap, the cells that read through that tap form a small matrix product (R x cells) (cells x Q):
//   dy's row is transposed once into a (cell, q) buffer so that the innermost loop is a contiguous
//   run of q, as in the gather kernel.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <type_traits>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/HostScratchpad.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dTaps.hpp"
#include "halo3d/kernels/impl/TeamTuning.hpp"

namespace halo3d::kernels::impl {

template <class T, class MemorySpace>
struct FilterGrad {
  Kokkos::View<const T*****, Kokkos::LayoutRight, MemorySpace> x;  // (N, I, ...) allocation
  Extents3 x_shift{};
  Kokkos::View<const T*****, Kokkos::LayoutRight, MemorySpace> dy;  // (N, O, ...) allocation
  Extents3 dy_shift{};
  Box box;                                                    // global output cells
  Kokkos::Array<TapAxis, 3> axes;                             // forward axes
  Kokkos::View<T*****, Kokkos::LayoutRight, MemorySpace> dw;  // (I, O, kD, kH, kW)
  Kokkos::View<T*, Kokkos::LayoutRight, MemorySpace> db;      // (O) or empty
  bool accumulate = false;
  TeamTuning tuning;  // of the device code's teams
};

template <class ExecSpace, class T, class MemorySpace>
void filterGradDevice(const ExecSpace& exec, const FilterGrad<T, MemorySpace>& p) {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const auto x = p.x;
  const auto dy = p.dy;
  const auto dw = p.dw;
  const auto db = p.db;
  const Kokkos::Array<TapAxis, 3> ax = p.axes;
  const bool accumulate = p.accumulate;
  const index_t N = index_t(dy.extent(0)), R = index_t(x.extent(1)), Q = index_t(dy.extent(1));
  const int KD = ax[0].taps, KH = ax[1].taps, KW = ax[2].taps;
  const index_t ed = p.box.extent(0), eh = p.box.extent(1), ew = p.box.extent(2);
  const index_t d0 = p.box.min(0), h0 = p.box.min(1), w0 = p.box.min(2);
  const Kokkos::Array<index_t, 3> xs{p.x_shift[0], p.x_shift[1], p.x_shift[2]};
  const Kokkos::Array<index_t, 3> ys{p.dy_shift[0], p.dy_shift[1], p.dy_shift[2]};
  const index_t cells = N * ed * eh * ew;
  Kokkos::parallel_for(
      "halo3d::convTranspose3dFilter", teamPolicy(exec, R * Q * KD * KH * KW, p.tuning),
      KOKKOS_LAMBDA(const Team& team) {
        index_t t = team.league_rank();
        const int kw = int(t % KW), kh = int((t / KW) % KH), kd = int((t / (KW * KH)) % KD);
        t /= index_t(KD) * KH * KW;
        const index_t q = t % Q, r = t / Q;
        // Walk the source cells of this tap (dense for any stride), not the output cells (1 in s^3
        // reads).
        index_t sd0, sd1, sh0, sh1, sw0, sw1;
        ax[0].sources(d0, d0 + ed, kd, sd0, sd1);
        ax[1].sources(h0, h0 + eh, kh, sh0, sh1);
        ax[2].sources(w0, w0 + ew, kw, sw0, sw1);
        const index_t nd = sd1 - sd0, nh = sh1 - sh0, nw = sw1 - sw0;
        T sum = T(0);
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, N * nd * nh * nw),
            [&](const index_t e, T& part) {
              index_t n, id, ih, iw;
              unflattenCell(e, sd0, nd, sh0, nh, sw0, nw, n, id, ih, iw);
              part += x(n, r, id + xs[0], ih + xs[1], iw + xs[2]) *
                      dy(n, q, ax[0].destination(id, kd) + ys[0], ax[1].destination(ih, kh) + ys[1],
                         ax[2].destination(iw, kw) + ys[2]);
            },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          dw(r, q, kd, kh, kw) = (accumulate ? dw(r, q, kd, kh, kw) : T(0)) + sum;
        });
      });
  if (db.extent(0) == 0) return;
  Kokkos::parallel_for(
      "halo3d::convTranspose3dBiasGrad", teamPolicy(exec, Q, p.tuning),
      KOKKOS_LAMBDA(const Team& team) {
        const index_t q = team.league_rank();
        T sum = T(0);
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, cells),
            [&](const index_t e, T& part) {
              index_t n, cd, ch, cw;
              unflattenCell(e, d0, ed, h0, eh, w0, ew, n, cd, ch, cw);
              part += dy(n, q, cd + ys[0], ch + ys[1], cw + ys[2]);
            },
            sum);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { db(q) = (accumulate ? db(q) : T(0)) + sum; });
      });
}

// grad[j * g_stride + .] += sum_{m in [m0, m1)} x[j * x_cstride + m * x_step] * dyt[m * d_step + .]
// for MR channels r and CB channels q, the MR x CB sums held in registers over the cells m.
template <int MR, int CB, class T>
inline void filterBlock(T* grad, index_t g_stride, const T* x, index_t x_cstride, index_t x_step,
                        const T* dyt, index_t d_step, index_t m0, index_t m1) {
  T acc[MR][CB];
  for (int j = 0; j < MR; ++j) {
    HALO3D_CONV_TRANSPOSE3D_SIMD
    for (int cq = 0; cq < CB; ++cq)
      acc[j][cq] = grad[j * g_stride + cq];
  }
  for (index_t m = m0; m < m1; ++m) {
    const T* d = dyt + m * d_step;
    for (int j = 0; j < MR; ++j) {
      const T xv = x[j * x_cstride + m * x_step];
      HALO3D_CONV_TRANSPOSE3D_SIMD
      for (int cq = 0; cq < CB; ++cq)
        acc[j][cq] += xv * d[cq];
    }
  }
  for (int j = 0; j < MR; ++j) {
    HALO3D_CONV_TRANSPOSE3D_SIMD
    for (int cq = 0; cq < CB; ++cq)
      grad[j * g_stride + cq] = acc[j][cq];
  }
}

// Chunks of the host path: enough for load balance on a many-core node, at most 64 MiB of partial
// sums.
inline index_t filterChunks(index_t rows, std::size_t bytes_per_chunk) {
  const index_t budget = index_t(std::max<std::size_t>(
      1, (std::size_t(64) << 20) / std::max<std::size_t>(1, bytes_per_chunk)));
  return std::max<index_t>(1, std::min<index_t>({rows, index_t(32), budget}));
}

template <class ExecSpace, class T, class MemorySpace>
void filterGradHost(const ExecSpace& exec, const FilterGrad<T, MemorySpace>& p) {
  constexpr int CB = HostBlocking<T>::channels, MR = 4;
  using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  const auto x = p.x;
  const auto dy = p.dy;
  const auto dw = p.dw;
  const auto db = p.db;
  const Kokkos::Array<TapAxis, 3> ax = p.axes;
  const bool accumulate = p.accumulate, has_bias = db.extent(0) > 0;
  const index_t N = index_t(dy.extent(0)), R = index_t(x.extent(1)), Q = index_t(dy.extent(1));
  const index_t qpad = HostBlocking<T>::paddedChannels(Q);
  const int KD = ax[0].taps, KH = ax[1].taps, KW = ax[2].taps;
  const index_t taps = index_t(KD) * KH * KW;
  const index_t ed = p.box.extent(0), eh = p.box.extent(1), ew = p.box.extent(2);
  const index_t d0 = p.box.min(0), h0 = p.box.min(1), w0 = p.box.min(2);
  const Extents3 xs = p.x_shift, ys = p.dy_shift;
  const index_t x_cstride = index_t(x.stride(1)), dy_cstride = index_t(dy.stride(1));
  const index_t rows = N * ed * eh, grad_size = taps * R * qpad + qpad;
  const index_t chunks = filterChunks(rows, std::size_t(grad_size) * sizeof(T));

  // Per chunk: its gradient (taps, R, qpad) then its bias gradient (qpad); and a (cell, qpad) dy
  // row. In host memory both come from the scratchpad (kernels/HostScratchpad.hpp): allocated per
  // call, they cost a page fault per 4 KiB whenever the heap handed back fresh pages.
  using Rows = Kokkos::View<T**, Kokkos::LayoutRight, MemorySpace>;
  ScratchpadLease scratch(exec);
  Rows partial, dyt;
  if constexpr (std::is_same<MemorySpace, Kokkos::HostSpace>::value) {
    partial = Rows(scratch.take<T>(std::size_t(chunks * grad_size)), chunks, grad_size);
    dyt = Rows(scratch.take<T>(std::size_t(chunks * ew * qpad)), chunks, ew * qpad);
    Kokkos::deep_copy(exec, partial, T(0));
  } else {
    partial = Rows("halo3d::convTranspose3dFilterPartial", chunks, grad_size);
    dyt = Rows(Kokkos::view_alloc(Kokkos::WithoutInitializing, "halo3d::convTranspose3dFilterRow"),
               chunks, ew * qpad);
  }
  Kokkos::parallel_for(
      "halo3d::convTranspose3dFilterHost", Policy(exec, 0, chunks), [=](const index_t chunk) {
        T* grad = &partial(chunk, 0);
        T* bgrad = grad + taps * R * qpad;
        T* row_t = ew > 0 ? &dyt(chunk, 0) : nullptr;
        for (index_t c = 0; c < ew; ++c)
          for (index_t q = Q; q < qpad; ++q)
            row_t[c * qpad + q] = T(0);
        const TapAxis axw = ax[2];
        const index_t period = axw.divisor;
        for (index_t row = rows * chunk / chunks; row < rows * (chunk + 1) / chunks; ++row) {
          const index_t ch = h0 + row % eh, cd = d0 + (row / eh) % ed, n = row / (eh * ed);
          const T* dyrow = &dy(n, 0, cd + ys[0], ch + ys[1], 0) + ys[2] + w0;
          for (index_t q = 0; q < Q; ++q)
            for (index_t c = 0; c < ew; ++c)
              row_t[c * qpad + q] = dyrow[q * dy_cstride + c];
          if (has_bias)
            for (index_t c = 0; c < ew; ++c)
              for (index_t q = 0; q < Q; ++q)
                bgrad[q] += row_t[c * qpad + q];
          for (int kd = 0; kd < KD; ++kd) {
            index_t id;
            if (!ax[0].source(cd, kd, id)) continue;
            for (int kh = 0; kh < KH; ++kh) {
              index_t ih;
              if (!ax[1].source(ch, kh, ih)) continue;
              const T* xrow = &x(n, 0, id + xs[0], ih + xs[1], 0) + xs[2];
              for (int kw = 0; kw < KW; ++kw) {
                T* gtap = grad + ((kd * KH + kh) * KW + kw) * R * qpad;
                for (index_t ph = 0; ph < std::min(period, ew); ++ph) {
                  // Cells w0 + ph + m * period, m < count, read source cells first + m * scale.
                  const index_t num = (w0 + ph) * axw.scale + axw.offset + kw * axw.step;
                  if (num % period != 0) continue;
                  const index_t first = num / period, count = (ew - ph + period - 1) / period;
                  const index_t m0 = std::max<index_t>(0, ceilDiv(axw.lo - first, axw.scale));
                  const index_t m1 = std::min(count, floorDiv(axw.hi - 1 - first, axw.scale) + 1);
                  if (m0 >= m1) continue;
                  const T* xs0 = xrow + first;
                  const T* d = row_t + ph * qpad;
                  for (index_t qb = 0; qb < qpad; qb += CB) {
                    index_t r = 0;
                    for (; r + MR <= R; r += MR)
                      filterBlock<MR, CB>(gtap + r * qpad + qb, qpad, xs0 + r * x_cstride,
                                          x_cstride, axw.scale, d + qb, period * qpad, m0, m1);
                    for (; r < R; ++r)
                      filterBlock<1, CB>(gtap + r * qpad + qb, qpad, xs0 + r * x_cstride, x_cstride,
                                         axw.scale, d + qb, period * qpad, m0, m1);
                  }
                }
              }
            }
          }
        }
      });
  Kokkos::parallel_for(
      "halo3d::convTranspose3dFilterSum", Policy(exec, 0, R * Q * taps + Q), [=](const index_t e) {
        if (e >= R * Q * taps) {
          if (!has_bias) return;
          const index_t q = e - R * Q * taps;
          T sum = accumulate ? db(q) : T(0);
          for (index_t c = 0; c < chunks; ++c)
            sum += partial(c, taps * R * qpad + q);
          db(q) = sum;
          return;
        }
        const index_t tap = e % taps, q = (e / taps) % Q, r = e / (taps * Q);
        const int kw = int(tap % KW), kh = int((tap / KW) % KH), kd = int(tap / (KW * KH));
        T sum = accumulate ? dw(r, q, kd, kh, kw) : T(0);
        for (index_t c = 0; c < chunks; ++c)
          sum += partial(c, (tap * R + r) * qpad + q);
        dw(r, q, kd, kh, kw) = sum;
      });
}

}  // namespace halo3d::kernels::impl
