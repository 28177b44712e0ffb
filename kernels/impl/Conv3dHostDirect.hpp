#pragma once
// The direct-convolution engine of the host path, shared by forward and backward-data (both in pull
// form). For every output cell, output channel oc and sample n:
//   out(n, oc, cell) = bias(oc) + sum_t sum_ic wp(t, ic, oc) in(n, ic, cell@t)
// where cell@t is the input cell that tap t of `cell` reads: each pass supplies that mapping as a
// Tiler.
//
// Register tile: OB output channels x R positions, a position being one SIMD vector of consecutive
// W cells of one output row, so OB * R zmm accumulators (8 x 3, 4 x 6, 2 x 8, 1 x 8 all fit the 32
// registers with the R input vectors). Per (tap, input channel) a tile loads its R input vectors
// once and broadcasts OB weights from the repacked layout wp[block][tap][ic][oc in block], which
// keeps each broadcast group contiguous. The accumulators live across all taps and channels and are
// stored once.
//
// Every output value is summed in one order (the call's TapOrder: taps ascending, then input
// channels, or rows of taps, then input channels, then kw; bias last) whichever tile, tail mask or
// tap subset computes it, which is what makes sub-box results bitwise equal to whole-box ones.
//
// Taps that read only padding (input cells past the volume, or dy cells outside dy_box) add exact
// zeros, and a tile leaves out the kd and kh taps that read padding for every one of its positions
// (a 3^3 "same" convolution on 16^3 reads padding with 1 - (14 * 3 + 2 * 2)^2 / 48^2 = 8% of its
// kd/kh taps; kw taps are lanes of one vector, so they stay). Leaving out a term that is an exact
// zero (w * 0 with finite w) changes no bit of the result: the sums start at +0 and never become
// -0 (round to nearest gives -0 only for -0 + -0), and s + (+-0) = s for every other s. To make
// such tiles common, positions are numbered part by part (PositionGrid): the box is cut along D
// and H where the padding taps start and stop, so that the rows of a part share their taps.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/HostScratchpad.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"
#include "halo3d/kernels/impl/Conv3dSimd.hpp"

namespace halo3d::kernels::impl {

#if HALO3D_CONV3D_AVX512

// Positions per tile for OB output channels.
template <int OB>
inline constexpr int kTilePositions = OB >= 8 ? 3 : (OB == 4 ? 6 : 8);
inline constexpr int kMaxTilePositions = 8;

inline int tilePositions(int block) {
  return block >= 8 ? kTilePositions<8> : (block == 4 ? kTilePositions<4> : kTilePositions<1>);
}

// A run of output channels computed by one register tile.
struct ChannelBlock {
  index_t first;
  int size;
};

// Blocks of `largest` (8, 4, 2 or 1) channels, the remainder in halving blocks.
inline std::vector<ChannelBlock> channelBlocks(index_t channels, int largest = 8) {
  std::vector<ChannelBlock> blocks;
  index_t c = 0;
  for (int size = largest; size >= 1; size /= 2)
    for (; c + size <= channels; c += size)
      blocks.push_back({c, size});
  return blocks;
}

// One pass in raw-pointer form. Offsets count elements from the (sample, channel 0) base of a
// tensor.
template <class T>
struct DirectConv {
  const T* in;
  index_t in_sample, in_channel, in_channels;
  T* out;
  index_t out_sample, out_channel;
  // Repacked weights: block b starts at b.first * in_channels * taps and is [tap][ic][oc in block].
  const T* packed;
  const T* bias;  // nullptr: no bias
  int taps;
};

// The DirectConv that reads tensor `in` and writes tensor `out` (`packed` is left to the caller).
template <class T, class In, class Out>
DirectConv<T> directConv(const In& in, const Out& out, const T* bias, int taps) {
  const auto& iv = in.view();
  const auto& ov = out.view();
  DirectConv<T> p{};
  p.in = iv.data();
  p.in_sample = index_t(iv.stride_0());
  p.in_channel = index_t(iv.stride_1());
  p.in_channels = in.block().channels();
  p.out = ov.data();
  p.out_sample = index_t(ov.stride_0());
  p.out_channel = index_t(ov.stride_1());
  p.bias = bias;
  p.taps = taps;
  return p;
}

// The taps of a tile in table form: the taps it reads (taps whose every lane is masked off are left
// out) with, per position, the input offset of lane 0 and the lanes to load.
template <class T>
struct TileTaps {
  int count = 0;
  std::vector<int> tap;
  std::vector<index_t> offset;  // [j * kMaxTilePositions + r]
  std::vector<typename Simd<T>::mask> mask;

