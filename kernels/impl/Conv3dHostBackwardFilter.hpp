#pragma once
// Host SIMD backward-filter conv3d: dw(o, i, t) = sum over samples and output cells c of dy(o, c)
// x(i, c @ t), a dot product over the output cells for every weight. Register tile: OB output
// channels x JB (input channel, tap) pairs, OB * JB zmm accumulators; per position (a W vector of
// output cells) it loads OB dy vectors and JB x vectors, and each pair's x vector is x at the
// position's window origin plus a fixed offset (i * channel stride + tap offset), gathered with the
// W stride when it is above 1. Tail vectors of a row are masked on both sides.
//
// Work: (range of positions, group of output channel blocks) items; an item walks its range in
// chunks small enough for a block's dy vectors of the chunk to stay in L1 while every pair group's
// tile passes over them, and reduces each tile's lanes into the group's sums (double). There are no
// atomics and the result does not depend on thread timing.
//
// fp32 with W kernels of 3 (W dilation 1) goes to the output-channel lanes engine instead
// (Conv3dHostFilterLanes.hpp); this one takes double and the other float geometries.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/HostScratchpad.hpp"
#include "halo3d/kernels/impl/Conv3dChecks.hpp"
#include "halo3d/kernels/impl/Conv3dHostDirect.hpp"
#include "halo3d/kernels/impl/Conv3dHostFilterLanes.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"
#include "halo3d/kernels/impl/Conv3dSimd.hpp"

namespace halo3d::kernels::impl {

#if HALO3D_CONV3D_AVX512

// (input channel, tap) pairs per tile for OB output channels.
template <int OB>
inline constexpr int kFilterPairs = OB >= 4 ? 6 : 8;
inline constexpr int kMaxFilterPairs = 8;
// Positions per chunk: OB = 4 dy vectors of 128 positions are 32 KiB, within L1.
inline constexpr int kFilterChunk = 128;

// One W vector of output cells: offsets of its x window origin and of its dy cells (sample
// included, channel 0), and its lanes.
template <class T>
struct FilterPosition {
  index_t x_off, dy_off;
  typename Simd<T>::mask mask;
};

template <class T>
struct FilterPass {
  const T* x;
  const T* dy;
  index_t dy_channel;
  index_t pairs;               // I * taps
  const index_t* pair_offset;  // x offset of each (i, tap) pair from a position's window origin
  typename Simd<T>::index stride_index;
};

// Adds to sums[o * pairs + j] the dot products of dy channel o0 + o with pair j, for o < OB and
// pairs [j0, j0 + nj), over `count` positions.
template <class T, int OB, int JB, SimdLoad L>
void filterTile(const FilterPass<T>& a, const FilterPosition<T>* pos, int count, index_t o0,
                index_t j0, int nj, double* sums) {
  using S = Simd<T>;
  if (count == 0) return;
  typename S::vec acc[OB][JB];
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o)
#pragma GCC unroll 8
    for (int j = 0; j < JB; ++j)
      acc[o][j] = S::zero();
  index_t off[JB];
#pragma GCC unroll 8
  for (int j = 0; j < JB; ++j)
    off[j] = a.pair_offset[j0 + std::min(j, nj - 1)];
  const T* dy = a.dy + o0 * a.dy_channel;
  for (int q = 0; q < count; ++q) {
    const T* xp = a.x + pos[q].x_off;
    const T* dp = dy + pos[q].dy_off;
    const auto m = pos[q].mask;
    typename S::vec dv[OB];
#pragma GCC unroll 8
    for (int o = 0; o < OB; ++o)
      dv[o] =
          L == SimdLoad::Full ? S::load(dp + o * a.dy_channel) : S::load(dp + o * a.dy_channel, m);
#pragma GCC unroll 8
    for (int j = 0; j < JB; ++j) {
      const typename S::vec xv = loadInput<L>(xp + off[j], m, a.stride_index);
#pragma GCC unroll 8
      for (int o = 0; o < OB; ++o)
        acc[o][j] = S::fma(dv[o], xv, acc[o][j]);
    }
  }
  if constexpr (std::is_same<T, float>::value && OB * JB % 8 == 0) {
    // The lane sums eight accumulators at a time: a third of the shuffles and adds of one at a
    // time, which were several percent of a tile's work per 128 positions.
    float lane_sum[OB * JB];
#pragma GCC unroll 4
    for (int g = 0; g < OB * JB; g += 8) {
      typename S::vec v[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i)
        v[i] = acc[(g + i) / JB][(g + i) % JB];
      S::sum8(v, lane_sum + g);
    }
    for (int o = 0; o < OB; ++o)
      for (int j = 0; j < nj; ++j)
        sums[o * a.pairs + j0 + j] += double(lane_sum[o * JB + j]);
  } else {
    for (int o = 0; o < OB; ++o)
      for (int j = 0; j < nj; ++j)
        sums[o * a.pairs + j0 + j] += double(S::sum(acc[o][j]));
  }
}

