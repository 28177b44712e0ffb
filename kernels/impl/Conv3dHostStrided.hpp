#pragma once
// Host SIMD conv3d for strided geometries (any stride above 1): forward, backward-data and
// backward-filter.
//
// Backward-data uses the phase (sub-pixel) decomposition: along a dimension of stride s, the dx
// cells q with the same (q + p) mod s receive from the same taps k (those with q + p - k dil a
// multiple of s), and consecutive cells of such a class (q, q + s, q + 2s, ...) read consecutive
// dy cells. A "position" is one SIMD vector of W cells of one phase class of one dx row, so its
// tap reads a contiguous dy vector (lanes leaving dy_box masked off), and its result is stored
// with the W stride (a scatter). Tiles hold positions of one class only, so every tap they visit is
// read by all their rows: no FMAs are spent on taps that a stride skips.
//
// Forward and backward-filter de-interleave x's W phases once per call (x[s j + f] -> xp[f][j])
// when the W stride is above 1, so that every tap reads a contiguous vector of the phase buffer
// instead of a gather.
//
// Register tile: OB channels x R positions as in Conv3dHostDirect.hpp. Every output value is summed
// in one order (taps ascending, then the channels of the other side, bias last) whichever tile,
// mask or box computes it, so sub-box results are bitwise the whole-box ones.

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

// Whether the dispatch sends geometry g to the strided host code: backward-data for any stride
// above 1 (the other engine's tiles mix phase classes and skip taps per lane), forward for W
// strides above 1 (the other engine gathers there). Both functions handle every geometry.
inline bool hostStridedBackwardDataApplies(const WindowGeometry& g) {
  return g.stride[0] > 1 || g.stride[1] > 1 || g.stride[2] > 1;
}
inline bool hostStridedForwardApplies(const WindowGeometry& g) {
  return g.stride[2] > 1;
}
// Backward-filter, which reads x through the same de-interleaved W phases as forward, for W strides
// above 1 except where the output-channel lanes engine applies: that one broadcasts x one value at
// a time, so a stride costs it nothing, and on CosmoFlow's strided convolution (64 -> 128, 3^3,
// stride 2) it took 1.3 ms against this engine's 6.8 ms at 16^3 and 9.0 against 28.6 ms at 32^3
// (1 thread; docs/PERFORMANCE.md).
template <class T>
bool hostStridedBackwardFilterApplies(const WindowGeometry& g, index_t output_channels) {
  return hostStridedForwardApplies(g) &&
         !(std::is_same<T, float>::value && hostFilterLanesApplies(g, output_channels));
}

#if HALO3D_CONV3D_AVX512

inline constexpr int kStridedMaxR = 8;
template <int OB>
inline constexpr int kStridedR = OB >= 8 ? 3 : (OB == 4 ? 6 : 8);

// A tile's taps (those some lane reads), per position the input offset of lane 0 and its lanes,
// and per position the output offset of lane 0 and the lanes to store.
template <class T>
struct StridedTile {
  int count = 0;
  std::vector<int> tap;
  std::vector<index_t> offset;  // [j * kStridedMaxR + r]
  std::vector<typename Simd<T>::mask> mask;
  index_t out_offset[kStridedMaxR];
  typename Simd<T>::mask out_mask[kStridedMaxR];

  explicit StridedTile(int taps)
      : tap(std::size_t(taps)), offset(std::size_t(taps) * kStridedMaxR), mask(offset.size()) {}
};

inline void stridedScatter(float* p, __mmask16 m, __m512i index, __m512 v) {
  _mm512_mask_i32scatter_ps(p, m, index, v, 4);
}
inline void stridedScatter(double* p, __mmask8 m, __m256i index, __m512d v) {
  _mm512_mask_i32scatter_pd(p, m, index, v, 8);
}