  explicit TileTaps(int taps)
      : tap(std::size_t(taps)),
        offset(std::size_t(taps) * kMaxTilePositions),
        mask(offset.size()) {}
};

// How a tile finds its input. Affine: the taps t whose bit is set in tap_bits are read (taps from
// the 65th on always), tap t of position r starts at base[r] + tap_offset[t], and its lanes are
// TileTaps::mask[(t % mask_rows) * kMaxTilePositions + r] (one row of masks for all taps, or one
// per kw tap), so there is no table to build per tap. Table: TileTaps lists the taps and their
// offsets and masks.
enum class TapMode { Affine, Table };

// The order of a tile's sums. TapsOuter: tap by tap, each tap's input channels innermost (one
// load per channel a step, at a constant stride that the out-of-order core runs ahead on).
// RowsOuter, for kernels of 3 W taps at W dilation 1: row (kd, kh) by row, then input channel,
// then kw, so that the 3 taps of a row read the same input lines back to back. Backward-data takes
// it: its input (dy) usually has no ghosts, so its channel stride is a multiple of 4 KiB (16 KiB on
// (d), 1 MiB on (e)) and every channel's line of a position falls in the same L1 set; tap by tap,
// the 64 or 32 channels of (d) and (e) evict each other from the 8 ways before the next kw tap
// reads them again. RowsOuterAscending is the same order for forward, whose tap kw reads kw cells
// after tap 0 (backward-data's, kw cells before): its ghosted input spreads over the L1 sets, but
// reading each line 3 times in a row still measured 2-4% faster on (b) and (e), 0-2% on (d) and
// level on (c); with 4 input channels ((a)) a row's step is too short to pay, and it was 0-3%
// slower at 1 thread (docs/PERFORMANCE.md, session 26).
enum class TapOrder { TapsOuter, RowsOuter, RowsOuterAscending };

// Whether the kernel's taps form the rows of 3 W taps that the RowsOuter orders take (3 W taps at W
// dilation 1). Backward-data runs RowsOuter wherever they do; forward adds its own conditions
// (forwardRowsOuter).
inline bool rowsOuter(const Conv3dIndexing& ix) {
  return ix.kernel[2] == 3 && ix.dilation[2] == 1;
}

// Cells from tap 0 of a row to tap kw, per kw, under a RowsOuter order.
template <TapOrder O>
inline constexpr index_t kRowTapStep = O == TapOrder::RowsOuterAscending ? 1 : -1;

// How many channels ahead the RowsOuter orders prefetch: a row's step is 3 taps of work, so fewer
// steps fit in the out-of-order window than tap by tap, and the hardware prefetchers stop at the 4
// KiB page that a channel stride crosses. Without it RowsOuter was 10-20% slower than TapsOuter on
// (b) and (e); 2 measured ahead of 1 and 4 (docs/PERFORMANCE.md, "Backward-data by rows of taps").
inline constexpr index_t kPrefetchChannels = 2;

// A tile's output positions (offset of lane 0 and lanes to store) and how it reads its input.
template <class T>
struct TileOut {
  index_t offset[kMaxTilePositions];
  typename Simd<T>::mask mask[kMaxTilePositions];
  TapMode mode = TapMode::Affine;
  SimdLoad load = SimdLoad::Full;
  index_t base[kMaxTilePositions];
  const index_t* tap_offset = nullptr;
  std::uint64_t tap_bits = ~std::uint64_t(0);
  int mask_rows = 1;
  typename Simd<T>::index stride_index;
  // Store with non-temporal (streaming) stores: set by directRange when the call streams and every
  // position is a full, 64-byte aligned vector.
  bool stream = false;
  // Affine: the taps (bits by tap index; RowsOuter: a row's first tap) that read a row the tile's
  // next row of positions reads `prefetch_ahead` elements further on, and no other tap of this tile
  // reads: at those taps the tile prefetches its lines there, each input channel's. See
  // ForwardTiler.
  std::uint64_t prefetch_bits = 0;
  index_t prefetch_ahead = 0;
};

// One (tap, input channel) step of a tile: R input vectors, OB broadcasts, OB x R FMAs.
template <class T, int OB, int R, SimdLoad L>
inline void directStep(typename Simd<T>::vec (&acc)[OB][R], const T* const (&src)[R],
                       const typename Simd<T>::mask (&m)[R], const T* wv,
                       typename Simd<T>::index stride_index) {
  using S = Simd<T>;
  typename S::vec xv[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    xv[r] = loadInput<L>(src[r], m[r], stride_index);
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o) {
    const typename S::vec b = S::broadcast(wv[o]);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      acc[o][r] = S::fma(b, xv[r], acc[o][r]);
  }
}

// IC > 0: the pass has exactly IC input channels; the constant trip count lets GCC unroll the
// channel loop whole (no pragma: one would also unroll the generic loop, changing its code).
// runDirect compiles IC = 4, CosmoFlow's first layer ((a) of docs/PERFORMANCE.md): with 4 channels
// a tap is a few dozen cycles, and the loop's counter, compare and exit branch are a visible share
// of that ((a)'s forward 4-6% faster on one thread). IC = 1 (the U-Net's first layer) measured
// level: that layer's 8 output channels make it bound by its stores.
template <class T, int OB, int R, TapMode M, SimdLoad L, int IC, TapOrder O>
void directTile(const DirectConv<T>& p, const ChannelBlock& blk, index_t n, const TileTaps<T>& taps,
                const TileOut<T>& out) {
  using S = Simd<T>;
  typename S::vec acc[OB][R];
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o)
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      acc[o][r] = S::zero();
  const T* in_n = p.in + n * p.in_sample;
  const T* w_block = p.packed + blk.first * p.in_channels * p.taps;
  const int count = M == TapMode::Affine ? p.taps : taps.count;
  const index_t channels = IC > 0 ? index_t(IC) : p.in_channels;
  if constexpr (O != TapOrder::TapsOuter) {
    // Rows of 3 taps (kw = 0, 1, 2 of one kd, kh, W dilation 1: tap kw reads kRowTapStep<O> * kw
    // cells on from tap 0; TileTaps lists whole rows), each row's channels outermost: its 3 taps
    // read the same input lines one after another.
    constexpr index_t step = kRowTapStep<O>;
    // The first and last cell that a position's 3 taps read, from tap 0's first.
    constexpr index_t first = std::min<index_t>(0, 2 * step);
    constexpr index_t last = first + Simd<T>::lanes + 1;
    const index_t w_step = p.in_channels * OB;  // from one tap's weights to the next's
    for (int j0 = 0; j0 < count; j0 += 3) {
      if (M == TapMode::Affine && j0 < 64 && !((out.tap_bits >> j0) & 1)) continue;
      const int t0 = M == TapMode::Affine ? j0 : taps.tap[std::size_t(j0)];
      const T* src[R];
      typename S::mask mk[3][R] = {};
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        src[r] =
            in_n + (M == TapMode::Affine ? out.base[r] + out.tap_offset[t0]
                                         : taps.offset[std::size_t(j0) * kMaxTilePositions + r]);
        if constexpr (L != SimdLoad::Full)
#pragma GCC unroll 3
          for (int k = 0; k < 3; ++k) {
            const int row = M == TapMode::Affine ? (out.mask_rows == 1 ? 0 : k) : j0 + k;
            mk[k][r] = taps.mask[std::size_t(row) * kMaxTilePositions + r];
          }
      }
      const bool ahead = M == TapMode::Affine && j0 < 64 && ((out.prefetch_bits >> j0) & 1);
      // One pointer per kw tap's weights, each stepped by OB a channel.
      const T* wk[3] = {w_block + index_t(t0) * w_step, w_block + index_t(t0 + 1) * w_step,
                        w_block + index_t(t0 + 2) * w_step};
      for (index_t ic = 0; ic < channels; ++ic) {
#pragma GCC unroll 3
        for (int k = 0; k < 3; ++k) {
          typename S::vec xv[R];
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r)
            xv[r] = loadInput<L>(src[r] + step * k, mk[k][r], out.stride_index);
#pragma GCC unroll 8
          for (int o = 0; o < OB; ++o) {
            const typename S::vec b = S::broadcast(wk[k][o]);
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r)
              acc[o][r] = S::fma(b, xv[r], acc[o][r]);
          }
        }
#pragma GCC unroll 3
        for (int k = 0; k < 3; ++k) {
          wk[k] += OB;
          // Opaque to GCC, so that it keeps three base registers: knowing wk[1] and wk[2] as wk[0]
          // plus multiples of w_step, it addressed each of their 2 OB broadcasts by an offset of
          // its own, reloaded from the stack (and spilled an accumulator).
          asm("" : "+r"(wk[k]));
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          // The lines of the first and last cells that the row reads, kPrefetchChannels channels
          // ahead (past the last channel too: a prefetch never faults).
          _mm_prefetch(
              reinterpret_cast<const char*>(src[r] + kPrefetchChannels * p.in_channel + first),
              _MM_HINT_T0);
          _mm_prefetch(
              reinterpret_cast<const char*>(src[r] + kPrefetchChannels * p.in_channel + last),
              _MM_HINT_T0);
          if (ahead) {
            _mm_prefetch(reinterpret_cast<const char*>(src[r] + out.prefetch_ahead + first),
                         _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(src[r] + out.prefetch_ahead + last),
                         _MM_HINT_T0);
          }
          src[r] += p.in_channel;
        }
      }
    }
  } else {
    typename S::mask m[R] = {};
    int mask_row = 0;
    // One flat loop over the taps, the left-out ones tested by their bit: with few input channels
    // (4 on (a)) a tap is a few dozen cycles, and nested kd/kh/kw loops cost (a)'s forward 20%.
    for (int j = 0; j < count; ++j) {
      const int row = mask_row;
      mask_row = mask_row + 1 == out.mask_rows ? 0 : mask_row + 1;
      if (M == TapMode::Affine && j < 64 && !((out.tap_bits >> j) & 1)) continue;
      const int t = M == TapMode::Affine ? j : taps.tap[std::size_t(j)];
      const T* w_tap = w_block + index_t(t) * p.in_channels * OB;
      const T* src[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        if constexpr (M == TapMode::Affine) {
          src[r] = in_n + out.base[r] + out.tap_offset[t];
          if constexpr (L != SimdLoad::Full)
            m[r] = taps.mask[std::size_t(row) * kMaxTilePositions + r];
        } else {
          src[r] = in_n + taps.offset[std::size_t(j) * kMaxTilePositions + r];
          m[r] = taps.mask[std::size_t(j) * kMaxTilePositions + r];
        }
      }
      // A loop of its own for the prefetching taps: one loop testing a flag per channel measured
      // slower at 2 threads ((d) forward 0.93-0.94 of oneDNN against 1.00-1.06, two A/B rounds).
      if (M == TapMode::Affine && j < 64 && ((out.prefetch_bits >> j) & 1)) {
        for (index_t ic = 0; ic < channels; ++ic) {
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r)
            _mm_prefetch(reinterpret_cast<const char*>(src[r] + out.prefetch_ahead), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(src[R - 1] + out.prefetch_ahead + S::lanes),
                       _MM_HINT_T0);
          directStep<T, OB, R, L>(acc, src, m, w_tap + ic * OB, out.stride_index);
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r)
            src[r] += p.in_channel;
        }
        continue;
      }
      for (index_t ic = 0; ic < channels; ++ic) {
        directStep<T, OB, R, L>(acc, src, m, w_tap + ic * OB, out.stride_index);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r)
          src[r] += p.in_channel;
      }
    }
  }
  T* out_n = p.out + n * p.out_sample;
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o) {
    T* dst = out_n + (blk.first + o) * p.out_channel;
    if (p.bias) {
      const typename S::vec b = S::broadcast(p.bias[blk.first + o]);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
        acc[o][r] = S::add(acc[o][r], b);
    }
    if (out.stream) {
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
        S::stream(dst + out.offset[r], acc[o][r]);
    } else {
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
        S::store(dst + out.offset[r], acc[o][r], out.mask[r]);
    }
  }
}

