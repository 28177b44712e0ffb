#pragma once
// The host bf16 conv3d engine (AVX512-BF16, stride and dilation 1): forward and backward-data.
// vdpbf16ps multiplies pairs of bf16 and adds both products to one float lane, so the engine pairs
// input channels:
//   - x is re-laid out as 32-bit pairs (channel 2p, channel 2p+1) per cell, plane by plane into a
//     ring of kD planes ([H][pair][W] of the allocation, ghosts included), one pass over x;
//   - the weights, rounded to bf16, as pairs [o block][pair][tap][8 output channels], so that one
//     32-bit broadcast feeds a tap of a channel pair for one output channel;
//   - a register tile is 8 output channels x 3 rows x 16 W cells (24 float accumulators): per
//     (pair, tap) it loads 3 vectors of 16 pairs and 8 broadcasts for 24 vdpbf16ps, i.e. 768
//     multiply-adds; a remainder of rows runs as 2-row tiles (1-row only where the box has 1 row).
// A tail of O is padded with zero weights (computed, not stored); W tails are masked lanes. Each
// output is summed in float, channel pairs outer, taps inner, and rounded once on the store.
// Taps that read only padding (cells outside the global volume in forward, outside dy's box in
// backward-data) are skipped per tile and row (Bf16TileTaps).
// Backward-data at stride 1 runs the same tiles on dy with the weights transposed and flipped.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/HostScratchpad.hpp"
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

// The taps (a, bh) of one tile that read cells of the input that exist: a in [a_lo, a_hi), and
// tap bh of tile row r when v_lo <= r + bh < v_hi. The others read zero padding (outside the
// global volume in forward, outside dy's box in backward-data) and are skipped, as oneDNN skips
// them: on a 16^3 block with 3^3 "same" windows the first and last planes and rows are an eighth
// of the products. Skipping adds the same non-zero products in the same order.
struct Bf16TileTaps {
  int a_lo, a_hi;
  index_t v_lo, v_hi;
};

// The bias added to a tile's sums, rounded to bf16 and stored (masked W lanes).
template <int R>
__attribute__((always_inline)) inline void bf16TileStore(const __m512 (&acc)[R][kBf16Block],
                                                         __mmask16 m, const float* bias,
                                                         std::uint16_t* y, index_t y_channel,
                                                         index_t y_row) {
  for (int j = 0; j < kBf16Block; ++j) {
    const __m512 bj = _mm512_set1_ps(bias[j]);
    for (int r = 0; r < R; ++r) {
      const __m256bh out = _mm512_cvtneps_pbh(_mm512_add_ps(acc[r][j], bj));
      _mm256_mask_storeu_epi16(y + j * y_channel + r * y_row, m, (__m256i)out);
    }
  }
}

// Which row of a tile skips one bh tap: none, the first (the tile starts on the volume's first
// row: tap bh = 0 reads padding for it) or the last (the tile ends on the last row: bh = kh - 1).
enum class Bf16Edge { None, Top, Bottom };

