#pragma once
// Host SIMD forward conv3d: the direct engine (Conv3dHostDirect.hpp) with x as input and y as
// output. The input vector of a position under tap (kd, kh, kw) starts at x(c * s - p + k * dil),
// an affine function of the position and the tap; W strides above 1 gather every s-th cell. Reads
// stay in x's allocation (the caller checked the window), and tail vectors of a row are masked.
// Applies to every geometry.
//
// Padding: the ghosts of x past the global volume are zeros, so a tile reads only the kd and kh
// taps that reach inside the volume for at least one of its positions (the union of their spans:
// the taps it leaves out add zeros to every position). Ghosts inside the volume (a neighbour's
// halo) are data and always read; W taps are vector lanes and always read.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/HostScratchpad.hpp"
#include "halo3d/kernels/impl/Conv3dChecks.hpp"
#include "halo3d/kernels/impl/Conv3dHostDirect.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"
#include "halo3d/kernels/impl/Conv3dSimd.hpp"

namespace halo3d::kernels::impl {

#if HALO3D_CONV3D_AVX512

// Whether forward runs the direct engine in TapOrder::RowsOuterAscending (rows of 3 W taps, read
// at W stride 1) rather than tap by tap: from 8 input channels on (see TapOrder).
inline bool forwardRowsOuter(const Conv3dIndexing& ix, index_t in_channels) {
  return rowsOuter(ix) && ix.stride[2] == 1 && in_channels >= 8;
}

template <class T>
class ForwardTiler {
 public:
  // x_volume and y_volume: the global extents of x and y.
  template <class XView, class YView>
  ForwardTiler(const Conv3dIndexing& ix, const XView& x, const YView& y, const Extents3& x_volume,
               const Extents3& y_volume)
      : _ix(ix),
        _x_plane(index_t(x.stride_2())),
        _x_row(index_t(x.stride_3())),
        _y_plane(index_t(y.stride_2())),
        _y_row(index_t(y.stride_3())),
        _gather(ix.stride[2] > 1),
        _stride_index(Simd<T>::strideIndex(ix.stride[2])) {
    for (int kd = 0; kd < ix.kernel[0]; ++kd)
      for (int kh = 0; kh < ix.kernel[1]; ++kh)
        for (int kw = 0; kw < ix.kernel[2]; ++kw)
          _tap_offset.push_back(index_t(kd) * ix.dilation[0] * _x_plane +
                                index_t(kh) * ix.dilation[1] * _x_row +
                                index_t(kw) * ix.dilation[2]);
    // The taps of the last kh and first kw of every kd read the row that no earlier row of
    // positions read: a tile's next row (stride[1] input rows on) reads its successor at the same
    // taps. Without a prefetch those lines arrive on demand, from memory for the first channel
    // block of a chunk: 16 channels x 3 planes of streams are more than the hardware prefetchers
    // follow (docs/PERFORMANCE.md, session 24).
    if (ix.kernel[1] > 1 && ix.taps() <= 64) {
      for (int kd = 0; kd < ix.kernel[0]; ++kd)
        _prefetch_bits |= std::uint64_t(1)
                          << ((kd * ix.kernel[1] + ix.kernel[1] - 1) * ix.kernel[2]);
      _prefetch_ahead = index_t(ix.stride[1]) * _x_row;
    }
    _bits = TapBits(ix.kernel);
    for (int d = 0; d < 2; ++d)
      _spans[d] = TapSpans(0, y_volume[d], ix.kernel[d], [&](index_t o, int k) {
        const index_t i = ix.inputOf(d, o, k);
        return i >= 0 && i < x_volume[d];
      });
  }

  void cuts(const Box& box, index_t (&lo)[2], index_t (&hi)[2]) const {
    for (int d = 0; d < 2; ++d)
      _spans[d].fullRange(box.min(d), box.max(d), lo[d], hi[d]);
  }

