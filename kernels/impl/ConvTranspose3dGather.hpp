#pragma once
// The gather kernel behind transposed-convolution forward and backward-data (ConvTranspose3dTaps):
//   dst(n, q, c) = bias(q) + sum_{taps k, channels r} src(n, r, source(c, k)) * weight(r, q, k)
// where weight(r, q, k) = w(r, q, k) for forward (r = input channel) and w(q, r, k) for
// backward-data.
//
// Two paths, same arithmetic order per cell (taps kd, kh, kw, then channels r):
// - device: one destination element per work item; what a GPU runs, and testable on the host;
// - host: one (sample, d, h) row and one block of output channels per work item. Weights are first
//   packed to (tap, r, q) with q padded to a cache line, so the innermost loop is a contiguous run
//   of q; cells of one phase share every weight load, and their accumulators stay in registers
//   over taps and channels.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <type_traits>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/HostScratchpad.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dTaps.hpp"

namespace halo3d::kernels::impl {

template <class T, class MemorySpace>
struct GatherConv {
  Kokkos::View<const T*****, Kokkos::LayoutRight, MemorySpace> src;  // (N, R, ...) allocation
  Extents3 src_shift{};                                              // local = global + shift
  Kokkos::View<const T*****, Kokkos::LayoutRight, MemorySpace> w;    // (I, O, kD, kH, kW)
  bool swap_channels = false;                                        // weight(r, q, k) = w(q, r, k)
  Kokkos::View<const T*, Kokkos::LayoutRight, MemorySpace> bias;     // (Q) or empty
  Kokkos::View<T*****, Kokkos::LayoutRight, MemorySpace> dst;        // (N, Q, ...) allocation
  Extents3 dst_shift{};
  Box dst_box;  // global destination cells
  Kokkos::Array<TapAxis, 3> axes;

  KOKKOS_INLINE_FUNCTION T weight(index_t r, index_t q, int kd, int kh, int kw) const {
    return swap_channels ? w(q, r, kd, kh, kw) : w(r, q, kd, kh, kw);
  }
};

template <class ExecSpace, class T, class MemorySpace>
void gatherConvDevice(const ExecSpace& exec, const GatherConv<T, MemorySpace>& p) {
  const index_t N = index_t(p.dst.extent(0)), Q = index_t(p.dst.extent(1));
  const index_t R = index_t(p.src.extent(1));
  const Box& box = p.dst_box;
  const index_t ed = box.extent(0), eh = box.extent(1), ew = box.extent(2);
  const index_t d0 = box.min(0), h0 = box.min(1), w0 = box.min(2);
  const index_t sd = p.src_shift[0], sh = p.src_shift[1], sw = p.src_shift[2];
  const index_t td = p.dst_shift[0], th = p.dst_shift[1], tw = p.dst_shift[2];
  Kokkos::parallel_for(
      "halo3d::convTranspose3dGather",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, N * Q * ed * eh * ew),
      KOKKOS_LAMBDA(const index_t e) {
        index_t t = e;
        const index_t cw = w0 + t % ew;
        t /= ew;
        const index_t ch = h0 + t % eh;
        t /= eh;
        const index_t cd = d0 + t % ed;
        t /= ed;
        const index_t q = t % Q, n = t / Q;
        T acc = p.bias.extent(0) > 0 ? p.bias(q) : T(0);
        for (int kd = 0; kd < p.axes[0].taps; ++kd) {
          index_t id;
          if (!p.axes[0].source(cd, kd, id)) continue;
          for (int kh = 0; kh < p.axes[1].taps; ++kh) {
            index_t ih;
            if (!p.axes[1].source(ch, kh, ih)) continue;
            for (int kw = 0; kw < p.axes[2].taps; ++kw) {
              index_t iw;
              if (!p.axes[2].source(cw, kw, iw)) continue;
              for (index_t r = 0; r < R; ++r)
                acc += p.src(n, r, id + sd, ih + sh, iw + sw) * p.weight(r, q, kd, kh, kw);
            }
          }
        }
        p.dst(n, q, cd + td, ch + th, cw + tw) = acc;
      });
}

// acc[j][.] += sum_r x[r * x_cstride + j * x_step] * wt[r * w_stride + .] for M cells and CB
// channels. The sums live in a local copy: through the reference they could alias x and wt, and the
// compiler would keep them in memory.
template <int M, int CB, class T>
inline void gatherCells(T (&acc)[M][CB], const T* x, index_t x_step, index_t x_cstride, const T* wt,
                        index_t w_stride, index_t R) {
  T sums[M][CB];
  for (int j = 0; j < M; ++j) {
    HALO3D_CONV_TRANSPOSE3D_SIMD
    for (int cq = 0; cq < CB; ++cq)
      sums[j][cq] = acc[j][cq];
  }
  for (index_t r = 0; r < R; ++r, x += x_cstride, wt += w_stride)
    for (int j = 0; j < M; ++j) {
      const T xv = x[j * x_step];
      HALO3D_CONV_TRANSPOSE3D_SIMD
      for (int cq = 0; cq < CB; ++cq)
        sums[j][cq] += xv * wt[cq];
    }
  for (int j = 0; j < M; ++j) {
    HALO3D_CONV_TRANSPOSE3D_SIMD
    for (int cq = 0; cq < CB; ++cq)
      acc[j][cq] = sums[j][cq];
  }
}