// One register tile: R rows of up to 16 cells, 8 output channels. planes[a] is the packed input
// plane that tap a along D reads, `x` the offset in it of the tile's first input cell (channel
// pair 0, tap 0), `wt` points at the o block's weight pairs; the D taps [a_lo, a_hi) are read, and
// the edge row E (if any) leaves out its padding bh tap, a branch that is the same for the kw taps
// of one bh. Only these two fixed row sets: with a choice of six row subsets in the loop GCC kept
// the accumulators on the stack. KW > 0 is kw known at compile time: the kw loop unrolled (3-tap
// windows, every model layer) made (d) C64_K64_D16 2-5% faster, interleaved A/B in
// docs/PERFORMANCE.md; also unrolling kh gave nothing more.
template <int R, bool Full, Bf16Edge E, int KW = 0>
__attribute__((always_inline)) inline void bf16TileBody(
    const std::uint32_t* const* planes, index_t x, index_t pair_stride, index_t row,
    const std::uint32_t* wt, int pairs, int kd, int kh, int kw, int a_lo, int a_hi, __mmask16 m,
    const float* bias, std::uint16_t* y, index_t y_channel, index_t y_row) {
  // Fully unrolled, so that the accumulators live in registers (GCC keeps a looped-over array of
  // 24 zmm on the stack otherwise, a load and a store around every vdpbf16ps).
  __m512 acc[R][kBf16Block];
#pragma GCC unroll 3
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < kBf16Block; ++j)
      acc[r][j] = _mm512_setzero_ps();
  constexpr int edge = E == Bf16Edge::Top ? 0 : R - 1;
  const int skip_bh = E == Bf16Edge::None ? -1 : (E == Bf16Edge::Top ? 0 : kh - 1);
  const index_t plane_taps = index_t(kh) * kw * kBf16Block;  // the weights of one (pair, a)
  for (int p = 0; p < pairs; ++p) {
    const index_t xc = x + p * pair_stride;
    const std::uint32_t* w = wt + (index_t(p) * kd + a_lo) * plane_taps;
    for (int a = a_lo; a < a_hi; ++a)
      for (int bh = 0; bh < kh; ++bh) {
        const bool skip = E != Bf16Edge::None && bh == skip_bh;
#pragma GCC unroll 3
        for (int c = 0; c < (KW > 0 ? KW : kw); ++c, w += kBf16Block) {
          __m512i v[R];
          const std::uint32_t* xr = planes[a] + xc + bh * row + c;
#pragma GCC unroll 3
          for (int r = 0; r < R; ++r)
            v[r] =
                Full ? _mm512_loadu_si512(xr + r * row) : _mm512_maskz_loadu_epi32(m, xr + r * row);
#pragma GCC unroll 8
          for (int j = 0; j < kBf16Block; ++j) {
            const __m512i wj = _mm512_set1_epi32(int(w[j]));
#pragma GCC unroll 3
            for (int r = 0; r < R; ++r)
              if (E == Bf16Edge::None || r != edge || !skip)
                acc[r][j] = _mm512_dpbf16_ps(acc[r][j], (__m512bh)v[r], (__m512bh)wj);
          }
        }
      }
  }
  bf16TileStore<R>(acc, m, bias, y, y_channel, y_row);
}

// The edge tiles in their own functions, so that their register allocation does not touch the
// common tile's loop (inlined into the tiles' loop; sharing one function with the edge rows' branch
// made it 10% slower on (b) C16_K32_D64).
template <int R, bool Full, Bf16Edge E, int KW>
__attribute__((noinline)) void bf16EdgeTile(const std::uint32_t* const* planes, index_t x,
                                            index_t pair_stride, index_t row,
                                            const std::uint32_t* wt, int pairs, int kd, int kh,
                                            int kw, int a_lo, int a_hi, __mmask16 m,
                                            const float* bias, std::uint16_t* y, index_t y_channel,
                                            index_t y_row) {
  static_assert(R >= 2, "a 1-row tile on an edge reads no padding row that another row needs");
  bf16TileBody<R, Full, E, KW>(planes, x, pair_stride, row, wt, pairs, kd, kh, kw, a_lo, a_hi, m,
                               bias, y, y_channel, y_row);
}

// The tile for tt: the common tile (Bf16Edge::None) where every row reads every bh tap; an edge
// tile where only the first or the last row skips one; otherwise the common tile over every bh,
// the rows' padding included (windows taller than the tile, or a tile on both edges: not the
// models' layers).
template <int R, bool Full = false, int KW = 0>
inline void bf16AnyTileW(const std::uint32_t* const* planes, index_t x, index_t pair_stride,
                         index_t row, const std::uint32_t* wt, int pairs, int kd, int kh, int kw,
                         const Bf16TileTaps& tt, __mmask16 m, const float* bias, std::uint16_t* y,
                         index_t y_channel, index_t y_row) {
  const bool lo_all = tt.v_lo <= 0, hi_all = tt.v_hi >= R + kh - 1;
  if constexpr (R >= 2) {
    if (tt.v_lo == 1 && hi_all)
      return bf16EdgeTile<R, Full, Bf16Edge::Top, KW>(planes, x, pair_stride, row, wt, pairs, kd,
                                                      kh, kw, tt.a_lo, tt.a_hi, m, bias, y,
                                                      y_channel, y_row);
    if (lo_all && tt.v_hi == R + kh - 2)
      return bf16EdgeTile<R, Full, Bf16Edge::Bottom, KW>(planes, x, pair_stride, row, wt, pairs, kd,
                                                         kh, kw, tt.a_lo, tt.a_hi, m, bias, y,
                                                         y_channel, y_row);
  }
  bf16TileBody<R, Full, Bf16Edge::None, KW>(planes, x, pair_stride, row, wt, pairs, kd, kh, kw,
                                            tt.a_lo, tt.a_hi, m, bias, y, y_channel, y_row);
}