// The taps [begin, end) of one dimension that read data rather than padding, for every coordinate
// of [first, first + n): those k with reads(o, k), which must be one run of k per o. Coordinates
// whose every tap reads padding get the empty span [0, 0).
struct TapSpan {
  int begin, end;
};

class TapSpans {
 public:
  TapSpans() = default;
  template <class Reads>
  TapSpans(index_t first, index_t n, int kernel, Reads reads)
      : _first(first), _kernel(kernel), _spans(std::size_t(std::max<index_t>(n, 0))) {
    for (index_t i = 0; i < n; ++i) {
      TapSpan s{kernel, 0};
      for (int k = 0; k < kernel; ++k)
        if (reads(first + i, k)) {
          s.begin = std::min(s.begin, k);
          s.end = k + 1;
        }
      _spans[std::size_t(i)] = s.begin < s.end ? s : TapSpan{0, 0};
    }
  }

  TapSpan operator()(index_t o) const { return _spans[std::size_t(o - _first)]; }

  // The coordinates [lo, hi) of [min, max) whose every tap reads data: where PositionGrid cuts.
  // hi = lo = max when there are none.
  void fullRange(index_t min, index_t max, index_t& lo, index_t& hi) const {
    lo = max;
    hi = max;
    for (index_t o = min; o < max; ++o)
      if (full(o)) {
        if (lo == max) lo = o;
        hi = o + 1;
      }
  }