// Output lanes are `out_stride` apart (a scatter) when Scatter.
template <class T, int OB, int R, bool Scatter>
void stridedTile(const DirectConv<T>& p, index_t first, index_t n, const StridedTile<T>& tile,
                 typename Simd<T>::index out_stride) {
  using S = Simd<T>;
  typename S::vec acc[OB][R];
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o)
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      acc[o][r] = S::zero();
  const T* in_n = p.in + n * p.in_sample;
  const T* w_block = p.packed + first * p.in_channels * p.taps;
  for (int j = 0; j < tile.count; ++j) {
    const T* w_tap = w_block + index_t(tile.tap[std::size_t(j)]) * p.in_channels * OB;
    const T* src[R];
    typename S::mask m[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      src[r] = in_n + tile.offset[std::size_t(j) * kStridedMaxR + r];
      m[r] = tile.mask[std::size_t(j) * kStridedMaxR + r];
    }
    for (index_t ic = 0; ic < p.in_channels; ++ic) {
      typename S::vec xv[R];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        xv[r] = S::load(src[r], m[r]);
        src[r] += p.in_channel;
      }
      const T* wv = w_tap + ic * OB;
#pragma GCC unroll 8
      for (int o = 0; o < OB; ++o) {
        const typename S::vec b = S::broadcast(wv[o]);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r)
          acc[o][r] = S::fma(b, xv[r], acc[o][r]);
      }
    }
  }
  T* out_n = p.out + n * p.out_sample;
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o) {
    T* dst = out_n + (first + o) * p.out_channel;
    if (p.bias) {
      const typename S::vec b = S::broadcast(p.bias[first + o]);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
        acc[o][r] = S::add(acc[o][r], b);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      if constexpr (Scatter)
        stridedScatter(dst + tile.out_offset[r], tile.out_mask[r], out_stride, acc[o][r]);
      else
        S::store(dst + tile.out_offset[r], acc[o][r], tile.out_mask[r]);
    }
  }
}

// A set of output cells computed by the same taps: cells first[d] + step[d] * i, i < count[d],
// per dimension, the taps (kd, kh, kw) in `kd` x `kh` x `kw`, and their positions (W vectors of a
// row) numbered row-major.
struct StridedClass {
  index_t first[3], step[3], count[3];
  index_t vectors;
  std::vector<int> k[3];
  index_t positions() const { return count[0] * count[1] * vectors; }
};

// Range [begin, end) of class c's positions: one work item per channel block.
struct StridedChunk {
  int cls;
  index_t begin, end;
};