// bf16AnyTileW with kw = 3 fixed at compile time where it is.
template <int R, bool Full = false>
inline void bf16AnyTile(const std::uint32_t* const* planes, index_t x, index_t pair_stride,
                        index_t row, const std::uint32_t* wt, int pairs, int kd, int kh, int kw,
                        const Bf16TileTaps& tt, __mmask16 m, const float* bias, std::uint16_t* y,
                        index_t y_channel, index_t y_row) {
  if (kw == 3)
    return bf16AnyTileW<R, Full, 3>(planes, x, pair_stride, row, wt, pairs, kd, kh, kw, tt, m, bias,
                                    y, y_channel, y_row);
  bf16AnyTileW<R, Full>(planes, x, pair_stride, row, wt, pairs, kd, kh, kw, tt, m, bias, y,
                        y_channel, y_row);
}

// 16 floats' bits rounded to bf16 (nearest even), in the low half of each lane: bf16BitsOf
// (core/BFloat16.hpp) in integer lanes rather than vcvtneps2bf16, which flushes subnormals to zero
// and so would round some weights differently from the reference and the generic path. (The
// zero-masking forms: GCC 12 warns on the unmasked ones.)
inline __m512i bf16BitsOf16(__m512i u) {
  const __mmask16 all = 0xffff;
  const __m512i top = _mm512_maskz_srli_epi32(all, u, 16);
  const __m512i up =
      _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(top, _mm512_set1_epi32(1)));
  const __m512i r = _mm512_maskz_srli_epi32(all, _mm512_add_epi32(u, up), 16);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_or_epi32(r, nan, top, _mm512_set1_epi32(0x40));
}

// out[i] = bf16(f[i]).bits for i < n, 16 at a time.
inline void bf16BitsOfFloats(const float* f, index_t n, std::uint16_t* out) {
  for (index_t i = 0; i < n; i += kBf16Lanes) {
    const __mmask16 m = n - i >= kBf16Lanes ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1u);
    _mm512_mask_cvtepi32_storeu_epi16(out + i, m, bf16BitsOf16(_mm512_maskz_loadu_epi32(m, f + i)));
  }
}

// Where an engine convolution reads its float weights: weight (o, c, tap t) of its `out` output
// and `in` input channels is w[o * s_out + c * s_in + t], or tap taps - 1 - t when `flip`; the
// taps of one (o, c) are contiguous.
struct Bf16WeightSource {
  const float* w;
  index_t s_out, s_in;
  bool flip;
};

// Runs f(i) for i in [0, n): a parallel_for, or a plain loop where exec has one thread. The
// engine launches two loops per output plane (packing and tiles), and a Kokkos launch costs
// microseconds on the host even on one thread (2.2-3.8 us for an empty one on the CI machine,
// docs/PERFORMANCE.md, pooling): on (d)'s 16 planes that was a few percent of the call.
template <class ExecSpace, class F>
void bf16HostFor(const ExecSpace& exec, const char* label, index_t n, const F& f) {
  if (exec.concurrency() == 1) {
    for (index_t i = 0; i < n; ++i)
      f(i);
    return;
  }
  Kokkos::parallel_for(label,
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, n), f);
}