 private:
  bool full(index_t o) const {
    const TapSpan s = (*this)(o);
    return s.begin == 0 && s.end == _kernel;
  }

  index_t _first = 0;
  int _kernel = 0;
  std::vector<TapSpan> _spans;
};

// TileOut::tap_bits of the taps (kd, kh, kw), t = (kd kH + kh) kW + kw, with kd in span d and kh
// in span h (every kw): two table look-ups a tile. Every bit for kernels of more than 64 taps.
class TapBits {
 public:
  TapBits() = default;
  explicit TapBits(const int (&kernel)[3])
      : _kd(kernel[0]), _kh(kernel[1]), _all(kernel[0] * kernel[1] * kernel[2] > 64) {
    if (_all) return;
    const int kw = kernel[2];
    const std::uint64_t row = kw == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << kw) - 1;
    _d.assign(std::size_t((_kd + 1) * (_kd + 1)), 0);
    _h.assign(std::size_t((_kh + 1) * (_kh + 1)), 0);
    for (int b = 0; b <= _kd; ++b)
      for (int e = b; e <= _kd; ++e)
        for (int kd = b; kd < e; ++kd)
          for (int kh = 0; kh < _kh; ++kh)
            _d[std::size_t(b * (_kd + 1) + e)] |= row << ((kd * _kh + kh) * kw);
    for (int b = 0; b <= _kh; ++b)
      for (int e = b; e <= _kh; ++e)
        for (int kd = 0; kd < _kd; ++kd)
          for (int kh = b; kh < e; ++kh)
            _h[std::size_t(b * (_kh + 1) + e)] |= row << ((kd * _kh + kh) * kw);
  }

  // Whether operator() leaves taps out (false: it sets every bit).
  bool exact() const { return !_all; }

  std::uint64_t operator()(TapSpan d, TapSpan h) const {
    if (_all) return ~std::uint64_t(0);
    return _d[std::size_t(d.begin * (_kd + 1) + d.end)] &
           _h[std::size_t(h.begin * (_kh + 1) + h.end)];
  }

 private:
  int _kd = 0, _kh = 0;
  bool _all = true;
  std::vector<std::uint64_t> _d, _h;
};