// Runs every sample, chunk and channel block in parallel (HostItems, Conv3dHostDirect.hpp). The
// Tiler fills a tile from its
// positions (class, global cells d, h, w of lane 0, lane counts):
//   void operator()(const StridedClass&, const index_t* d, const index_t* h, const index_t* w,
//                   const int* lanes, int R, StridedTile<T>&) const
template <class T, bool Scatter, class ExecSpace, class Tiler>
void runStrided(const ExecSpace& exec, const char* label, DirectConv<T> p,
                const Kokkos::View<T*, Kokkos::HostSpace>& packed, index_t out_channels,
                index_t samples, const std::vector<StridedClass>& classes, int out_stride,
                const Tiler& tiler) {
  p.packed = packed.data();
  const std::vector<ChannelBlock> blocks = channelBlocks(out_channels);
  constexpr index_t kChunk = 48;  // a multiple of every R
  std::vector<StridedChunk> chunks;
  for (std::size_t c = 0; c < classes.size(); ++c)
    for (index_t b = 0; b < classes[c].positions(); b += kChunk)
      chunks.push_back({int(c), b, std::min(b + kChunk, classes[c].positions())});
  if (chunks.empty() || samples == 0) return;
  const index_t nb = index_t(blocks.size()), nc = index_t(chunks.size());
  const typename Simd<T>::index stride_index = Simd<T>::strideIndex(out_stride);
  Kokkos::parallel_for(label, HostItems<ExecSpace>(exec, 0, samples * nc * nb), [=](index_t item) {
    const ChannelBlock& blk = blocks[std::size_t(item % nb)];
    const StridedChunk& ch = chunks[std::size_t((item / nb) % nc)];
    const index_t n = item / (nb * nc);
    const StridedClass& cls = classes[std::size_t(ch.cls)];
    StridedTile<T> tile(p.taps);
    auto range = [&](auto ob) {
      constexpr int OB = decltype(ob)::value;
      constexpr int R = kStridedR<OB>;
      constexpr int V = Simd<T>::lanes;
      index_t d[R], h[R], w[R];
      int lanes[R];
      for (index_t p0 = ch.begin; p0 < ch.end; p0 += R) {
        for (int r = 0; r < R; ++r) {
          const index_t q = std::min(p0 + r, ch.end - 1), row = q / cls.vectors;
          const index_t v = q % cls.vectors;
          d[r] = cls.first[0] + cls.step[0] * (row / cls.count[1]);
          h[r] = cls.first[1] + cls.step[1] * (row % cls.count[1]);
          w[r] = cls.first[2] + cls.step[2] * v * V;
          lanes[r] = int(std::min<index_t>(V, cls.count[2] - v * V));
        }
        tiler(cls, d, h, w, lanes, R, tile);
        stridedTile<T, OB, R, Scatter>(p, blk.first, n, tile, stride_index);
      }
    };
    switch (blk.size) {
      case 8:
        range(std::integral_constant<int, 8>());
        break;
      case 4:
        range(std::integral_constant<int, 4>());
        break;
      case 2:
        range(std::integral_constant<int, 2>());
        break;
      default:
        range(std::integral_constant<int, 1>());
        break;
    }
  });
}

// Backward-data: the phase classes of dx_box, and per tile the dy cells each tap reads.
template <class T>
class StridedBackwardDataTiler {
 public:
  template <class DyView, class DxView>
  StridedBackwardDataTiler(const Conv3dIndexing& ix, const DyView& dy, const DxView& dx,
                           const Box& dy_box)
      : _ix(ix),
        _dy_plane(index_t(dy.stride_2())),
        _dy_row(index_t(dy.stride_3())),
        _dx_plane(index_t(dx.stride_2())),
        _dx_row(index_t(dx.stride_3())),
        _dy_box(dy_box) {}

  static std::vector<StridedClass> classes(const Conv3dIndexing& ix, const Box& dx_box) {
    std::vector<StridedClass> out;
    const int s0 = ix.stride[0], s1 = ix.stride[1], s2 = ix.stride[2];
    for (int f0 = 0; f0 < s0 && f0 < dx_box.extent(0); ++f0)
      for (int f1 = 0; f1 < s1 && f1 < dx_box.extent(1); ++f1)
        for (int f2 = 0; f2 < s2 && f2 < dx_box.extent(2); ++f2) {
          StridedClass c;
          const int f[3] = {f0, f1, f2};
          for (int d = 0; d < 3; ++d) {
            c.first[d] = dx_box.min(d) + f[d];
            c.step[d] = ix.stride[d];
            c.count[d] = (dx_box.max(d) - c.first[d] + ix.stride[d] - 1) / ix.stride[d];
            for (int k = 0; k < ix.kernel[d]; ++k) {
              const index_t r = (c.first[d] + ix.padding[d] - index_t(k) * ix.dilation[d]) %
                                index_t(ix.stride[d]);
              if (r == 0) c.k[d].push_back(k);
            }
          }
          c.vectors = (c.count[2] + Simd<T>::lanes - 1) / Simd<T>::lanes;
          out.push_back(std::move(c));
        }
    return out;
  }