// The weights of an engine convolution as bf16 pairs [o block][pair][tap][8 output channels],
// zero past `out` and past `in`, each weight rounded once, in `scratch` (valid while the lease
// lasts). One item per block; per output channel and input channel pair, the taps of the two
// channels are rounded and paired 16 at a time.
template <class ExecSpace>
std::uint32_t* packBf16WeightPairs(const ExecSpace& exec, index_t out, index_t in, index_t taps,
                                   const Bf16WeightSource& src, ScratchpadLease& scratch) {
  const index_t pairs = (in + 1) / 2;
  const index_t blocks = (out + kBf16Block - 1) / kBf16Block;
  std::uint32_t* const wd =
      scratch.take<std::uint32_t>(std::size_t(blocks * pairs * taps * kBf16Block));
  bf16HostFor(
      exec, "halo3d::conv3dBf16WeightPairs", blocks, KOKKOS_LAMBDA(const index_t blk) {
        const int valid = int(std::min<index_t>(kBf16Block, out - blk * kBf16Block));
        std::uint32_t* const qb = wd + blk * pairs * taps * kBf16Block;
        alignas(64) std::uint32_t v[kBf16Lanes];
        for (int j = 0; j < valid; ++j)
          for (index_t p = 0; p < pairs; ++p) {
            // An output channel's weights in input channel order: one stream through memory.
            const float* lo = src.w + (blk * kBf16Block + j) * src.s_out + 2 * p * src.s_in;
            std::uint32_t* const q = qb + p * taps * kBf16Block;
            // Four pairs ahead: the float weights come from memory once per call, and the
            // hardware prefetchers did not run ahead of this loop.
            if (2 * p + 8 < in)
              for (index_t b = 0; b < 2 * taps; b += kBf16Lanes)
                _mm_prefetch(reinterpret_cast<const char*>(lo + 8 * src.s_in + b), _MM_HINT_T0);
            for (index_t t0 = 0; t0 < taps; t0 += kBf16Lanes) {
              const index_t n = std::min<index_t>(kBf16Lanes, taps - t0);
              const __mmask16 m = __mmask16((1u << n) - 1u);
              __m512i pair = bf16BitsOf16(_mm512_maskz_loadu_epi32(m, lo + t0));
              if (2 * p + 1 < in)
                pair = _mm512_or_si512(
                    pair,
                    _mm512_maskz_slli_epi32(
                        m, bf16BitsOf16(_mm512_maskz_loadu_epi32(m, lo + src.s_in + t0)), 16));
              _mm512_store_si512(v, pair);
              for (index_t l = 0; l < n; ++l) {
                const index_t t = src.flip ? taps - 1 - (t0 + l) : t0 + l;
                q[t * kBf16Block + j] = v[l];
              }
            }
          }
        for (index_t k = 0; k < pairs * taps; ++k)
          for (int j = valid; j < kBf16Block; ++j)
            qb[k * kBf16Block + j] = 0u;
      });
  fence(exec, "bf16 weight pairs packed");
  return wd;
}

// w (a rank-5 LayoutRight View in host memory) with the taps of each (output, input) channel
// contiguous, as packBf16WeightPairs reads it: w itself, or a copy in `scratch` where w is padded.
template <class WView>
Kokkos::View<const float*****, Kokkos::LayoutRight, Kokkos::HostSpace> bf16TapsContiguous(
    const WView& w, ScratchpadLease& scratch) {
  static_assert(std::is_same<typename WView::array_layout, Kokkos::LayoutRight>::value,
                "the weights are LayoutRight");
  if (index_t(w.stride(2)) == index_t(w.extent(3) * w.extent(4)) &&
      index_t(w.stride(3)) == index_t(w.extent(4)))
    return w;
  Kokkos::View<float*****, Kokkos::LayoutRight, Kokkos::HostSpace> c(
      scratch.take<float>(w.extent(0) * w.extent(1) * w.extent(2) * w.extent(3) * w.extent(4)),
      w.extent(0), w.extent(1), w.extent(2), w.extent(3), w.extent(4));
  Kokkos::deep_copy(c, w);
  return c;
}

// out[i] = lo[i] | hi[i] << 16 for i < n, hi[i] = 0 where hi is null: two channels of a row as
// the pairs vdpbf16ps reads. (The zero-masking forms: GCC 12 warns on the unmasked ones.)
inline void bf16InterleavePairs(const std::uint16_t* lo, const std::uint16_t* hi, index_t n,
                                std::uint32_t* out) {
  for (index_t i = 0; i < n; i += kBf16Lanes) {
    const __mmask16 m = n - i >= kBf16Lanes ? __mmask16(0xffff) : __mmask16((1u << (n - i)) - 1u);
    __m512i v = _mm512_maskz_cvtepu16_epi32(m, _mm256_maskz_loadu_epi16(m, lo + i));
    if (hi)
      v = _mm512_or_si512(
          v, _mm512_maskz_slli_epi32(
                 m, _mm512_maskz_cvtepu16_epi32(m, _mm256_maskz_loadu_epi16(m, hi + i)), 16));
    _mm512_mask_storeu_epi32(out + i, m, v);
  }
}

// Prefetches n bf16 from p on, into L1 (l1) or L2.
inline void bf16Prefetch(const std::uint16_t* p, index_t n, bool l1) {
  const char* c = reinterpret_cast<const char*>(p);
  for (index_t b = 0; b < 2 * n; b += 64)
    if (l1)
      _mm_prefetch(c + b, _MM_HINT_T0);
    else
      _mm_prefetch(c + b, _MM_HINT_T1);
}