  void tile(const index_t* d, const index_t* h, const index_t* w, const int* lanes, int positions,
            TileTaps<T>& taps, TileOut<T>& out) const {
    bool full = true;
    TapSpan span[2] = {{_ix.kernel[0], 0}, {_ix.kernel[1], 0}};
    for (int r = 0; r < positions; ++r) {
      const index_t c[2] = {d[r], h[r]};
      for (int k = 0; k < 2; ++k) {
        const TapSpan s = _spans[k](c[k]);
        span[k] = {std::min(span[k].begin, s.begin), std::max(span[k].end, s.end)};
      }
      out.offset[r] = (d[r] + _ix.out_shift[0]) * _y_plane + (h[r] + _ix.out_shift[1]) * _y_row +
                      w[r] + _ix.out_shift[2];
      out.mask[r] = laneRange<T>(0, lanes[r]);
      out.base[r] = (_ix.inputOf(0, d[r], 0) + _ix.in_shift[0]) * _x_plane +
                    (_ix.inputOf(1, h[r], 0) + _ix.in_shift[1]) * _x_row + _ix.inputOf(2, w[r], 0) +
                    _ix.in_shift[2];
      taps.mask[std::size_t(r)] = out.mask[r];
      full = full && lanes[r] == Simd<T>::lanes;
    }
    out.mode = TapMode::Affine;
    for (int k = 0; k < 2; ++k)
      span[k].end = std::max(span[k].begin, span[k].end);
    out.tap_bits = _bits(span[0], span[1]);
    out.tap_offset = _tap_offset.data();
    out.prefetch_bits = _prefetch_bits;
    out.prefetch_ahead = _prefetch_ahead;
    out.mask_rows = 1;
    out.load = _gather ? SimdLoad::Gather : (full ? SimdLoad::Full : SimdLoad::Masked);
    out.stride_index = _stride_index;
  }

 private:
  Conv3dIndexing _ix;
  index_t _x_plane, _x_row, _y_plane, _y_row;
  bool _gather;
  typename Simd<T>::index _stride_index;
  std::vector<index_t> _tap_offset;
  std::uint64_t _prefetch_bits = 0;
  index_t _prefetch_ahead = 0;
  TapSpans _spans[2];  // per output plane and row
  TapBits _bits;
};

// See conv3dForward in kernels/Conv3d.hpp; the caller has run checkForward.
template <class ExecSpace, class T>
void conv3dForwardHost(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                       const Conv3dWeightsOn<T, ExecSpace>& w, const Conv3dBiasOn<T, ExecSpace>& b,
                       const WindowGeometry& g, const Tensor<T, ExecSpace>& y, const Box& out_box) {
  const index_t samples = y.block().localSamples();
  if (out_box.empty() || samples == 0) return;
  const Conv3dIndexing ix = makeIndexing(g, x, y);
  const auto& xv = x.view();
  const auto& yv = y.view();
  const DirectConv<T> p = directConv(x, y, b.extent(0) ? b.data() : nullptr, ix.taps());
  // Input read per output row: every channel, kernel plane and the rows the H stride advances by.
  const index_t row_bytes =
      p.in_channels * g.kernel[0] * g.stride[1] * index_t(xv.stride_3()) * index_t(sizeof(T));
  const ForwardTiler<T> tiler(ix, xv, yv, x.block().globalExtents(), y.block().globalExtents());
  ScratchpadLease scratch(exec);
  const auto packed = packWeights<T>(exec, w, 0, scratch);
  const char* label = "halo3d::conv3dForward(host simd)";
  const index_t out_channels = y.block().channels();
  if (forwardRowsOuter(ix, p.in_channels))
    runDirect<TapOrder::RowsOuterAscending>(exec, label, p, packed, out_channels, samples, out_box,
                                            row_bytes, tiler);
  else
    runDirect(exec, label, p, packed, out_channels, samples, out_box, row_bytes, tiler);
}

#endif

}  // namespace halo3d::kernels::impl