// Where the W vectors ("positions") of an output box lie. The box is cut along D and H at lo[d]
// and hi[d] into up to 3 x 3 parts (the Tiler's cuts: the rows before lo and from hi on read
// padding with some taps), numbered part after part, D part by D part and H part by H part; in a
// part, position q is W vector q % vectors of row q / vectors in (D, H) order. Consecutive
// positions thus share their padding taps except where a part ends, and stay as local as in plain
// (D, H) order: a part of boundary rows runs across planes, whose input planes overlap.
struct PositionGrid {
  Box box;
  index_t vectors;
  int parts = 0;
  Box part[9];
  index_t first[10] = {};  // the first position of each part; first[parts] counts them all

  PositionGrid(const Box& b, int lanes, const index_t (&lo)[2], const index_t (&hi)[2])
      : box(b), vectors((b.extent(2) + lanes - 1) / lanes) {
    index_t cut[2][4];
    for (int d = 0; d < 2; ++d) {
      const index_t l = std::clamp(lo[d], b.min(d), b.max(d));
      cut[d][0] = b.min(d);
      cut[d][1] = l;
      cut[d][2] = std::clamp(hi[d], l, b.max(d));
      cut[d][3] = b.max(d);
    }
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const Box p({cut[0][i], cut[1][j], b.min(2)}, {cut[0][i + 1], cut[1][j + 1], b.max(2)});
        if (p.empty()) continue;
        part[parts] = p;
        first[parts + 1] = first[parts] + p.extent(0) * p.extent(1) * vectors;
        ++parts;
      }
  }
  index_t positions() const { return first[parts]; }
};

