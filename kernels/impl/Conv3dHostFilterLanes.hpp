#pragma once
// Host SIMD backward-filter conv3d, fp32, with OUTPUT CHANNELS in the lanes: dw(o, i, t) = sum over
// output cells c of dy(o, c) x(i, c @ t), accumulated as vectors of 16 output channels, one cell at
// a time. Per cell a register tile loads OBV vectors of dy (16 OBV output channels) and broadcasts
// 3 R input values (R (input channel, kd, kh) rows, 3 W taps each), OBV * 3 R FMAs. Against the
// W-vector engine (Conv3dHostBackwardFilter.hpp) it needs no horizontal lane sums, never loads a
// vector across a cache line (the x reads are scalar broadcasts), and a tile's taps along W are
// compile-time displacements of one offset.
//
// dy arrives as NCDHW; each chunk of cells is first copied cell-major (16 x 16 register
// transposes, zero lanes past the last output channel), once per chunk and thread, not per tile.
// Sums are double, added per chunk and tile in a fixed order. Threads split the (input channel,
// kd, kh) rows by input channel, each over all cells and output channels, or, where a thread's
// sums of every row are small or there are fewer input channels than threads, the cells (see the
// work items in conv3dBackwardFilterLanes). The result does not depend on thread timing, and when
// the rows are split not on the thread count. Against the W-vector engine it changes the order of
// the float additions: lanes no longer sum 16 cells of a W vector, each lane sums the chunk's
// cells (more accurate, not bitwise equal).
//
// Padding: rows are ordered so that a tile's rows mostly share their kd tap (and, for the 2-row
// tiles, their kh tap), and such a tile passes over only the W runs of cells whose x plane at kd
// (and row at kh) lies inside the global volume: the other runs read ghosts past the volume, the
// zero padding, and would add exact zeros (3^3 "same" convolutions on 16^3: 4% of the products at
// kd, 4% more at kh). The sums are bitwise those of passing every cell. Ghosts inside the volume (a
// neighbour's halo) are data and read. The order is (kd, input channel, kh) where a tile has more
// than 2 rows: its rows then share x rows (kh and kh + 1 of one channel read overlapping rows over
// a chunk), and (kd, kh, input channel) made (a) (4 input channels, 8-row tiles) 8% and 36% slower
// in 1-thread A/B runs under load. From 4 vectors of output channels (2-row tiles) it is (kd, kh,
// input channel): (d) 64 -> 64 @16^3 took less time in 11 of 12 alternating A/B pairs at 1 and
// 2 threads (0.07% more in the twelfth), the pairs' median change -1.8% at 1 thread and -3.7% at 2;
// (c) 32 -> 64 @32^3 stayed level (medians -0.3% and -0.4%)
// (docs/PERFORMANCE.md, session 24).
//
// On the AMD EPYC machine a 512-bit load that crosses a cache line costs about twice an aligned
// one (a microbenchmark of the W-vector tile's pattern ran at half the FMA peak from L1, the
// broadcast pattern at the peak): the W-vector engine's x loads at W offsets 1 and 2 mostly cross.
//
// Applies to W kernels of 3 with W dilation 1 (any stride: x is read one broadcast value at a time,
// so W strides above 1 come here too rather than to the strided engine); the W-vector engine and,
// for W strides above 1, the strided engine take the rest.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/HostScratchpad.hpp"
#include "halo3d/kernels/impl/Conv3dChecks.hpp"
#include "halo3d/kernels/impl/Conv3dHostDirect.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"
#include "halo3d/kernels/impl/Conv3dSimd.hpp"