  void operator()(const StridedClass& cls, const index_t* d, const index_t* h, const index_t* w,
                  const int* lanes, int positions, StridedTile<T>& tile) const {
    for (int r = 0; r < positions; ++r) {
      tile.out_offset[r] = (d[r] + _ix.in_shift[0]) * _dx_plane +
                           (h[r] + _ix.in_shift[1]) * _dx_row + w[r] + _ix.in_shift[2];
      tile.out_mask[r] = laneRange<T>(0, lanes[r]);
    }
    int count = 0;
    index_t cd[kStridedMaxR], ch[kStridedMaxR];
    bool plane_ok[kStridedMaxR], row_ok[kStridedMaxR];
    for (int kd : cls.k[0]) {
      bool any_plane = false;
      for (int r = 0; r < positions; ++r) {
        cd[r] = (d[r] + _ix.padding[0] - index_t(kd) * _ix.dilation[0]) / _ix.stride[0];
        plane_ok[r] = cd[r] >= _dy_box.min(0) && cd[r] < _dy_box.max(0);
        any_plane = any_plane || plane_ok[r];
      }
      if (!any_plane) continue;
      for (int kh : cls.k[1]) {
        bool any_row = false;
        for (int r = 0; r < positions; ++r) {
          ch[r] = (h[r] + _ix.padding[1] - index_t(kh) * _ix.dilation[1]) / _ix.stride[1];
          row_ok[r] = plane_ok[r] && ch[r] >= _dy_box.min(1) && ch[r] < _dy_box.max(1);
          any_row = any_row || row_ok[r];
        }
        if (!any_row) continue;
        for (int kw : cls.k[2]) {
          const std::size_t slot = std::size_t(count) * kStridedMaxR;
          bool any = false;
          for (int r = 0; r < positions; ++r) {
            const index_t cw0 =
                (w[r] + _ix.padding[2] - index_t(kw) * _ix.dilation[2]) / _ix.stride[2];
            const auto m = row_ok[r]
                               ? laneRange<T>(_dy_box.min(2) - cw0,
                                              std::min<index_t>(lanes[r], _dy_box.max(2) - cw0))
                               : typename Simd<T>::mask(0);
            tile.mask[slot + std::size_t(r)] = m;
            tile.offset[slot + std::size_t(r)] = m ? (cd[r] + _ix.out_shift[0]) * _dy_plane +
                                                         (ch[r] + _ix.out_shift[1]) * _dy_row +
                                                         cw0 + _ix.out_shift[2]
                                                   : 0;
            any = any || m != 0;
          }
          if (any) tile.tap[std::size_t(count++)] = (kd * _ix.kernel[1] + kh) * _ix.kernel[2] + kw;
        }
      }
    }
    tile.count = count;
  }

 private:
  Conv3dIndexing _ix;
  index_t _dy_plane, _dy_row, _dx_plane, _dx_row;
  Box _dy_box;
};

// See conv3dBackwardData in kernels/Conv3d.hpp; the caller has run checkBackwardData.
template <class ExecSpace, class T>
void conv3dBackwardDataStrided(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy,
                               const Conv3dWeightsOn<T, ExecSpace>& w, const WindowGeometry& g,
                               const Tensor<T, ExecSpace>& dx, const Box& dx_box,
                               const Box& dy_box) {
  const index_t samples = dx.block().localSamples();
  if (dx_box.empty() || samples == 0) return;
  const Conv3dIndexing ix = makeIndexing(g, dx, dy);
  const auto& dyv = dy.view();
  const auto& dxv = dx.view();
  DirectConv<T> p = directConv<T>(dy, dx, nullptr, ix.taps());
  const StridedBackwardDataTiler<T> tiler(ix, dyv, dxv, dy_box);
  const auto classes = StridedBackwardDataTiler<T>::classes(ix, dx_box);
  ScratchpadLease scratch(exec);
  const auto packed = packWeights<T>(exec, w, 1, scratch);
  if (g.stride[2] > 1)
    runStrided<T, true>(exec, "halo3d::conv3dBackwardData(host strided)", p, packed,
                        dx.block().channels(), samples, classes, g.stride[2], tiler);
  else
    runStrided<T, false>(exec, "halo3d::conv3dBackwardData(host strided)", p, packed,
                         dx.block().channels(), samples, classes, 1, tiler);
}