template <class ExecSpace, class T, class MemorySpace>
void gatherConvHost(const ExecSpace& exec, const GatherConv<T, MemorySpace>& p) {
  constexpr int CB = HostBlocking<T>::channels, M = HostBlocking<T>::cells;
  using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  const auto src = p.src;
  const auto w = p.w;
  const auto bias = p.bias;
  const auto dst = p.dst;
  const Kokkos::Array<TapAxis, 3> ax = p.axes;
  const bool swap = p.swap_channels, has_bias = bias.extent(0) > 0;
  const index_t N = index_t(dst.extent(0)), Q = index_t(dst.extent(1)), R = index_t(src.extent(1));
  const index_t qpad = HostBlocking<T>::paddedChannels(Q), nqb = qpad / CB;
  const int KD = ax[0].taps, KH = ax[1].taps, KW = ax[2].taps;

  // packed(tap, r, q) = weight(r, q, tap), zero for the padding channels q >= Q; in host memory
  // from the scratchpad (kernels/HostScratchpad.hpp), as the filter pass's partial sums.
  using Packed = Kokkos::View<T***, Kokkos::LayoutRight, MemorySpace>;
  const index_t taps = index_t(KD) * KH * KW;
  ScratchpadLease scratch(exec);
  Packed packed;
  if constexpr (std::is_same<MemorySpace, Kokkos::HostSpace>::value)
    packed = Packed(scratch.take<T>(std::size_t(taps * R * qpad)), taps, R, qpad);
  else
    packed =
        Packed(Kokkos::view_alloc(Kokkos::WithoutInitializing, "halo3d::convTranspose3dPacked"),
               taps, R, qpad);
  Kokkos::parallel_for("halo3d::convTranspose3dPack",
                       Policy(exec, 0, index_t(KD) * KH * KW * R * qpad), [=](const index_t e) {
                         const index_t q = e % qpad, r = (e / qpad) % R, tap = e / (qpad * R);
                         const int kw = int(tap % KW), kh = int((tap / KW) % KH),
                                   kd = int(tap / (KW * KH));
                         T v = T(0);
                         if (q < Q) v = swap ? w(q, r, kd, kh, kw) : w(r, q, kd, kh, kw);
                         packed(tap, r, q) = v;
                       });

  const Box& box = p.dst_box;
  const index_t ed = box.extent(0), eh = box.extent(1), ew = box.extent(2);
  const index_t d0 = box.min(0), h0 = box.min(1), w0 = box.min(2);
  const Extents3 ss = p.src_shift, ts = p.dst_shift;
  const index_t x_cstride = index_t(src.stride(1)), y_cstride = index_t(dst.stride(1));
  Kokkos::parallel_for(
      "halo3d::convTranspose3dGatherHost", Policy(exec, 0, N * ed * eh * nqb),
      [=](const index_t item) {
        const index_t qb = item % nqb;
        index_t t = item / nqb;
        const index_t ch = h0 + t % eh;
        t /= eh;
        const index_t cd = d0 + t % ed, n = t / ed;
        const TapAxis axw = ax[2];
        const index_t period = axw.divisor;
        T* out = &dst(n, qb * CB, cd + ts[0], ch + ts[1], 0) + ts[2];
        const int qc = int(std::min<index_t>(CB, Q - qb * CB));
        T start[CB];
        for (int cq = 0; cq < CB; ++cq)
          start[cq] = has_bias && cq < qc ? bias(qb * CB + cq) : T(0);
        for (index_t ph = 0; ph < std::min(period, ew); ++ph) {
          const index_t count = (ew - ph + period - 1) / period;
          for (index_t m0 = 0; m0 < count; m0 += M) {
            const int mc = int(std::min<index_t>(M, count - m0));
            const index_t c_first = w0 + ph + m0 * period;
            T acc[M][CB];
            for (int j = 0; j < M; ++j) {
              HALO3D_CONV_TRANSPOSE3D_SIMD
              for (int cq = 0; cq < CB; ++cq)
                acc[j][cq] = start[cq];
            }
            for (int kd = 0; kd < KD; ++kd) {
              index_t id;
              if (!ax[0].source(cd, kd, id)) continue;
              for (int kh = 0; kh < KH; ++kh) {
                index_t ih;
                if (!ax[1].source(ch, kh, ih)) continue;
                const T* xrow = &src(n, 0, id + ss[0], ih + ss[1], 0) + ss[2];
                for (int kw = 0; kw < KW; ++kw) {
                  const index_t num = c_first * axw.scale + axw.offset + kw * axw.step;
                  if (num % period != 0) continue;
                  const index_t first = num / period;
                  const T* wt = &packed((kd * KH + kh) * KW + kw, 0, qb * CB);
                  if (mc == M && first >= axw.lo && first + (M - 1) * axw.scale < axw.hi) {
                    gatherCells<M, CB>(acc, xrow + first, axw.scale, x_cstride, wt, qpad, R);
                    continue;
                  }
                  for (int j = 0; j < mc; ++j) {
                    const index_t sj = first + j * axw.scale;
                    if (sj < axw.lo || sj >= axw.hi) continue;
                    T one[1][CB];
                    for (int cq = 0; cq < CB; ++cq)
                      one[0][cq] = acc[j][cq];
                    gatherCells<1, CB>(one, xrow + sj, 0, x_cstride, wt, qpad, R);
                    for (int cq = 0; cq < CB; ++cq)
                      acc[j][cq] = one[0][cq];
                  }
                }
              }
            }
            T* cells = out + c_first;
            const index_t cell_stride = period;
            if (qc == CB && mc == M) {
              for (int cq = 0; cq < CB; ++cq)
                for (int j = 0; j < M; ++j)
                  cells[cq * y_cstride + j * cell_stride] = acc[j][cq];
              continue;
            }
            for (int cq = 0; cq < qc; ++cq)
              for (int j = 0; j < mc; ++j)
                cells[cq * y_cstride + j * cell_stride] = acc[j][cq];
          }
        }
      });
}

}  // namespace halo3d::kernels::impl