namespace halo3d::kernels::impl {

inline constexpr int kLanesTaps = 3;

// Below a whole vector of output channels most lanes would be empty: CosmoFlow's first convolution
// at width 0.25 (4 -> 4 channels, 128^3) took 1.6x as long in a step as on the W-vector engine
// (validation run of 2026-12-02 09:22, docs/scaling.md), so those go to the W-vector engine.
inline constexpr index_t kLanesMinOutputChannels = 16;

inline bool hostFilterLanesApplies(const WindowGeometry& g, index_t output_channels) {
  return g.kernel[2] == kLanesTaps && g.dilation[2] == 1 &&
         output_channels >= kLanesMinOutputChannels;
}

#if HALO3D_CONV3D_AVX512

// Cells per chunk: a 4-vector block's dy copy of the chunk is 128 KiB, streamed from L2 by every
// tile, while the tiles' double-precision flushes come half as often as at 256. In A/B runs under
// load 512 was no slower than 256 on (b)-(e) and 128 and 64 were slower (docs/PERFORMANCE.md).
inline constexpr int kLanesChunk = 512;

// The most a thread's sums for every row of a call may take for the call to split its cells
// rather than its rows between the threads (a quarter of a core's 1 MiB L2, next to a chunk's dy
// copy and x rows). Alternating A/B runs at 2 threads, four rounds (docs/PERFORMANCE.md, session
// 25): split by cells, (a) (14 KiB of sums, 128 MiB of dy) took 27-31 ms against 31-39 split by
// rows, (b) (110 KiB, 32 MiB) 19.0-19.6 against 19.5-20.6, and (e) (221 KiB) stayed level; (c)
// (442 KiB) stayed level in three rounds with a 600 KiB bound, and (d) (884 KiB) ran about 4%
// slower split by cells in three rounds.
inline constexpr index_t kLanesRangeSumsBytes = 256 * 1024;

// dst[k * ld + o] = src[o * stride + k] for k < cells, o < 16: zero where o >= channels. A 16 x 16
// transpose in registers: unpacks of pairs and quads, then two rounds of 128-bit block shuffles.
inline void transposeCells(const float* src, index_t stride, int channels, int cells, float* dst,
                           index_t ld) {
  const __mmask16 m = laneRange<float>(0, cells);
  __m512 r[16], t[16];
  if (channels == 16 && cells == 16) {
#pragma GCC unroll 16
    for (int o = 0; o < 16; ++o)
      r[o] = _mm512_loadu_ps(src + o * stride);
  } else {
    for (int o = 0; o < 16; ++o)
      r[o] = o < channels ? _mm512_maskz_loadu_ps(m, src + o * stride) : _mm512_setzero_ps();
  }
  for (int o = 0; o < 16; o += 2) {
    t[o] = _mm512_maskz_unpacklo_ps(0xffff, r[o], r[o + 1]);
    t[o + 1] = _mm512_maskz_unpackhi_ps(0xffff, r[o], r[o + 1]);
  }
  auto lo = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(
        _mm512_maskz_unpacklo_pd(0xff, _mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  auto hi = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(
        _mm512_maskz_unpackhi_pd(0xff, _mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  for (int o = 0; o < 16; o += 4) {
    r[o] = lo(t[o], t[o + 2]);
    r[o + 1] = hi(t[o], t[o + 2]);
    r[o + 2] = lo(t[o + 1], t[o + 3]);
    r[o + 3] = hi(t[o + 1], t[o + 3]);
  }
  // Block B of r[4 q + j] now holds rows 4 q .. 4 q + 3 at column 4 B + j, and column 4 B + j of
  // the result is block B of r[j], r[4 + j], r[8 + j], r[12 + j]: gather those blocks in two
  // rounds of block shuffles (0x88 picks blocks 0 and 2 of each operand, 0xdd blocks 1 and 3).
  for (int j = 0; j < 4; ++j) {
    t[j] = _mm512_maskz_shuffle_f32x4(0xffff, r[j], r[4 + j], 0x88);
    t[8 + j] = _mm512_maskz_shuffle_f32x4(0xffff, r[j], r[4 + j], 0xdd);
    t[4 + j] = _mm512_maskz_shuffle_f32x4(0xffff, r[8 + j], r[12 + j], 0x88);
    t[12 + j] = _mm512_maskz_shuffle_f32x4(0xffff, r[8 + j], r[12 + j], 0xdd);
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm512_maskz_shuffle_f32x4(0xffff, t[j], t[4 + j], 0x88);
    r[8 + j] = _mm512_maskz_shuffle_f32x4(0xffff, t[j], t[4 + j], 0xdd);
    r[4 + j] = _mm512_maskz_shuffle_f32x4(0xffff, t[8 + j], t[12 + j], 0x88);
    r[12 + j] = _mm512_maskz_shuffle_f32x4(0xffff, t[8 + j], t[12 + j], 0xdd);
  }
  if (cells == 16) {
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k)
      _mm512_storeu_ps(dst + k * ld, r[k]);
  } else {
    for (int k = 0; k < cells; ++k)
      _mm512_storeu_ps(dst + k * ld, r[k]);
  }
}

// One chunk of cells: their x window origins and their dy values, cell-major, `ld` floats a cell;
// the cells [seg[2 k], seg[2 k + 1]) for k < segments are those a tile passes over.
struct LanesChunk {
  const index_t* x_off;
  const float* dy;
  index_t ld;
  const int* seg;
  int segments;
  bool first;  // the first chunk of the range: the tiles store their sums rather than add them
};

// s[l] += a[l] for the 16 lanes (s[l] = a[l] for the first chunk, so that the sums need no
// clearing). The zero-masked forms because GCC 12's plain extract and convert start from
// _mm512_undefined_*, which trips -Wmaybe-uninitialized in its own header.
inline void addToDoubles(double* s, __m512 a, bool first) {
  const __m512d lo = _mm512_maskz_cvtps_pd(
      0xff, _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, _mm512_castps_pd(a), 0)));
  const __m512d hi = _mm512_maskz_cvtps_pd(
      0xff, _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xf, _mm512_castps_pd(a), 1)));
  _mm512_storeu_pd(s, first ? lo : _mm512_add_pd(_mm512_loadu_pd(s), lo));
  _mm512_storeu_pd(s + 8, first ? hi : _mm512_add_pd(_mm512_loadu_pd(s + 8), hi));
}