// Positions [begin, end) of one sample for one channel block, R at a time; the last tile repeats
// its last position, which stores the same values twice. Tiles run across rows, planes and parts,
// so narrow volumes waste nothing but the very last tile. With `stream`, tiles of full aligned
// vectors store with non-temporal stores (the caller checked the channel and sample strides). The
// Tiler maps a tile's positions (global cells d, h, w of lane 0 and lane counts) to its input and
// output, and says where PositionGrid cuts a box:
//   void tile(const index_t* d, const index_t* h, const index_t* w, const int* lanes, int R,
//             TileTaps<T>&, TileOut<T>&) const
//   void cuts(const Box&, index_t (&lo)[2], index_t (&hi)[2]) const
template <class T, int OB, int IC, TapOrder O, class Tiler>
void directRange(const DirectConv<T>& p, const ChannelBlock& blk, index_t n,
                 const PositionGrid& grid, index_t begin, index_t end, const Tiler& tiler,
                 TileTaps<T>& taps, TileOut<T>& out, bool stream) {
  constexpr int R = kTilePositions<OB>;
  constexpr int V = Simd<T>::lanes;
  if (begin >= end) return;
  const Box& box = grid.box;
  index_t d[R], h[R], w[R];
  int lanes[R];
  // Position begin's part, row (as d, h) and vector, advanced one position at a time: no
  // divisions per tile.
  int k = 0;
  while (begin >= grid.first[k + 1])
    ++k;
  const Box* part = &grid.part[k];
  const index_t q = begin - grid.first[k], row0 = q / grid.vectors;
  index_t cd = part->min(0) + row0 / part->extent(1), ch = part->min(1) + row0 % part->extent(1);
  index_t cv = q % grid.vectors;
  for (index_t p0 = begin; p0 < end; p0 += R) {
    for (int r = 0; r < R; ++r) {
      d[r] = cd;
      h[r] = ch;
      w[r] = box.min(2) + cv * V;
      lanes[r] = int(std::min<index_t>(V, box.max(2) - w[r]));
      // The last tile repeats position end - 1; a next position exists, so a next part too.
      if (p0 + r + 1 < end && ++cv == grid.vectors) {
        cv = 0;
        if (++ch == part->max(1)) {
          ch = part->min(1);
          if (++cd == part->max(0)) {
            part = &grid.part[++k];
            cd = part->min(0);
            ch = part->min(1);
          }
        }
      }
    }
    tiler.tile(d, h, w, lanes, R, taps, out);
    out.stream = stream;
    for (int r = 0; r < R && out.stream; ++r)
      out.stream = lanes[r] == V && out.offset[r] % V == 0;
    if (out.mode == TapMode::Table) {
      directTile<T, OB, R, TapMode::Table, SimdLoad::Masked, IC, O>(p, blk, n, taps, out);
      continue;
    }
    switch (out.load) {
      case SimdLoad::Full:
        directTile<T, OB, R, TapMode::Affine, SimdLoad::Full, IC, O>(p, blk, n, taps, out);
        break;
      case SimdLoad::Masked:
        directTile<T, OB, R, TapMode::Affine, SimdLoad::Masked, IC, O>(p, blk, n, taps, out);
        break;
      case SimdLoad::Gather:
        directTile<T, OB, R, TapMode::Affine, SimdLoad::Gather, IC, O>(p, blk, n, taps, out);
        break;
    }
  }
}

