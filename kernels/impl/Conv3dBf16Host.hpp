#pragma once
// The host bf16 conv3d forward engine (AVX512-BF16, stride and dilation 1). vdpbf16ps multiplies
// pairs of bf16 and adds both products to one float lane, so the engine pairs input channels:
//   - x is re-laid out per sample as 32-bit pairs (channel 2p, channel 2p+1) per cell ("xp":
//     [D][H][pair][W] of the allocation, ghosts included), one pass over x;
//   - the weights, rounded to bf16, as pairs [o block][pair][tap][8 output channels], so that one
//     32-bit broadcast feeds a tap of a channel pair for one output channel;
//   - a register tile is 8 output channels x 3 rows x 16 W cells (24 float accumulators): per
//     (pair, tap) it loads 3 vectors of 16 pairs and 8 broadcasts for 24 vdpbf16ps, i.e. 768
//     multiply-adds.
// A tail of O is padded with zero weights (computed, not stored); W tails are masked lanes. Each
// output is summed in float, channel pairs outer, taps inner, and rounded once on the store.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/KernelTypes.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"

#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define HALO3D_CONV3D_AVX512BF16 1
#include <immintrin.h>
#else
#define HALO3D_CONV3D_AVX512BF16 0
#endif

namespace halo3d::kernels::impl {

inline bool bf16EngineApplies(const WindowGeometry& g) {
#if HALO3D_CONV3D_AVX512BF16
  for (int d = 0; d < 3; ++d)
    if (g.stride[d] != 1 || g.dilation[d] != 1) return false;
  return true;
#else
  (void)g;
  return false;
#endif
}

#if HALO3D_CONV3D_AVX512BF16

inline constexpr int kBf16Block = 8;  // output channels per register tile
inline constexpr int kBf16Rows = 3;   // output rows per register tile
inline constexpr int kBf16Lanes = 16;

// One register tile: R rows of up to 16 cells, 8 output channels. `x` points at the pair of the
// tile's first input cell (channel pair 0, tap 0) in xp, `wt` at the o block's weight pairs.
template <int R, bool Full = false>
inline void bf16Tile(const std::uint32_t* x, index_t pair_stride, index_t plane, index_t row,
                     const std::uint32_t* wt, int pairs, int kd, int kh, int kw, __mmask16 m,
                     const float* bias, std::uint16_t* y, index_t y_channel, index_t y_row) {
  // Fully unrolled, so that the accumulators live in registers (GCC keeps a looped-over array of
  // 24 zmm on the stack otherwise, a load and a store around every vdpbf16ps).
  __m512 acc[R][kBf16Block];
#pragma GCC unroll 3
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < kBf16Block; ++j)
      acc[r][j] = _mm512_setzero_ps();
  for (int p = 0; p < pairs; ++p) {
    const std::uint32_t* xc = x + p * pair_stride;
    for (int a = 0; a < kd; ++a)
      for (int bh = 0; bh < kh; ++bh)
        for (int c = 0; c < kw; ++c, wt += kBf16Block) {
          __m512i v[R];
          const std::uint32_t* xr = xc + a * plane + bh * row + c;
#pragma GCC unroll 3
          for (int r = 0; r < R; ++r)
            v[r] =
                Full ? _mm512_loadu_si512(xr + r * row) : _mm512_maskz_loadu_epi32(m, xr + r * row);
#pragma GCC unroll 8
          for (int j = 0; j < kBf16Block; ++j) {
            const __m512i wj = _mm512_set1_epi32(int(wt[j]));
#pragma GCC unroll 3
            for (int r = 0; r < R; ++r)
              acc[r][j] = _mm512_dpbf16_ps(acc[r][j], (__m512bh)v[r], (__m512bh)wj);
          }
        }
  }
  for (int j = 0; j < kBf16Block; ++j) {
    const __m512 bj = _mm512_set1_ps(bias[j]);
    for (int r = 0; r < R; ++r) {
      const __m256bh out = _mm512_cvtneps_pbh(_mm512_add_ps(acc[r][j], bj));
      _mm256_mask_storeu_epi16(y + j * y_channel + r * y_row, m, (__m256i)out);
    }
  }
}