// One packed input plane as channel pairs, [H][pair][W]: the rows a tile reads for one (d, h) are
// one contiguous stretch.
struct Bf16PairLayout {
  index_t pair_stride, row, plane;
  Bf16PairLayout(index_t pairs, index_t h, index_t w)
      : pair_stride(w), row(pairs * w), plane(h * pairs * w) {}
};

// A ring of kd packed input planes: the planes one output plane reads, each packed once per sample
// (the next output plane needs one new plane), kd planes of memory rather than a whole sample's,
// from the call's scratchpad lease.
struct Bf16PlaneRing {
  std::uint32_t* data;        // uninitialised: the packing writes every entry
  std::vector<index_t> held;  // the plane in each slot, -1 if none
  index_t plane;

  Bf16PlaneRing(int kd, index_t plane_size, ScratchpadLease& scratch)
      : data(scratch.take<std::uint32_t>(std::size_t(kd * plane_size))),
        held(std::size_t(kd), -1),
        plane(plane_size) {}
  std::uint32_t* slot(index_t q) { return data + (q % index_t(held.size())) * plane; }
  // Makes planes [q0, q0 + kd) present, packing the missing ones with pack(q, slot pointer), and
  // points planes[a] at plane q0 + a.
  template <class Pack>
  void require(index_t q0, const std::uint32_t** planes, const Pack& pack) {
    const index_t kd = index_t(held.size());
    for (index_t a = 0; a < kd; ++a) {
      const index_t q = q0 + a;
      index_t& h = held[std::size_t(q % kd)];
      if (h != q) {
        pack(q, slot(q));
        h = q;
      }
      planes[a] = slot(q);
    }
  }
  void clear() { std::fill(held.begin(), held.end(), index_t(-1)); }
};

// One output plane of an engine run: `out` channels over an (eh, ew) box of rows and cells;
// `planes` the packed input planes its taps read, `x_off` the offset in them of the window of
// the box's first output cell, `y0` that cell of output channel 0 (channel and H strides yc, yh;
// W stride 1).
struct Bf16EnginePlane {
  const std::uint32_t* const* planes;
  index_t x_off;
  Bf16PairLayout layout;
  const std::uint32_t* wp;  // packBf16WeightPairs
  const float* bias;        // one per output channel, padded to whole blocks
  int pairs, kd, kh, kw;
  index_t out, eh, ew;
  std::uint16_t* y0;
  index_t yc, yh;
  // The taps that read cells that exist (Bf16TileTaps): the plane's D taps [a_lo, a_hi), and tap
  // bh of box row h when v_lo <= h + bh < v_hi.
  int a_lo, a_hi;
  index_t v_lo, v_hi;
};

// The rows of an output plane in tiles of 3, a remainder of 1 taken as 2 + 2 (4 = 3 + 1 would leave
// a 1-row tile: 8 accumulators, whose 8 broadcasts per vector load run at two thirds of the rate).
struct Bf16RowTiles {
  index_t threes, count;
  explicit Bf16RowTiles(index_t rows) : threes(rows / kBf16Rows) {
    index_t rest = rows % kBf16Rows;
    if (rest == 1 && threes > 0) {
      --threes;
      rest += kBf16Rows;
    }
    count = threes + (rest + 1) / 2;
  }
  index_t first(index_t t) const {
    return t < threes ? t * kBf16Rows : threes * kBf16Rows + (t - threes) * 2;
  }
  int rows(index_t t, index_t eh) const {
    return int(std::min<index_t>(t < threes ? kBf16Rows : 2, eh - first(t)));
  }
};