// x as the strided passes read it: with W stride s > 1, every row of x's allocation (all samples,
// channels, planes, rows) with its W phases de-interleaved (in `scratch`), so that cell s j + f of
// a row lies at f * phase_width + j; with s = 1, x itself. Local cell (xd, xh, xw) of a channel
// lies at offset(xd, xh, xw); lanes xw, xw + s, ... are contiguous there.
template <class T>
struct StridedInput {
  const T* data;
  index_t sample, channel, plane, row, phase_width, s;

  index_t offset(index_t xd, index_t xh, index_t xw) const {
    return xd * plane + xh * row + (xw % s) * phase_width + xw / s;
  }
};

template <class ExecSpace, class T>
StridedInput<T> stridedInput(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, index_t s,
                             ScratchpadLease& scratch) {
  const auto& xv = x.view();
  StridedInput<T> in{};
  in.s = s;
  if (s == 1) {
    in.data = xv.data();
    in.sample = index_t(xv.stride_0());
    in.channel = index_t(xv.stride_1());
    in.plane = index_t(xv.stride_2());
    in.row = index_t(xv.stride_3());
    return in;
  }
  const index_t samples = x.block().localSamples(), channels = x.block().channels();
  const index_t wl = index_t(xv.extent(4)), hl = index_t(xv.extent(3));
  const index_t rows_per_channel = index_t(xv.extent(2)) * hl;
  in.phase_width = (wl + s - 1) / s;
  in.row = s * in.phase_width;
  in.plane = hl * in.row;
  in.channel = rows_per_channel * in.row;
  in.sample = channels * in.channel;
  const index_t rows = samples * channels * rows_per_channel;
  T* dst = scratch.take<T>(std::size_t(std::max<index_t>(rows * in.row, 1)));
  in.data = dst;
  const T* src = xv.data();
  const index_t x_sample = index_t(xv.stride_0()), x_channel = index_t(xv.stride_1());
  const index_t x_plane = index_t(xv.stride_2()), x_row = index_t(xv.stride_3());
  const index_t row_len = in.row, pw = in.phase_width;
  Kokkos::parallel_for(
      "halo3d::conv3d(host strided phases)",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, rows), [=](index_t r) {
        const index_t row = r % rows_per_channel, nc = r / rows_per_channel;
        const T* from = src + (nc / channels) * x_sample + (nc % channels) * x_channel +
                        (row / hl) * x_plane + (row % hl) * x_row;
        T* to = dst + r * row_len;
        for (index_t f = 0; f < s; ++f)
          for (index_t j = 0; f + s * j < wl; ++j)
            to[f * pw + j] = from[f + s * j];
      });
  return in;
}

// Forward: one class (every output cell of out_box, every tap), reading x through StridedInput.
template <class T>
class StridedForwardTiler {
 public:
  StridedForwardTiler(const Conv3dIndexing& ix, const StridedInput<T>& in, index_t y_plane,
                      index_t y_row)
      : _ix(ix), _in(in), _y_plane(y_plane), _y_row(y_row) {}

  void operator()(const StridedClass&, const index_t* d, const index_t* h, const index_t* w,
                  const int* lanes, int positions, StridedTile<T>& tile) const {
    for (int r = 0; r < positions; ++r) {
      tile.out_offset[r] = (d[r] + _ix.out_shift[0]) * _y_plane +
                           (h[r] + _ix.out_shift[1]) * _y_row + w[r] + _ix.out_shift[2];
      tile.out_mask[r] = laneRange<T>(0, lanes[r]);
    }
    int count = 0;
    for (int kd = 0; kd < _ix.kernel[0]; ++kd)
      for (int kh = 0; kh < _ix.kernel[1]; ++kh)
        for (int kw = 0; kw < _ix.kernel[2]; ++kw) {
          const std::size_t slot = std::size_t(count) * kStridedMaxR;
          for (int r = 0; r < positions; ++r) {
            tile.offset[slot + std::size_t(r)] =
                _in.offset(_ix.inputOf(0, d[r], kd) + _ix.in_shift[0],
                           _ix.inputOf(1, h[r], kh) + _ix.in_shift[1],
                           _ix.inputOf(2, w[r], kw) + _ix.in_shift[2]);
            tile.mask[slot + std::size_t(r)] = tile.out_mask[r];
          }
          tile.tap[std::size_t(count++)] = (kd * _ix.kernel[1] + kh) * _ix.kernel[2] + kw;
        }
    tile.count = count;
  }