// L2 bytes a work item's input rows may take (of 1 MiB per core), next to the weights and outputs.
inline constexpr index_t kInputChunkBytes = 768 * 1024;

// Calls that write at least this much output store it with non-temporal stores where its vectors
// are aligned: an output that large does not stay in the caches for its reader anyway (it is at
// least half of the 32 MiB L3 that a core shares), and ordinary stores first read every line they
// write (doubling the memory traffic) and evict the input rows that the next channel block reads.
// On (a) (128 MiB out) that traffic held two threads to 1.4x one thread.
inline constexpr index_t kStreamBytes = index_t(16) << 20;

// The work items of the host engines, taken dynamically (each thread takes the next free item):
// the cores of a shared machine do not run at one speed (one vCPU here ran 20-30% slower than the
// other for minutes at a time, docs/scaling.md), and with a static split the faster thread waited
// for the slower at the end of every call. Dynamic: 1.04-1.10x on two threads ((b), (d), (e)
// backward-data; PERFORMANCE.md). Each item writes its own outputs in a fixed order, so the result
// does not depend on which thread ran it.
template <class ExecSpace>
using HostItems =
    Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>, Kokkos::IndexType<index_t>>;

// Runs the pass over every sample and output cell of `box`, in parallel over (sample, chunk of
// positions, channel block), blocks fastest so that the items of one chunk, whichever threads take
// them, read the same input rows while they are in the caches. `row_bytes` is what one output row
// reads of the input (all channels and kernel planes); a sample's positions are cut into as many
// chunks as needed for each to fit kInputChunkBytes, the cuts at multiples of every R in use (so
// that only a sample's last tile is partial) and as even as that allows (HostItems). `packed`
// comes from packWeights.
template <TapOrder O = TapOrder::TapsOuter, class ExecSpace, class T, class Tiler>
void runDirect(const ExecSpace& exec, const char* label, DirectConv<T> p,
               const Kokkos::View<T*, Kokkos::HostSpace>& packed, index_t out_channels,
               index_t samples, const Box& box, index_t row_bytes, const Tiler& tiler) {
  if (box.empty() || samples == 0) return;
  p.packed = packed.data();
  const std::vector<ChannelBlock> blocks = channelBlocks(out_channels);
  index_t lo[2], hi[2];
  tiler.cuts(box, lo, hi);
  const PositionGrid grid(box, Simd<T>::lanes, lo, hi);
  const index_t positions = grid.positions();
  // Cut i of `chunks` lies at i * positions / chunks rounded to a multiple of all_r: with (d)'s
  // 256 positions (64 channels at 16^3) that gives chunks of 51, 51, 51, 51, 52, so each of two
  // threads gets 1020 or 1028 position-blocks; rounding every chunk up to a multiple of 3 gave
  // 54, 54, 54, 54, 40 (1080 and 968), and of 24, 72, 72, 72, 40.
  index_t all_r = 1;
  for (const ChannelBlock& b : blocks)
    all_r = std::lcm(all_r, index_t(tilePositions(b.size)));
  const index_t rows = std::max<index_t>(1, kInputChunkBytes / std::max<index_t>(row_bytes, 1));
  const index_t target = std::max<index_t>(rows * grid.vectors, 2 * all_r);
  const index_t chunks =
      std::max<index_t>(1, std::min((positions + target - 1) / target, positions / all_r));
  const auto cut = [=](index_t i) {
    return i >= chunks ? positions : (i * positions / chunks + all_r / 2) / all_r * all_r;
  };
  const index_t nb = index_t(blocks.size());
  const bool stream = samples * out_channels * box.size() * index_t(sizeof(T)) >= kStreamBytes &&
                      p.out_channel % Simd<T>::lanes == 0 && p.out_sample % Simd<T>::lanes == 0 &&
                      reinterpret_cast<std::uintptr_t>(p.out) % 64 == 0;
  Kokkos::parallel_for(
      label, HostItems<ExecSpace>(exec, 0, samples * chunks * nb), [=](index_t item) {
        const ChannelBlock& blk = blocks[std::size_t(item % nb)];
        const index_t c = (item / nb) % chunks;
        const index_t begin = cut(c), end = cut(c + 1);
        const index_t n = item / (nb * chunks);
        TileTaps<T> taps(p.taps);
        TileOut<T> out;
        const auto range = [&](auto ic) {
          constexpr int IC = decltype(ic)::value;
          switch (blk.size) {
            case 8:
              directRange<T, 8, IC, O>(p, blk, n, grid, begin, end, tiler, taps, out, stream);
              break;
            case 4:
              directRange<T, 4, IC, O>(p, blk, n, grid, begin, end, tiler, taps, out, stream);
              break;
            case 2:
              directRange<T, 2, IC, O>(p, blk, n, grid, begin, end, tiler, taps, out, stream);
              break;
            default:
              directRange<T, 1, IC, O>(p, blk, n, grid, begin, end, tiler, taps, out, stream);
              break;
          }
        };
        if (p.in_channels == 4)
          range(std::integral_constant<int, 4>());
        else
          range(std::integral_constant<int, 0>());
        // Non-temporal stores are weakly ordered: drain them before the item counts as done.
        if (stream) _mm_sfence();
      });
}