template <class ExecSpace, class WView, class BView>
void conv3dForwardBf16Host(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x, const WView& w,
                           const BView& b, const WindowGeometry& g,
                           const Tensor<bf16, ExecSpace>& y, const Box& out_box) {
  if (out_box.empty()) return;
  const Conv3dIndexing ix = makeIndexing(g, x, y);
  const auto xv = x.view();
  const auto yv = y.view();
  const index_t N = index_t(yv.extent(0)), O = index_t(yv.extent(1)), C = index_t(xv.extent(1));
  const index_t Da = index_t(xv.extent(2)), Ha = index_t(xv.extent(3)), Wa = index_t(xv.extent(4));
  const int pairs = int((C + 1) / 2);
  const int kd = g.kernel[0], kh = g.kernel[1], kw = g.kernel[2], taps = kd * kh * kw;
  const index_t blocks = (O + kBf16Block - 1) / kBf16Block;

  // Weight pairs, zero past O and past C.
  std::vector<std::uint32_t> wp(std::size_t(blocks * pairs * taps * kBf16Block), 0u);
  for (index_t o = 0; o < O; ++o)
    for (int p = 0; p < pairs; ++p)
      for (int t = 0; t < taps; ++t) {
        const int a = t / (kh * kw), bh = (t / kw) % kh, c = t % kw;
        const std::uint32_t lo = bf16(w(o, 2 * p, a, bh, c)).bits;
        const std::uint32_t hi = 2 * p + 1 < C ? bf16(w(o, 2 * p + 1, a, bh, c)).bits : 0u;
        wp[std::size_t((((o / kBf16Block) * pairs + p) * taps + t) * kBf16Block + o % kBf16Block)] =
            lo | (hi << 16);
      }
  std::vector<float> bias(std::size_t(blocks * kBf16Block), 0.0f);
  for (index_t o = 0; o < O; ++o)
    bias[std::size_t(o)] = b.extent(0) > 0 ? b(o) : 0.0f;

  // xp is [D][H][pair][W]: the rows a tile reads for one (d, h) are one contiguous stretch.
  const index_t pair_stride = Wa, row = index_t(pairs) * Wa, plane = Ha * row;
  std::vector<std::uint32_t> xp(std::size_t(Da * plane));
  const index_t ed = out_box.extent(0), eh = out_box.extent(1), ew = out_box.extent(2);
  const index_t row_tiles = (eh + kBf16Rows - 1) / kBf16Rows;
  const index_t w_tiles = (ew + kBf16Lanes - 1) / kBf16Lanes;
  const std::uint32_t* wpd = wp.data();
  const float* biasd = bias.data();
  std::uint32_t* xpd = xp.data();
  using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  for (index_t n = 0; n < N; ++n) {
    // One pass: x's sample n as channel pairs.
    Kokkos::parallel_for(
        "halo3d::conv3dBf16Pairs", Policy(exec, 0, Da * Ha), KOKKOS_LAMBDA(const index_t dh) {
          const index_t d = dh / Ha, h = dh % Ha;
          for (index_t p = 0; p < pairs; ++p) {
            const std::uint16_t* lo = &xv(n, 2 * p, d, h, 0).bits;
            const std::uint16_t* hi = 2 * p + 1 < C ? &xv(n, 2 * p + 1, d, h, 0).bits : nullptr;
            std::uint32_t* out = xpd + d * plane + h * row + p * pair_stride;
            for (index_t i = 0; i < Wa; ++i)
              out[i] = std::uint32_t(lo[i]) | (hi ? std::uint32_t(hi[i]) << 16 : 0u);
          }
        });
    // Output-channel blocks vary fastest, so the blocks of one (d, rows) reuse its input from
    // cache.
    Kokkos::parallel_for(
        "halo3d::conv3dBf16Tiles", Policy(exec, 0, blocks * ed * row_tiles),
        KOKKOS_LAMBDA(const index_t item) {
          const index_t blk = item % blocks, rt = (item / blocks) % row_tiles;
          const index_t d = out_box.min(0) + item / (blocks * row_tiles);
          const index_t h = out_box.min(1) + rt * kBf16Rows;
          const int rows = int(std::min<index_t>(kBf16Rows, out_box.max(1) - h));
          const index_t o0 = blk * kBf16Block;
          const std::uint32_t* wt = wpd + blk * pairs * taps * kBf16Block;
          for (index_t wtile = 0; wtile < w_tiles; ++wtile) {
            const index_t wc = out_box.min(2) + wtile * kBf16Lanes;
            const int lanes = int(std::min<index_t>(kBf16Lanes, out_box.max(2) - wc));
            const __mmask16 m = __mmask16((1u << lanes) - 1u);
            const std::uint32_t* xs = xpd + (ix.inputOf(0, d, 0) + ix.in_shift[0]) * plane +
                                      (ix.inputOf(1, h, 0) + ix.in_shift[1]) * row +
                                      ix.inputOf(2, wc, 0) + ix.in_shift[2];
            const index_t valid = std::min<index_t>(kBf16Block, O - o0);
            std::uint16_t* ys =
                &yv(n, o0, d + ix.out_shift[0], h + ix.out_shift[1], wc + ix.out_shift[2]).bits;
            const index_t yc = index_t(yv.stride(1)), yr = index_t(yv.stride(3));
            if (valid == kBf16Block) {
              const float* bb = biasd + o0;
              if (rows == 3 && lanes == kBf16Lanes)
                bf16Tile<3, true>(xs, pair_stride, plane, row, wt, pairs, kd, kh, kw, m, bb, ys, yc,
                                  yr);
              else if (rows == 3)
                bf16Tile<3>(xs, pair_stride, plane, row, wt, pairs, kd, kh, kw, m, bb, ys, yc, yr);
              else if (rows == 2)
                bf16Tile<2>(xs, pair_stride, plane, row, wt, pairs, kd, kh, kw, m, bb, ys, yc, yr);
              else
                bf16Tile<1>(xs, pair_stride, plane, row, wt, pairs, kd, kh, kw, m, bb, ys, yc, yr);
            } else {
              // A tail block of O: compute into a scratch row set, store the valid channels.
              alignas(64) std::uint16_t scratch[kBf16Block * kBf16Rows * kBf16Lanes];
              const float* bb = biasd + o0;
              const index_t sc = kBf16Rows * kBf16Lanes, sr = kBf16Lanes;
              if (rows == 3)
                bf16Tile<3>(xs, pair_stride, plane, row, wt, pairs, kd, kh, kw, m, bb, scratch, sc,
                            sr);
              else if (rows == 2)
                bf16Tile<2>(xs, pair_stride, plane, row, wt, pairs, kd, kh, kw, m, bb, scratch, sc,
                            sr);
              else
                bf16Tile<1>(xs, pair_stride, plane, row, wt, pairs, kd, kh, kw, m, bb, scratch, sc,
                            sr);
              for (index_t j = 0; j < valid; ++j)
                for (int r = 0; r < rows; ++r)
                  for (int l = 0; l < lanes; ++l)
                    ys[j * yc + r * yr + l] = scratch[j * sc + r * sr + l];
            }
          }
        });
    fence(exec, "bf16 conv tiles done");  // xp is refilled for the next sample
  }
}

#endif

}  // namespace halo3d::kernels::impl