 private:
  Conv3dIndexing _ix;
  StridedInput<T> _in;
  index_t _y_plane, _y_row;
};

// See conv3dForward in kernels/Conv3d.hpp; the caller has run checkForward.
template <class ExecSpace, class T>
void conv3dForwardStrided(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                          const Conv3dWeightsOn<T, ExecSpace>& w,
                          const Conv3dBiasOn<T, ExecSpace>& b, const WindowGeometry& g,
                          const Tensor<T, ExecSpace>& y, const Box& out_box) {
  const index_t samples = y.block().localSamples();
  if (out_box.empty() || samples == 0) return;
  const Conv3dIndexing ix = makeIndexing(g, x, y);
  const auto& yv = y.view();
  ScratchpadLease scratch(exec);
  const StridedInput<T> in = stridedInput(exec, x, g.stride[2], scratch);
  DirectConv<T> p{};
  p.in = in.data;
  p.in_sample = in.sample;
  p.in_channel = in.channel;
  p.in_channels = x.block().channels();
  p.out = yv.data();
  p.out_sample = index_t(yv.stride_0());
  p.out_channel = index_t(yv.stride_1());
  p.bias = b.extent(0) ? b.data() : nullptr;
  p.taps = ix.taps();
  StridedClass cls;
  for (int d = 0; d < 3; ++d) {
    cls.first[d] = out_box.min(d);
    cls.step[d] = 1;
    cls.count[d] = out_box.extent(d);
  }
  cls.vectors = (cls.count[2] + Simd<T>::lanes - 1) / Simd<T>::lanes;
  runStrided<T, false>(
      exec, "halo3d::conv3dForward(host strided)", p, packWeights<T>(exec, w, 0, scratch),
      y.block().channels(), samples, {cls}, 1,
      StridedForwardTiler<T>(ix, in, index_t(yv.stride_2()), index_t(yv.stride_3())));
}

// Backward-filter: dw(o, i, t) = sum over samples and output cells c of dy(o, c) x(i, c @ t), as
// dot products over W vectors of output cells. x is read through StridedInput, so the x vector of
// (input channel i, tap t) at a position lies at the position's base + i * channel + tap_off[t]
// (contiguous lanes). Register tile: 4 output channels x 6 (i, t) pairs; the positions are split
// into one contiguous range per thread, each reducing into its own partial dw (double), summed in
// thread order at the end, so the result does not depend on thread timing.
template <class T>
struct StridedFilterPosition {
  index_t x_base, dy_offset;  // sample included; dy at channel 0
  typename Simd<T>::mask mask;
};

template <class T, int OB, int JB>
void stridedFilterTile(const T* dy, index_t dy_channel, const T* x, const index_t* pair_off,
                       const StridedFilterPosition<T>* pos, index_t count, index_t o0,
                       index_t pairs, index_t j0, int nj, double* partial) {
  using S = Simd<T>;
  typename S::vec acc[OB][JB];
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o)
#pragma GCC unroll 8
    for (int j = 0; j < JB; ++j)
      acc[o][j] = S::zero();
  index_t off[JB];