// Every register tile of one output plane. Output-channel blocks vary fastest, so that the blocks
// of one row tile reuse its input from cache.
template <class ExecSpace>
void bf16EngineTiles(const ExecSpace& exec, const Bf16EnginePlane& r) {
  if (r.eh <= 0 || r.ew <= 0 || r.out <= 0) return;
  const index_t blocks = (r.out + kBf16Block - 1) / kBf16Block;
  const Bf16RowTiles row_tiles(r.eh);
  const index_t w_tiles = (r.ew + kBf16Lanes - 1) / kBf16Lanes;
  const index_t taps = index_t(r.kd) * r.kh * r.kw;
  bf16HostFor(
      exec, "halo3d::conv3dBf16Tiles", blocks * row_tiles.count, KOKKOS_LAMBDA(const index_t item) {
        const index_t blk = item % blocks, t = item / blocks;
        const index_t h = row_tiles.first(t);
        const int rows = row_tiles.rows(t, r.eh);
        const index_t o0 = blk * kBf16Block;
        const std::uint32_t* wt = r.wp + blk * r.pairs * taps * kBf16Block;
        const index_t valid = std::min<index_t>(kBf16Block, r.out - o0);
        const float* bb = r.bias + o0;
        const index_t ps = r.layout.pair_stride, row = r.layout.row;
        const std::uint32_t* const* pl = r.planes;
        const Bf16TileTaps tt{r.a_lo, r.a_hi, r.v_lo - h, r.v_hi - h};
        for (index_t wtile = 0; wtile < w_tiles; ++wtile) {
          const index_t wc = wtile * kBf16Lanes;
          const int lanes = int(std::min<index_t>(kBf16Lanes, r.ew - wc));
          const __mmask16 m = __mmask16((1u << lanes) - 1u);
          const index_t xs = r.x_off + h * row + wc;
          std::uint16_t* ys = r.y0 + o0 * r.yc + h * r.yh + wc;
          if (valid == kBf16Block) {
            if (rows == 3 && lanes == kBf16Lanes)
              bf16AnyTile<3, true>(pl, xs, ps, row, wt, r.pairs, r.kd, r.kh, r.kw, tt, m, bb, ys,
                                   r.yc, r.yh);
            else if (rows == 3)
              bf16AnyTile<3>(pl, xs, ps, row, wt, r.pairs, r.kd, r.kh, r.kw, tt, m, bb, ys, r.yc,
                             r.yh);
            else if (rows == 2 && lanes == kBf16Lanes)
              bf16AnyTile<2, true>(pl, xs, ps, row, wt, r.pairs, r.kd, r.kh, r.kw, tt, m, bb, ys,
                                   r.yc, r.yh);
            else if (rows == 2)
              bf16AnyTile<2>(pl, xs, ps, row, wt, r.pairs, r.kd, r.kh, r.kw, tt, m, bb, ys, r.yc,
                             r.yh);
            else
              bf16AnyTile<1>(pl, xs, ps, row, wt, r.pairs, r.kd, r.kh, r.kw, tt, m, bb, ys, r.yc,
                             r.yh);
          } else {
            // A tail block of the output channels: computed into a scratch tile (the weights past
            // `out` are zero), the valid channels stored.
            alignas(64) std::uint16_t scratch[kBf16Block * kBf16Rows * kBf16Lanes];
            const index_t sc = kBf16Rows * kBf16Lanes, sr = kBf16Lanes;
            if (rows == 3)
              bf16AnyTile<3>(pl, xs, ps, row, wt, r.pairs, r.kd, r.kh, r.kw, tt, m, bb, scratch, sc,
                             sr);
            else if (rows == 2)
              bf16AnyTile<2>(pl, xs, ps, row, wt, r.pairs, r.kd, r.kh, r.kw, tt, m, bb, scratch, sc,
                             sr);
            else
              bf16AnyTile<1>(pl, xs, ps, row, wt, r.pairs, r.kd, r.kh, r.kw, tt, m, bb, scratch, sc,
                             sr);
            for (index_t j = 0; j < valid; ++j)
              for (int rr = 0; rr < rows; ++rr)
                for (int l = 0; l < lanes; ++l)
                  ys[j * r.yc + rr * r.yh + l] = scratch[j * sc + rr * sr + l];
          }
        }
      });
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
  const index_t Ha = index_t(xv.extent(3)), Wa = index_t(xv.extent(4));
  const index_t xc = index_t(xv.stride(1)), xd_stride = index_t(xv.stride(2));
  const index_t xh = index_t(xv.stride(3)), Da = index_t(xv.extent(2));
  const int pairs = int((C + 1) / 2);
  const int kd = g.kernel[0], kh = g.kernel[1], kw = g.kernel[2];
  ScratchpadLease scratch(exec);
  const auto wc = bf16TapsContiguous(w, scratch);
  const std::uint32_t* wp = packBf16WeightPairs(
      exec, O, C, index_t(kd) * kh * kw,
      Bf16WeightSource{wc.data(), index_t(wc.stride(0)), index_t(wc.stride(1)), false}, scratch);
  const index_t blocks = (O + kBf16Block - 1) / kBf16Block;
  float* const bias = scratch.take<float>(std::size_t(blocks * kBf16Block));
  for (index_t o = 0; o < blocks * kBf16Block; ++o)
    bias[o] = o < O && b.extent(0) > 0 ? b(o) : 0.0f;

  const Bf16PairLayout layout(pairs, Ha, Wa);
  Bf16PlaneRing ring(kd, layout.plane, scratch);
  std::vector<const std::uint32_t*> planes(static_cast<std::size_t>(kd));
  const index_t d0 = out_box.min(0), h0 = out_box.min(1), w0 = out_box.min(2);
  Bf16EnginePlane run{
      planes.data(),
      (ix.inputOf(1, h0, 0) + ix.in_shift[1]) * layout.row + ix.inputOf(2, w0, 0) + ix.in_shift[2],
      layout,
      wp,
      bias,
      pairs,
      kd,
      kh,
      kw,
      O,
      out_box.extent(1),
      out_box.extent(2),
      nullptr,
      index_t(yv.stride(1)),
      index_t(yv.stride(3)),
      0,
      kd,
      -ix.inputOf(1, h0, 0),
      index_t(x.block().globalExtents()[1]) - ix.inputOf(1, h0, 0)};
  const index_t depth = index_t(x.block().globalExtents()[0]);
  for (index_t n = 0; n < N; ++n) {
    // x's allocation plane xd of sample n as channel pairs. x is read once per call, from
    // memory, and the packing alone would wait for every line: the next pair's channels are
    // prefetched into L1 while a pair is packed, and the plane packed next (xd + 1) into L2, to
    // arrive while the tiles of this plane run.
    const auto pack = [&](index_t xd, std::uint32_t* out) {
      const bool next = xd + 1 < Da;
      bf16HostFor(
          exec, "halo3d::conv3dBf16Pairs", pairs, KOKKOS_LAMBDA(const index_t p) {
            const std::uint16_t* lo = &xv(n, 2 * p, xd, 0, 0).bits;
            const std::uint16_t* hi = 2 * p + 1 < C ? lo + xc : nullptr;
            for (index_t c = 2 * p + 2; c < std::min<index_t>(2 * p + 4, C); ++c)
              bf16Prefetch(lo + (c - 2 * p) * xc, Ha * xh, true);
            for (index_t h = 0; h < Ha; ++h)
              bf16InterleavePairs(lo + h * xh, hi ? hi + h * xh : nullptr, Wa,
                                  out + h * layout.row + p * layout.pair_stride);
            if (next) {
              bf16Prefetch(lo + xd_stride, Ha * xh, false);
              if (hi) bf16Prefetch(hi + xd_stride, Ha * xh, false);
            }
          });
    };
    ring.clear();
    for (index_t d = d0; d < out_box.max(0); ++d) {
      ring.require(ix.inputOf(0, d, 0) + ix.in_shift[0], planes.data(), pack);
      run.a_lo = int(std::clamp<index_t>(-ix.inputOf(0, d, 0), 0, kd));
      run.a_hi = int(std::clamp<index_t>(depth - ix.inputOf(0, d, 0), 0, kd));
      run.y0 = &yv(n, 0, d + ix.out_shift[0], h0 + ix.out_shift[1], w0 + ix.out_shift[2]).bits;
      bf16EngineTiles(exec, run);
      fence(exec, "bf16 conv tiles done");  // the ring's oldest plane is refilled next
    }
  }
}