// The (block, pair group) tiles of pairs [j_begin, j_end) over a list of positions: full vectors
// and tails in separate runs, so that the full ones load without masks.
template <class T, int OB>
void filterPairs(const FilterPass<T>& a, const FilterPosition<T>* full, int n_full,
                 const FilterPosition<T>* tail, int n_tail, bool gather, index_t o0,
                 index_t j_begin, index_t j_end, double* sums) {
  constexpr int JB = kFilterPairs<OB>;
  for (index_t j0 = j_begin; j0 < j_end; j0 += JB) {
    const int nj = int(std::min<index_t>(JB, j_end - j0));
    if (gather) {
      filterTile<T, OB, JB, SimdLoad::Gather>(a, full, n_full, o0, j0, nj, sums);
      filterTile<T, OB, JB, SimdLoad::Gather>(a, tail, n_tail, o0, j0, nj, sums);
    } else {
      filterTile<T, OB, JB, SimdLoad::Full>(a, full, n_full, o0, j0, nj, sums);
      filterTile<T, OB, JB, SimdLoad::Masked>(a, tail, n_tail, o0, j0, nj, sums);
    }
  }
}

template <class T>
void filterBlock(const FilterPass<T>& a, const FilterPosition<T>* full, int n_full,
                 const FilterPosition<T>* tail, int n_tail, bool gather, const ChannelBlock& b,
                 index_t j_begin, index_t j_end, double* sums) {
  switch (b.size) {
    case 4:
      filterPairs<T, 4>(a, full, n_full, tail, n_tail, gather, b.first, j_begin, j_end, sums);
      break;
    case 2:
      filterPairs<T, 2>(a, full, n_full, tail, n_tail, gather, b.first, j_begin, j_end, sums);
      break;
    default:
      filterPairs<T, 1>(a, full, n_full, tail, n_tail, gather, b.first, j_begin, j_end, sums);
      break;
  }
}

// Adds to sums[o - o_begin] the sum of dy channel o over the positions, for o in [o_begin, o_end).
template <class T>
void biasSums(const FilterPass<T>& a, const FilterPosition<T>* full, int n_full,
              const FilterPosition<T>* tail, int n_tail, index_t o_begin, index_t o_end,
              double* sums) {
  using S = Simd<T>;
  for (index_t o = o_begin; o < o_end; ++o) {
    typename S::vec acc = S::zero();
    const T* dp = a.dy + o * a.dy_channel;
    for (int q = 0; q < n_full; ++q)
      acc = S::add(acc, S::load(dp + full[q].dy_off));
    for (int q = 0; q < n_tail; ++q)
      acc = S::add(acc, S::load(dp + tail[q].dy_off, tail[q].mask));
    sums[o - o_begin] += double(S::sum(acc));
  }
}

// The positions of out_box: (sample, d, h, W vector), W vector fastest.
template <class T>
struct FilterPositions {
  Conv3dIndexing ix;
  Box box;
  index_t vectors, count;
  index_t x_sample, x_plane, x_row, y_sample, y_plane, y_row;