#pragma GCC unroll 8
  for (int j = 0; j < JB; ++j)
    off[j] = pair_off[j0 + std::min(j, nj - 1)];
  const T* dy0 = dy + o0 * dy_channel;
  for (index_t q = 0; q < count; ++q) {
    const StridedFilterPosition<T>& ps = pos[q];
    typename S::vec dv[OB];
#pragma GCC unroll 8
    for (int o = 0; o < OB; ++o)
      dv[o] = S::load(dy0 + ps.dy_offset + o * dy_channel, ps.mask);
    const T* xb = x + ps.x_base;
#pragma GCC unroll 8
    for (int j = 0; j < JB; ++j) {
      const typename S::vec xv = S::load(xb + off[j], ps.mask);
#pragma GCC unroll 8
      for (int o = 0; o < OB; ++o)
        acc[o][j] = S::fma(dv[o], xv, acc[o][j]);
    }
  }
#pragma GCC unroll 8
  for (int o = 0; o < OB; ++o)
    for (int j = 0; j < nj; ++j)
      partial[(o0 + o) * pairs + j0 + j] += double(S::sum(acc[o][j]));
}

// See conv3dBackwardFilter in kernels/Conv3d.hpp; the caller has run checkBackwardFilter.
template <class ExecSpace, class T>
void conv3dBackwardFilterStrided(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                                 const Tensor<T, ExecSpace>& dy, const WindowGeometry& g,
                                 const Conv3dWeightsGradOn<T, ExecSpace>& dw,
                                 const Conv3dBiasGradOn<T, ExecSpace>& db, const Box& out_box,
                                 bool accumulate) {
  constexpr int V = Simd<T>::lanes;
  const index_t samples = dy.block().localSamples();
  const index_t out_ch = dy.block().channels(), in_ch = x.block().channels();
  const Conv3dIndexing ix = makeIndexing(g, x, dy);
  const index_t taps = ix.taps(), pairs = in_ch * taps;
  const bool has_bias = db.extent(0) > 0;
  const index_t weights = out_ch * pairs;
  if (out_box.empty() || samples == 0) {
    if (!accumulate) {
      Kokkos::deep_copy(exec, dw, T(0));
      if (has_bias) Kokkos::deep_copy(exec, db, T(0));
    }
    return;
  }
  ScratchpadLease scratch(exec);
  const StridedInput<T> in = stridedInput(exec, x, g.stride[2], scratch);
  const auto& dyv = dy.view();
  // Pair (i, t) at a position: base + i * channel + the tap's offset from the window origin. The
  // origin is x's local cell of tap 0, whose W phase tap kw shifts by kw * dil.
  std::vector<index_t> pair_off(static_cast<std::size_t>(pairs));
  const index_t a0 = index_t(-ix.padding[2]) + ix.in_shift[2];
  const index_t s = g.stride[2];
  auto floorDiv = [](index_t a, index_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  for (index_t i = 0; i < in_ch; ++i)
    for (int kd = 0; kd < ix.kernel[0]; ++kd)
      for (int kh = 0; kh < ix.kernel[1]; ++kh)
        for (int kw = 0; kw < ix.kernel[2]; ++kw) {
          const index_t a = a0 + index_t(kw) * ix.dilation[2];
          const index_t t = (kd * ix.kernel[1] + kh) * ix.kernel[2] + kw;
          pair_off[std::size_t(i * taps + t)] =
              i * in.channel + index_t(kd) * ix.dilation[0] * in.plane +
              index_t(kh) * ix.dilation[1] * in.row + (a - floorDiv(a, s) * s) * in.phase_width +
              floorDiv(a, s);
        }
  // Positions: W vectors of out_box rows, every sample.
  const index_t vectors = (out_box.extent(2) + V - 1) / V;
  const index_t rows = out_box.extent(0) * out_box.extent(1);
  const index_t per_sample = rows * vectors, positions = samples * per_sample;
  std::vector<StridedFilterPosition<T>> pos(static_cast<std::size_t>(positions));
  const index_t dy_sample = index_t(dyv.stride_0()), dy_plane = index_t(dyv.stride_2()),
                dy_row = index_t(dyv.stride_3());
  for (index_t q = 0; q < positions; ++q) {
    const index_t n = q / per_sample, row = (q % per_sample) / vectors, v = q % vectors;
    const index_t d = out_box.min(0) + row / out_box.extent(1);
    const index_t h = out_box.min(1) + row % out_box.extent(1);
    const index_t w0 = out_box.min(2) + v * V;
    auto& ps = pos[std::size_t(q)];
    ps.x_base = n * in.sample + (ix.inputOf(0, d, 0) + ix.in_shift[0]) * in.plane +
                (ix.inputOf(1, h, 0) + ix.in_shift[1]) * in.row + w0;
    ps.dy_offset = n * dy_sample + (d + ix.out_shift[0]) * dy_plane +
                   (h + ix.out_shift[1]) * dy_row + w0 + ix.out_shift[2];
    ps.mask = laneRange<T>(0, out_box.max(2) - w0);
  }
  const int threads = std::max(1, int(exec.concurrency()));
  const index_t parts = std::min<index_t>(threads, positions);
  // The parts' sums, cleared here: the scratch comes uninitialised.
  const index_t entries = weights + out_ch;
  const auto partial_sums = scratch.view<double>(std::size_t(parts * entries));
  Kokkos::deep_copy(exec, partial_sums, 0.0);
  double* partial = partial_sums.data();
  const T* dyp = dyv.data();
  const index_t dy_channel = index_t(dyv.stride_1());
  const T* xp = in.data;
  const StridedFilterPosition<T>* posp = pos.data();
  const index_t* offp = pair_off.data();
  constexpr index_t kChunk = 64;  // 6 x vectors of 64 positions stay in L1
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardFilter(host strided)",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, parts),
      [=](index_t part) {
        double* acc = partial + part * entries;
        const index_t begin = positions * part / parts, end = positions * (part + 1) / parts;
        for (index_t c0 = begin; c0 < end; c0 += kChunk) {
          const index_t count = std::min(kChunk, end - c0);
          const StridedFilterPosition<T>* cp = posp + c0;
          // Pair groups outer: a group's x vectors stay in L1 while every output block passes
          // over them (the chunk's dy vectors of all channels stay in L2).
          for (index_t j0 = 0; j0 < pairs; j0 += 6) {
            const int nj = int(std::min<index_t>(6, pairs - j0));
            index_t o0 = 0;
            for (; o0 + 4 <= out_ch; o0 += 4)
              stridedFilterTile<T, 4, 6>(dyp, dy_channel, xp, offp, cp, count, o0, pairs, j0, nj,
                                         acc);
            for (; o0 < out_ch; ++o0)
              stridedFilterTile<T, 1, 6>(dyp, dy_channel, xp, offp, cp, count, o0, pairs, j0, nj,
                                         acc);
          }
          if (has_bias)
            for (index_t o = 0; o < out_ch; ++o) {
              typename Simd<T>::vec sum = Simd<T>::zero();
              for (index_t q = 0; q < count; ++q)
                sum = Simd<T>::add(
                    sum, Simd<T>::load(dyp + cp[q].dy_offset + o * dy_channel, cp[q].mask));
              acc[weights + o] += double(Simd<T>::sum(sum));
            }
        }
      });
  T* dwp = dw.data();
  T* dbp = has_bias ? db.data() : nullptr;
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardFilter(host strided sum)",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, weights + out_ch),
      [=](index_t k) {
        if (k >= weights && !has_bias) return;
        double sum = 0;
        for (index_t part = 0; part < parts; ++part)
          sum += partial[part * entries + k];
        T* dst = k < weights ? dwp + k : dbp + (k - weights);
        *dst = accumulate ? T(double(*dst) + sum) : T(sum);
      });
}

#endif

}  // namespace halo3d::kernels::impl