// Backward-data at stride and dilation 1 is a forward convolution of dy with the weights
// transposed (channels swapped) and flipped (tap k -> K - 1 - k): dx(q) reads dy(q + p - k) =
// dy(q - p' + k') with p' = K - 1 - p, k' = K - 1 - k. Per sample, the dy cells that dx_box reads,
// [dx_box.min - p', dx_box.max - p' + K - 1), are packed plane by plane as pairs of output
// channels into a buffer holding zero where they lie outside dy_box (the pull form's "taps whose
// output cell is in dy_box"), so that the engine needs no ghosts and no bounds tests.
template <class ExecSpace, class WView>
void conv3dBackwardDataBf16Host(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& dy,
                                const WView& w, const WindowGeometry& g,
                                const Tensor<bf16, ExecSpace>& dx, const Box& dx_box,
                                const Box& dy_box) {
  if (dx_box.empty()) return;
  const Conv3dIndexing ix = makeIndexing(g, dx, dy);
  const auto dyv = dy.view();
  const auto dxv = dx.view();
  const index_t N = index_t(dxv.extent(0)), I = index_t(dxv.extent(1));
  const index_t O = index_t(dyv.extent(1));
  const int kd = g.kernel[0], kh = g.kernel[1], kw = g.kernel[2];
  const int pairs = int((O + 1) / 2);
  // Transposed and flipped: dx channel i is the engine's output channel, dy channel o its input.
  ScratchpadLease scratch(exec);
  const auto wc = bf16TapsContiguous(w, scratch);
  const std::uint32_t* wp = packBf16WeightPairs(
      exec, I, O, index_t(kd) * kh * kw,
      Bf16WeightSource{wc.data(), index_t(wc.stride(1)), index_t(wc.stride(0)), true}, scratch);
  const index_t blocks = (I + kBf16Block - 1) / kBf16Block;
  float* const bias = scratch.take<float>(std::size_t(blocks * kBf16Block));
  std::fill(bias, bias + blocks * kBf16Block, 0.0f);

  // The buffer's first cell, global dy coordinates, and its extents.
  Kokkos::Array<index_t, 3> b0, be, lo, hi, shift;
  for (int d = 0; d < 3; ++d) {
    b0[d] = dx_box.min(d) + g.padding[d] - (g.kernel[d] - 1);
    be[d] = dx_box.extent(d) + g.kernel[d] - 1;
    lo[d] = dy_box.min(d);
    hi[d] = dy_box.max(d);
    shift[d] = ix.out_shift[d];
  }
  const Bf16PairLayout layout(pairs, be[1], be[2]);
  Bf16PlaneRing ring(kd, layout.plane, scratch);
  std::vector<const std::uint32_t*> planes(static_cast<std::size_t>(kd));
  Bf16EnginePlane run{planes.data(),
                      0,
                      layout,
                      wp,
                      bias,
                      pairs,
                      kd,
                      kh,
                      kw,
                      I,
                      dx_box.extent(1),
                      dx_box.extent(2),
                      nullptr,
                      index_t(dxv.stride(1)),
                      index_t(dxv.stride(3)),
                      0,
                      kd,
                      lo[1] - b0[1],
                      hi[1] - b0[1]};
  for (index_t n = 0; n < N; ++n) {
    // Buffer plane q (global dy plane b0[0] + q) of sample n.
    const auto pack = [&](index_t q, std::uint32_t* buf) {
      const index_t d = b0[0] + q;
      const bool plane_inside = d >= lo[0] && d < hi[0];
      bf16HostFor(
          exec, "halo3d::conv3dBf16BackwardDataPairs", be[1], KOKKOS_LAMBDA(const index_t hq) {
            const index_t h = b0[1] + hq;
            std::uint32_t* rowp = buf + hq * layout.row;
            const bool inside = plane_inside && h >= lo[1] && h < hi[1];
            // The W range of the buffer row that lies in dy_box.
            const index_t c0 = std::max(b0[2], lo[2]), c1 = std::min(b0[2] + be[2], hi[2]);
            for (index_t p = 0; p < pairs; ++p) {
              std::uint32_t* out = rowp + p * layout.pair_stride;
              if (!inside || c1 <= c0) {
                std::fill(out, out + be[2], 0u);
                continue;
              }
              std::fill(out, out + (c0 - b0[2]), 0u);
              std::fill(out + (c1 - b0[2]), out + be[2], 0u);
              const std::uint16_t* l =
                  &dyv(n, 2 * p, d + shift[0], h + shift[1], c0 + shift[2]).bits;
              const std::uint16_t* u =
                  2 * p + 1 < O ? &dyv(n, 2 * p + 1, d + shift[0], h + shift[1], c0 + shift[2]).bits
                                : nullptr;
              bf16InterleavePairs(l, u, c1 - c0, out + (c0 - b0[2]));
            }
          });
    };
    ring.clear();
    for (index_t dd = 0; dd < dx_box.extent(0); ++dd) {
      ring.require(dd, planes.data(), pack);
      // Buffer plane dd + a is global dy plane b0[0] + dd + a, zero outside [lo[0], hi[0]).
      run.a_lo = int(std::clamp<index_t>(lo[0] - b0[0] - dd, 0, kd));
      run.a_hi = int(std::clamp<index_t>(hi[0] - b0[0] - dd, 0, kd));
      run.y0 = &dxv(n, 0, dx_box.min(0) + dd + ix.in_shift[0], dx_box.min(1) + ix.in_shift[1],
                    dx_box.min(2) + ix.in_shift[2])
                    .bits;
      bf16EngineTiles(exec, run);
      fence(exec, "bf16 backward-data tiles done");  // the ring's oldest plane is refilled next
    }
  }
}

#endif

}  // namespace halo3d::kernels::impl