  FilterPosition<T> at(index_t q) const {
    constexpr int V = Simd<T>::lanes;
    const index_t v = q % vectors, row = q / vectors;
    const index_t h = box.min(1) + row % box.extent(1);
    const index_t d = box.min(0) + (row / box.extent(1)) % box.extent(0);
    const index_t n = row / (box.extent(0) * box.extent(1));
    const index_t c = box.min(2) + v * V;
    return {n * x_sample + (ix.inputOf(0, d, 0) + ix.in_shift[0]) * x_plane +
                (ix.inputOf(1, h, 0) + ix.in_shift[1]) * x_row + ix.inputOf(2, c, 0) +
                ix.in_shift[2],
            n * y_sample + (d + ix.out_shift[0]) * y_plane + (h + ix.out_shift[1]) * y_row + c +
                ix.out_shift[2],
            laneRange<T>(0, box.max(2) - c)};
  }
  // Positions [begin, end) sorted into full vectors and tails; returns their counts.
  std::pair<int, int> split(index_t begin, index_t end, FilterPosition<T>* full,
                            FilterPosition<T>* tail) const {
    int n_full = 0, n_tail = 0;
    for (index_t q = begin; q < end; ++q) {
      const FilterPosition<T> p = at(q);
      if (p.mask == fullMask<T>())
        full[n_full++] = p;
      else
        tail[n_tail++] = p;
    }
    return {n_full, n_tail};
  }
};