// Adds to sums[(3 row + kw) * ld + 16 v + lane] (double) the dot products over the chunk's cells
// of dy vector v of the block and x row `row` (of rows [r0, r0 + nr)) at W tap kw.
template <int OBV, int R>
void lanesTile(const float* x, const index_t* row_offset, const LanesChunk& c, index_t r0, int nr,
               double* sums) {
  using S = Simd<float>;
  __m512 acc[OBV][R][kLanesTaps];
#pragma GCC unroll 8
  for (int v = 0; v < OBV; ++v)
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
      for (int k = 0; k < kLanesTaps; ++k)
        acc[v][r][k] = S::zero();
  // One base pointer a row, the cell's offset as index and the W tap as displacement: one
  // addressing form per broadcast, no per-tap offset registers.
  const float* row[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    row[r] = x + row_offset[r0 + std::min(r, nr - 1)];
  for (int g = 0; g < c.segments; ++g)
    for (int q = c.seg[2 * g]; q < c.seg[2 * g + 1]; ++q) {
      const index_t xo = c.x_off[q];
      const float* dp = c.dy + q * c.ld;
      __m512 dv[OBV];
#pragma GCC unroll 8
      for (int v = 0; v < OBV; ++v)
        dv[v] = S::load(dp + 16 * v);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
        for (int k = 0; k < kLanesTaps; ++k) {
          const __m512 xb = S::broadcast(row[r][xo + k]);
#pragma GCC unroll 8
          for (int v = 0; v < OBV; ++v)
            acc[v][r][k] = S::fma(dv[v], xb, acc[v][r][k]);
        }
    }
    // Compile-time indices (the loop unrolled, the rows past nr skipped), so that the accumulators
    // stay in registers.
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
    for (int k = 0; k < kLanesTaps; ++k)
#pragma GCC unroll 8
      for (int v = 0; v < OBV; ++v)
        if (r < nr)
          addToDoubles(sums + ((r0 + r) * kLanesTaps + k) * c.ld + 16 * v, acc[v][r][k], c.first);
}

// Rows per tile for OBV dy vectors: 3 R OBV accumulators, at most 24 of the 32 registers.
template <int OBV>
inline constexpr int kLanesRows = 8 / OBV;

// The W runs of a chunk's cells: cells [first[k], first[k + 1]) share output plane d[k] and row
// h[k]; [d_min, d_max] and [h_min, h_max] bound them.
struct LanesRuns {
  int count = 0;
  int first[kLanesChunk + 1];
  index_t d[kLanesChunk], h[kLanesChunk];
  index_t d_min, d_max, h_min, h_max;
};

// The rows' order, (kd, input channel, kh) or (kd, kh, input channel), and per kd (dimension 0) and
// kh (dimension 1) the output planes or rows [lo, hi) whose x plane or row at that tap lies inside
// the global volume.
struct LanesReach {
  index_t rows_per_kd;  // the part's input channels x kH
  index_t rows_per_kh;  // 1 in (kd, input channel, kh) order, the part's input channels in (kd,
                        // kh, input channel)
  int kernel[2];
  bool skips;  // kernels of at most 8 along D and H
  index_t lo[2][8], hi[2][8];
};

// Tiles of R rows [r0, r0 + R) of [0, rows) (a part's rows, in the reach's order). A tile whose
// rows share kd (or kh) passes over the runs whose output plane reads data at that kd (or row at
// that kh), merged into segments; other tiles, and chunks with no such run, over every cell. The
// segments are built again only where a tile's planes and rows differ from the last built ones:
// consecutive tiles mostly share kd and kh (a 1-thread profile of (d): the kernel's own code went
// from 9.0% to 6.2% of the samples; docs/PERFORMANCE.md, session 25).
template <int OBV>
void lanesRows(const float* x, const index_t* row_offset, index_t rows, const LanesReach& reach,
               const LanesRuns& runs, LanesChunk c, int* seg, double* sums) {
  constexpr int R = kLanesRows<OBV>;
  constexpr index_t kAny[2] = {std::numeric_limits<index_t>::min(),
                               std::numeric_limits<index_t>::max()};
  const int all[2] = {0, runs.first[runs.count]};
  index_t built[4] = {};  // d_lo, d_hi, h_lo, h_hi of the segments in seg
  int built_n = -1;       // their count; -1: none built
  for (index_t r0 = 0; r0 < rows; r0 += R) {
    const int nr = int(std::min<index_t>(R, rows - r0));
    const index_t a = r0, b = a + nr - 1;
    index_t d_lo = kAny[0], d_hi = kAny[1], h_lo = kAny[0], h_hi = kAny[1];
    if (reach.skips && a / reach.rows_per_kd == b / reach.rows_per_kd) {
      const index_t kd = a / reach.rows_per_kd;
      d_lo = reach.lo[0][kd];
      d_hi = reach.hi[0][kd];
    }
    if (reach.skips && (reach.kernel[1] == 1 || a / reach.rows_per_kh == b / reach.rows_per_kh)) {
      const index_t kh = (a / reach.rows_per_kh) % reach.kernel[1];
      h_lo = reach.lo[1][kh];
      h_hi = reach.hi[1][kh];
    }
    c.seg = all;
    c.segments = 1;
    if (runs.d_min < d_lo || runs.d_max >= d_hi || runs.h_min < h_lo || runs.h_max >= h_hi) {
      if (built_n < 0 || built[0] != d_lo || built[1] != d_hi || built[2] != h_lo ||
          built[3] != h_hi) {
        int n = 0;
        for (int k = 0; k < runs.count; ++k)
          if (runs.d[k] >= d_lo && runs.d[k] < d_hi && runs.h[k] >= h_lo && runs.h[k] < h_hi) {
            if (n > 0 && seg[2 * n - 1] == runs.first[k])
              seg[2 * n - 1] = runs.first[k + 1];
            else {
              seg[2 * n] = runs.first[k];
              seg[2 * n + 1] = runs.first[k + 1];
              ++n;
            }
          }
        built[0] = d_lo;
        built[1] = d_hi;
        built[2] = h_lo;
        built[3] = h_hi;
        built_n = n;
      }
      c.seg = seg;
      c.segments = built_n;
    }
    lanesTile<OBV, R>(x, row_offset, c, r0, nr, sums);
  }
}

// This thread's buffer of T, at least n long, from a cache-line boundary. Distinct per T: the sums
// and the dy copy are live together. A std::vector's storage starts 16 or 32 bytes past a line here
// (glibc's malloc), so every 64-byte load of the dy copy crossed two lines. Aligned, the change in
// (d)'s time is within this VM's noise (docs/PERFORMANCE.md, session 23), but the loads are what
// the header says.
template <class T>
T* lanesScratch(index_t n) {
  constexpr std::size_t kLine = 64;
  thread_local std::vector<T> buffer;
  if (buffer.size() < std::size_t(n) + kLine / sizeof(T))
    buffer.resize(std::size_t(n) + kLine / sizeof(T));
  void* p = buffer.data();
  std::size_t space = buffer.size() * sizeof(T);
  return static_cast<T*>(std::align(kLine, std::size_t(n) * sizeof(T), p, space));
}

// The cells of a box walked in order (sample, d, h, w), w fastest.
struct LanesCursor {
  const Conv3dIndexing* ix;
  const Box* box;
  index_t n, d, h, w;
  index_t x_sample, x_plane, x_row, y_sample, y_plane, y_row;

  void seek(index_t q) {
    const index_t e2 = box->extent(2), e1 = box->extent(1), e0 = box->extent(0);
    w = box->min(2) + q % e2;
    const index_t row = q / e2;
    h = box->min(1) + row % e1;
    d = box->min(0) + (row / e1) % e0;
    n = row / (e1 * e0);
  }
  index_t xOff() const {
    return n * x_sample + (ix->inputOf(0, d, 0) + ix->in_shift[0]) * x_plane +
           (ix->inputOf(1, h, 0) + ix->in_shift[1]) * x_row + ix->inputOf(2, w, 0) +
           ix->in_shift[2];
  }
  index_t dyOff() const {
    return n * y_sample + (d + ix->out_shift[0]) * y_plane + (h + ix->out_shift[1]) * y_row + w +
           ix->out_shift[2];
  }
  // Moves k cells along the current row, at most to its end.
  void advance(index_t k) {
    w += k;
    if (w < box->max(2)) return;
    w = box->min(2);
    if (++h < box->max(1)) return;
    h = box->min(1);
    if (++d < box->max(0)) return;
    d = box->min(0);
    ++n;
  }
};

// See conv3dBackwardFilter in kernels/Conv3d.hpp; the caller has run checkBackwardFilter and
// hostFilterLanesApplies.
template <class ExecSpace>
void conv3dBackwardFilterLanes(const ExecSpace& exec, const Tensor<float, ExecSpace>& x,
                               const Tensor<float, ExecSpace>& dy, const WindowGeometry& g,
                               const Conv3dWeightsGradOn<float, ExecSpace>& dw,
                               const Conv3dBiasGradOn<float, ExecSpace>& db, const Box& out_box,
                               bool accumulate) {
  using S = Simd<float>;
  using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  constexpr int V = S::lanes;
  const Conv3dIndexing ix = makeIndexing(g, x, dy);
  const auto& xv = x.view();
  const auto& dyv = dy.view();
  const index_t samples = x.block().localSamples();
  const index_t in_ch = x.block().channels(), out_ch = dy.block().channels();
  const index_t taps = ix.taps(), pairs = in_ch * taps, weights = out_ch * pairs;
  const index_t rows = pairs / kLanesTaps;
  const bool has_bias = db.extent(0) > 0;
  const index_t cells = out_box.empty() ? 0 : samples * out_box.size();

  const LanesCursor start{&ix,
                          &out_box,
                          0,
                          0,
                          0,
                          0,
                          index_t(xv.stride_0()),
                          index_t(xv.stride_2()),
                          index_t(xv.stride_3()),
                          index_t(dyv.stride_0()),
                          index_t(dyv.stride_2()),
                          index_t(dyv.stride_3())};
  // Work items are (cell range, part): a part is a run of input channels [i0, i1) and its rows,
  // every (kd, kh) of those channels, so each item passes all the output channels over its cells
  // (each thread keeps the widest register tile). Two ways to share the work out:
  // - by parts, one a thread: a thread's rows are its own rows of dw, stored with no partial
  //   sums, but every thread copies all of dy. A part's rows are whole input channels so that its
  //   dw is whole runs of (input channel, tap) weights: with parts cut elsewhere (a run of rows in
  //   (kd, kh, input channel) order) every cache line of dw held both threads' weights, and the
  //   two threads' write-outs, at the end of every call at once, passed the lines between the
  //   cores ((d) at 2 threads: the write-out took 6% of the call against 1.4% at 1 thread);
  // - by cells, into `ranges` (one a thread), each over every row, the ranges' partials summed at
  //   the end: each thread copies only its cells' dy, but holds the sums of every row, which it
  //   reads and writes once a chunk. Taken where those sums are at most kLanesRangeSumsBytes, and
  //   where there are fewer input channels than threads.
  // Either way the result does not depend on thread timing, and by parts not on the thread count.
  const index_t threads = std::max<index_t>(1, index_t(exec.concurrency()));
  const index_t vectors = (out_ch + V - 1) / V;
  const index_t row_sums_bytes = rows * kLanesTaps * vectors * V * index_t(sizeof(double));
  const index_t parts =
      row_sums_bytes <= kLanesRangeSumsBytes ? 1 : std::max<index_t>(1, std::min(threads, in_ch));
  const index_t max_ranges = std::max<index_t>(1, (cells + kLanesChunk - 1) / kLanesChunk);
  const index_t ranges = parts < threads ? std::min(threads / parts, max_ranges) : 1;
  const index_t rows_per_channel = index_t(g.kernel[0]) * g.kernel[1];
  // Rows part by part; in a part, in (kd, input channel, kh) or (kd, kh, input channel) order: x
  // offset of each from a cell's window origin, and its index in dw's (input channel, kd, kh)
  // order, whose pair (i, tap) is row * 3 + kw.
  ScratchpadLease scratch(exec);
  const Kokkos::View<index_t*, Kokkos::HostSpace> row_offset(
      scratch.take<index_t>(std::size_t(rows)), rows);
  const Kokkos::View<index_t*, Kokkos::HostSpace> row_of_dw(
      scratch.take<index_t>(std::size_t(rows)), rows);
  const bool kh_outer = vectors >= 4;  // 2-row tiles (the header's Padding paragraph)
  const auto part_channel = [=](index_t part) { return in_ch * part / parts; };
  for (index_t part = 0; part < parts; ++part) {
    const index_t i0 = part_channel(part), pc = part_channel(part + 1) - i0;
    for (int kd = 0; kd < g.kernel[0]; ++kd)
      for (index_t i = i0; i < i0 + pc; ++i)
        for (int kh = 0; kh < g.kernel[1]; ++kh) {
          const index_t r =
              i0 * rows_per_channel + (kh_outer ? (index_t(kd) * g.kernel[1] + kh) * pc + (i - i0)
                                                : (index_t(kd) * pc + (i - i0)) * g.kernel[1] + kh);
          row_offset(r) = i * index_t(xv.stride_1()) +
                          index_t(kd) * g.dilation[0] * index_t(xv.stride_2()) +
                          index_t(kh) * g.dilation[1] * index_t(xv.stride_3());
          row_of_dw(r) = (i * g.kernel[0] + kd) * g.kernel[1] + kh;
        }
  }
  LanesReach reach{};  // rows_per_kd and rows_per_kh: per part
  reach.skips = g.kernel[0] <= 8 && g.kernel[1] <= 8;
  const Extents3 x_volume = x.block().globalExtents(), y_volume = dy.block().globalExtents();
  for (int d = 0; d < 2; ++d) {
    reach.kernel[d] = g.kernel[d];
    for (int k = 0; k < std::min(g.kernel[d], 8); ++k) {
      reach.lo[d][k] = y_volume[std::size_t(d)];
      reach.hi[d][k] = reach.lo[d][k];
      for (index_t o = 0; o < y_volume[std::size_t(d)]; ++o) {
        const index_t i = ix.inputOf(d, o, k);
        if (i < 0 || i >= x_volume[std::size_t(d)]) continue;
        if (reach.lo[d][k] == y_volume[std::size_t(d)]) reach.lo[d][k] = o;
        reach.hi[d][k] = o + 1;
      }
    }
  }
  const float* x_p = xv.data();
  const float* dy_p = dyv.data();
  const index_t dy_channel = index_t(dyv.stride_1());
  // Blocks of 4, 2 or 1 vectors of 16 output channels; the last vector may be partial.
  const std::vector<ChannelBlock> blocks = channelBlocks(vectors, 4);
  float* dw_p = dw.data();
  float* db_p = has_bias ? db.data() : nullptr;
  auto store = [=](float* dst, double sum) {
    *dst = accumulate ? float(double(*dst) + sum) : float(sum);
  };

  const index_t entries = weights + out_ch;
  const index_t ld = vectors * V;
  const index_t partial_rows = ranges > 1 ? ranges : 0;
  const Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> partial(
      scratch.take<double>(std::size_t(partial_rows * entries)), partial_rows, entries);
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardFilter(host lanes)", Range(exec, 0, ranges * parts),
      [=](index_t item) {
        const index_t part = item % parts, range = item / parts;
        const index_t i0 = part_channel(part), pc = part_channel(part + 1) - i0;
        const index_t r_begin = i0 * rows_per_channel, r_end = r_begin + pc * rows_per_channel;
        const index_t part_rows = r_end - r_begin;
        LanesReach part_reach = reach;
        part_reach.rows_per_kd = pc * g.kernel[1];
        part_reach.rows_per_kh = kh_outer ? pc : 1;
        const bool bias_here = has_bias && part == 0;
        const index_t begin = cells * range / ranges, end = cells * (range + 1) / ranges;
        // The part's sums, pair-major with `ld` output channels a pair, then the bias sums.
        // Per-thread buffers kept between calls (OpenMP's threads persist): fresh ones of this size
        // were several percent of a (d)-sized call in page faults and clearing.
        const index_t bias_at = part_rows * kLanesTaps * ld;
        double* sums = lanesScratch<double>(bias_at + ld);
        float* dy_cells = lanesScratch<float>(kLanesChunk * ld);
        if (begin == end) std::fill(sums, sums + bias_at + ld, 0.0);
        index_t x_off[kLanesChunk], dy_off[kLanesChunk];
        LanesRuns runs;
        int seg[2 * kLanesChunk];
        LanesCursor cur = start;
        cur.seek(begin);
        for (index_t c0 = begin; c0 < end; c0 += kLanesChunk) {
          const int count = int(std::min<index_t>(kLanesChunk, end - c0));
          // Runs of up to 16 cells along a W row: their x origins and where their dy starts; then
          // their dy transposed 16 output channels at a time, vector by vector, so that each of
          // the 16 channels' lines are read in order over the chunk (a stream the hardware
          // prefetchers follow). Run by run, each run read one line of every output channel, each
          // on its own page, and needed a software prefetch of the next run's lines: 64 on (d)
          // (a 1-thread profile of (d): the kernel's own code went from 3.66% to 3.17% of the
          // samples; docs/PERFORMANCE.md, session 25).
          runs.count = 0;
          runs.d_min = runs.h_min = std::numeric_limits<index_t>::max();
          runs.d_max = runs.h_max = std::numeric_limits<index_t>::min();
          for (int q = 0; q < count;) {
            const int run = int(std::min<index_t>({V, out_box.max(2) - cur.w, count - q}));
            runs.first[runs.count] = q;
            runs.d[runs.count] = cur.d;
            runs.h[runs.count] = cur.h;
            dy_off[runs.count++] = cur.dyOff();
            runs.d_min = std::min(runs.d_min, cur.d);
            runs.d_max = std::max(runs.d_max, cur.d);
            runs.h_min = std::min(runs.h_min, cur.h);
            runs.h_max = std::max(runs.h_max, cur.h);
            const index_t x0 = cur.xOff();
            for (int k = 0; k < run; ++k)
              x_off[q + k] = x0 + k * g.stride[2];
            cur.advance(run);
            q += run;
          }
          runs.first[runs.count] = count;
          for (index_t v = 0; v < vectors; ++v) {
            const int channels = int(std::min<index_t>(V, out_ch - v * V));
            const float* src_v = dy_p + v * V * dy_channel;
            for (int k = 0; k < runs.count; ++k) {
              const int q = runs.first[k];
              transposeCells(src_v + dy_off[k], dy_channel, channels, runs.first[k + 1] - q,
                             dy_cells + q * ld + v * V, ld);
            }
          }
          const bool first = c0 == begin;
          for (const ChannelBlock& b : blocks) {
            const LanesChunk block{x_off, dy_cells + b.first * V, ld, nullptr, 0, first};
            const index_t* ro = row_offset.data() + r_begin;
            double* s = sums + b.first * V;
            switch (b.size) {
              case 4:
                lanesRows<4>(x_p, ro, part_rows, part_reach, runs, block, seg, s);
                break;
              case 2:
                lanesRows<2>(x_p, ro, part_rows, part_reach, runs, block, seg, s);
                break;
              default:
                lanesRows<1>(x_p, ro, part_rows, part_reach, runs, block, seg, s);
                break;
            }
          }
          if (bias_here) {
            // Bias sums per chunk in float, then double, as the weights'.
            double* s = sums + bias_at;
            for (index_t v = 0; v < vectors; ++v) {
              __m512 a = S::zero();
              for (int q = 0; q < count; ++q)
                a = S::add(a, S::load(dy_cells + q * ld + v * V));
              alignas(64) float lanes[V];
              S::store(lanes, a);
              for (int l = 0; l < V; ++l)
                s[v * V + l] = (first ? 0.0 : s[v * V + l]) + double(lanes[l]);
            }
          }
        }
        // 5 rows (15 pairs) at a time, so that the sums read stay in L1 while dw's rows are
        // written; a row's 3 pairs are adjacent in dw, so the row is looked up once for 3 weights
        // (a division per weight before). On a 1-thread (d) call the kernel's own code went from
        // 7.1% to 6.5% of the samples.
        constexpr index_t kRowsOut = 5;
        for (index_t a = r_begin; a < r_end; a += kRowsOut) {
          const index_t b = std::min(r_end, a + kRowsOut);
          for (index_t o = 0; o < out_ch; ++o)
            for (index_t r = a; r < b; ++r) {
              const double* sum = sums + (r - r_begin) * kLanesTaps * ld + o;
              const index_t at = o * pairs + row_of_dw(r) * kLanesTaps;
              for (int k = 0; k < kLanesTaps; ++k)
                if (ranges > 1)
                  partial(range, at + k) = sum[k * ld];
                else
                  store(dw_p + at + k, sum[k * ld]);
            }
        }
        if (bias_here)
          for (index_t o = 0; o < out_ch; ++o) {
            const double sum = sums[bias_at + o];
            if (ranges > 1)
              partial(range, weights + o) = sum;
            else
              store(db_p + o, sum);
          }
      });
  if (ranges == 1) return;
  Kokkos::parallel_for("halo3d::conv3dBackwardFilter(host lanes sum)",
                       Range(exec, 0, has_bias ? entries : weights), [=](index_t e) {
                         double sum = 0;
                         for (index_t r = 0; r < ranges; ++r)
                           sum += partial(r, e);
                         store(e < weights ? dw_p + e : db_p + (e - weights), sum);
                       });
}

#endif

}  // namespace halo3d::kernels::impl