// Weights (O, I, taps) repacked for blocks over `dim` (0: blocks of output channels, as forward
// reads them; 1: blocks of input channels, as backward-data reads them): block b holds [tap][other
// channel][b's channels], in `scratch` (valid while the lease lasts). Packed in parallel, one
// (block, tap) item at a time: serial, (d)'s 110 K weights took 2.8% of a 2-thread forward, with
// the other thread idle.
template <class T, class ExecSpace, class WeightView>
Kokkos::View<T*, Kokkos::HostSpace> packWeights(const ExecSpace& exec, const WeightView& w, int dim,
                                                ScratchpadLease& scratch) {
  const index_t o_n = index_t(w.extent(0)), i_n = index_t(w.extent(1));
  const index_t taps = index_t(w.extent(2) * w.extent(3) * w.extent(4));
  const index_t blocked = dim == 0 ? o_n : i_n, other = dim == 0 ? i_n : o_n;
  const auto packed = scratch.view<T>(std::size_t(o_n * i_n * taps));
  const T* src = w.data();
  T* dst = packed.data();
  // Written in order through raw pointers, with the source strides hoisted.
  const index_t k_stride = (dim == 0 ? i_n : 1) * taps, c_stride = (dim == 0 ? 1 : i_n) * taps;
  const std::vector<ChannelBlock> blocks = channelBlocks(blocked);
  Kokkos::parallel_for("halo3d::conv3d packWeights",
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(
                           exec, 0, index_t(blocks.size()) * taps),
                       [=](index_t item) {
                         const ChannelBlock& b = blocks[std::size_t(item / taps)];
                         const index_t t = item % taps;
                         const T* src_t = src + b.first * k_stride + t;
                         T* out = dst + b.first * other * taps + t * other * b.size;
                         for (index_t c = 0; c < other; ++c) {
                           const T* src_c = src_t + c * c_stride;
                           for (int k = 0; k < b.size; ++k)
                             *out++ = src_c[k * k_stride];
                         }
                       });
  return packed;
}

#endif

}  // namespace halo3d::kernels::impl