// The W-vector engine above, for double and for the float geometries that the output-channel
// lanes engine (Conv3dHostFilterLanes.hpp) does not take.
template <class ExecSpace, class T>
void conv3dBackwardFilterWVectors(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                                  const Tensor<T, ExecSpace>& dy, const WindowGeometry& g,
                                  const Conv3dWeightsGradOn<T, ExecSpace>& dw,
                                  const Conv3dBiasGradOn<T, ExecSpace>& db, const Box& out_box,
                                  bool accumulate) {
  using S = Simd<T>;
  using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  constexpr int V = S::lanes;
  const Conv3dIndexing ix = makeIndexing(g, x, dy);
  const auto& xv = x.view();
  const auto& dyv = dy.view();
  const index_t samples = x.block().localSamples();
  const index_t in_ch = x.block().channels(), out_ch = dy.block().channels();
  const index_t taps = ix.taps(), pairs = in_ch * taps, weights = out_ch * pairs;
  const bool has_bias = db.extent(0) > 0;

  FilterPositions<T> pos{ix,
                         out_box,
                         (out_box.extent(2) + V - 1) / V,
                         0,
                         index_t(xv.stride_0()),
                         index_t(xv.stride_2()),
                         index_t(xv.stride_3()),
                         index_t(dyv.stride_0()),
                         index_t(dyv.stride_2()),
                         index_t(dyv.stride_3())};
  pos.count = out_box.empty() ? 0 : samples * out_box.extent(0) * out_box.extent(1) * pos.vectors;

  ScratchpadLease scratch(exec);
  const Kokkos::View<index_t*, Kokkos::HostSpace> pair_offset(
      scratch.take<index_t>(std::size_t(pairs)), pairs);
  for (index_t i = 0; i < in_ch; ++i)
    for (int kd = 0; kd < g.kernel[0]; ++kd)
      for (int kh = 0; kh < g.kernel[1]; ++kh)
        for (int kw = 0; kw < g.kernel[2]; ++kw)
          pair_offset(i * taps + (kd * g.kernel[1] + kh) * g.kernel[2] + kw) =
              i * index_t(xv.stride_1()) + index_t(kd) * g.dilation[0] * index_t(xv.stride_2()) +
              index_t(kh) * g.dilation[1] * index_t(xv.stride_3()) + index_t(kw) * g.dilation[2];
  const FilterPass<T> a{xv.data(), dyv.data(),         index_t(dyv.stride_1()),
                        pairs,     pair_offset.data(), S::strideIndex(g.stride[2])};
  const std::vector<ChannelBlock> blocks = channelBlocks(out_ch, 4);
  const bool gather = g.stride[2] > 1;
  T* dw_p = dw.data();
  T* db_p = has_bias ? db.data() : nullptr;
  auto store = [=](T* dst, double sum) { *dst = accumulate ? T(double(*dst) + sum) : T(sum); };

  // Work items are (position range, group of output channel blocks); an item walks its range chunk
  // by chunk and passes each chunk's positions through every block of its group, so that x is read
  // once per item while the chunk stays in L2. One range and one group per thread whenever the
  // blocks share out evenly over the threads: each item then stores its rows of dw, with no
  // per-thread copy of dw to clear and sum afterwards. Otherwise (fewer or unevenly many blocks)
  // one group per block and one range per thread, and the ranges' partials are summed at the end.
  // Either way the result does not depend on thread timing.
  const index_t nb = index_t(blocks.size());
  const index_t threads = std::max<index_t>(1, index_t(exec.concurrency()));
  const index_t max_ranges = std::max<index_t>(1, (pos.count + kFilterChunk - 1) / kFilterChunk);
  const bool by_blocks = nb % threads == 0 || nb >= 4 * threads;
  const index_t groups = by_blocks ? threads : nb;
  const index_t ranges = by_blocks ? 1 : std::min<index_t>(threads, max_ranges);
  const index_t entries = weights + out_ch;
  const index_t partial_rows = ranges > 1 ? ranges : 0;
  const Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> partial(
      scratch.take<double>(std::size_t(partial_rows * entries)), partial_rows, entries);
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardFilter(host simd)", Range(exec, 0, ranges * groups),
      [=](index_t item) {
        const index_t group = item % groups, range = item / groups;
        const index_t b_begin = nb * group / groups, b_end = nb * (group + 1) / groups;
        if (b_begin == b_end) return;
        const index_t o_begin = blocks[std::size_t(b_begin)].first;
        const index_t o_end =
            blocks[std::size_t(b_end - 1)].first + blocks[std::size_t(b_end - 1)].size;
        const index_t channels = o_end - o_begin;
        const index_t begin = pos.count * range / ranges, end = pos.count * (range + 1) / ranges;
        // The group's rows of dw, then its bias sums.
        std::vector<double> sums(std::size_t(channels * pairs + channels), 0.0);
        FilterPosition<T> full[kFilterChunk], tail[kFilterChunk];
        for (index_t c0 = begin; c0 < end; c0 += kFilterChunk) {
          const auto counts = pos.split(c0, std::min(end, c0 + kFilterChunk), full, tail);
          for (index_t k = b_begin; k < b_end; ++k) {
            const ChannelBlock& b = blocks[std::size_t(k)];
            filterBlock(a, full, counts.first, tail, counts.second, gather, b, 0, pairs,
                        sums.data() + (b.first - o_begin) * pairs);
          }
          if (has_bias)
            biasSums(a, full, counts.first, tail, counts.second, o_begin, o_end,
                     sums.data() + channels * pairs);
        }
        for (index_t e = 0; e < channels * pairs; ++e) {
          if (ranges > 1)
            partial(range, o_begin * pairs + e) = sums[std::size_t(e)];
          else
            store(dw_p + o_begin * pairs + e, sums[std::size_t(e)]);
        }
        if (has_bias)
          for (index_t o = 0; o < channels; ++o) {
            const double sum = sums[std::size_t(channels * pairs + o)];
            if (ranges > 1)
              partial(range, weights + o_begin + o) = sum;
            else
              store(db_p + o_begin + o, sum);
          }
      });
  if (ranges == 1) return;
  Kokkos::parallel_for("halo3d::conv3dBackwardFilter(host sum)",
                       Range(exec, 0, has_bias ? entries : weights), [=](index_t e) {
                         double sum = 0;
                         for (index_t r = 0; r < ranges; ++r)
                           sum += partial(r, e);
                         store(e < weights ? dw_p + e : db_p + (e - weights), sum);
                       });
}

// See conv3dBackwardFilter in kernels/Conv3d.hpp; the caller has run checkBackwardFilter.
template <class ExecSpace, class T>
void conv3dBackwardFilterHost(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                              const Tensor<T, ExecSpace>& dy, const WindowGeometry& g,
                              const Conv3dWeightsGradOn<T, ExecSpace>& dw,
                              const Conv3dBiasGradOn<T, ExecSpace>& db, const Box& out_box,
                              bool accumulate) {
  if constexpr (std::is_same<T, float>::value) {
    if (hostFilterLanesApplies(g, index_t(dw.extent(0))))
      return conv3dBackwardFilterLanes(exec, x, dy, g, dw, db, out_box, accumulate);
  }
  conv3dBackwardFilterWVectors(exec, x, dy, g, dw, db, out_box, accumulate);
}

#endif

}  // namespace halo3d::kernels::impl
