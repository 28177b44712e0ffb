#pragma once
// Host SIMD backward-data conv3d: the direct engine (Conv3dHostDirect.hpp) with dy as input and dx
// as output, in pull form. Tap (kd, kh, kw) of dx cell q reads dy cell c = (q + p - k dil) / s when
// that division is exact and c lies in dy_box; elsewhere the tap contributes nothing. Along W the
// stride must be 1, so that a vector of dx cells reads a contiguous vector of dy cells: the lanes
// whose dy cell leaves dy_box are masked off (never read), and a tile skips the taps that no lane
// of it reads (most taps at D/H strides > 1). The zero padding of dy is thus never materialised.
// With unit strides, tiles whose positions all read the same kd and kh taps inside dy_box (every
// tile of the D/H interior, and at its boundary the tiles of one PositionGrid part: boundary rows
// of one kind) read those taps of dy affinely, with one lane mask per kw tap (no per-tile table);
// the other tiles, which mix rows that read different taps, build the table. W strides above 1 go
// to the generic path. With 3 W taps at W dilation 1 the engine sums row of taps by row
// (TapOrder::RowsOuter), and the tables list every kw tap of a row that any position reads.

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <vector>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/HostScratchpad.hpp"
#include "halo3d/kernels/impl/Conv3dChecks.hpp"
#include "halo3d/kernels/impl/Conv3dGeneric.hpp"
#include "halo3d/kernels/impl/Conv3dHostDirect.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"
#include "halo3d/kernels/impl/Conv3dSimd.hpp"

namespace halo3d::kernels::impl {

// Whether conv3dBackwardDataHost handles geometry g.
inline bool hostBackwardDataApplies(const WindowGeometry& g) {
  return g.stride[2] == 1;
}

#if HALO3D_CONV3D_AVX512

template <class T>
class BackwardDataTiler {
 public:
  // ix maps dx (input side) and dy (output side) of the forward.
  // dx_volume: the global extents of dx.
  template <class DyView, class DxView>
  BackwardDataTiler(const Conv3dIndexing& ix, const DyView& dy, const DxView& dx, const Box& dy_box,
                    const Extents3& dx_volume)
      : _ix(ix),
        _dy_plane(index_t(dy.stride_2())),
        _dy_row(index_t(dy.stride_3())),
        _dx_plane(index_t(dx.stride_2())),
        _dx_row(index_t(dx.stride_3())),
        _dy_box(dy_box) {
    // With unit strides, tap k of dx cell q reads dy cell c = q + p - k dil, inside dy_box for one
    // run of k.
    _unit_stride = ix.stride[0] == 1 && ix.stride[1] == 1 && ix.stride[2] == 1;
    _whole_rows = rowsOuter(ix);
    _bits = TapBits(ix.kernel);
    if (_unit_stride)
      for (int d = 0; d < 2; ++d)
        _spans[d] = TapSpans(0, dx_volume[d], ix.kernel[d], [&](index_t q, int k) {
          const index_t c = q + ix.padding[d] - index_t(k) * ix.dilation[d];
          return c >= dy_box.min(d) && c < dy_box.max(d);
        });
    for (int kd = 0; kd < ix.kernel[0]; ++kd)
      for (int kh = 0; kh < ix.kernel[1]; ++kh)
        for (int kw = 0; kw < ix.kernel[2]; ++kw)
          _tap_offset.push_back(-(index_t(kd) * ix.dilation[0] * _dy_plane +
                                  index_t(kh) * ix.dilation[1] * _dy_row +
                                  index_t(kw) * ix.dilation[2]));
    // As forward's (ForwardTiler): the taps of kh = 0, kw = 0 read the dy row furthest on, and the
    // next dx row (unit strides: Affine tiles) reads the one after it. Only for a dy of at least
    // kStreamBytes, whose lines come from memory: in alternating A/B runs (docs/PERFORMANCE.md,
    // session 24) it took 5-7% off (b) and (e) (32 MiB dy) on one thread, and (c) (8 MiB) and (d)
    // (1 MiB) stayed level or lost 1-2%.
    if (ix.kernel[1] > 1 && ix.taps() <= 64 && index_t(dy.span() * sizeof(T)) >= kStreamBytes)
      for (int kd = 0; kd < ix.kernel[0]; ++kd)
        _prefetch_bits |= std::uint64_t(1) << (kd * ix.kernel[1] * ix.kernel[2]);
  }

  // PositionGrid's cuts: around the dx rows whose every tap reads inside dy_box (none with strides
  // above 1, whose tiles all build tables).
  void cuts(const Box& box, index_t (&lo)[2], index_t (&hi)[2]) const {
    for (int d = 0; d < 2; ++d) {
      lo[d] = box.min(d);
      hi[d] = box.max(d);
      if (_unit_stride) _spans[d].fullRange(box.min(d), box.max(d), lo[d], hi[d]);
    }
  }

  void tile(const index_t* d, const index_t* h, const index_t* w, const int* lanes, int positions,
            TileTaps<T>& taps, TileOut<T>& out) const {
    // Unit strides and every position reading the same kd and kh taps inside dy_box: those taps
    // read dy rows inside dy_box, only W lanes can leave it, which one mask per (kw, position)
    // covers (Affine mode).
    bool same = _unit_stride;
    TapSpan span[2] = {};
    if (same) {
      span[0] = _spans[0](d[0]);
      span[1] = _spans[1](h[0]);
    }
    for (int r = 0; r < positions; ++r) {
      out.offset[r] = (d[r] + _ix.in_shift[0]) * _dx_plane + (h[r] + _ix.in_shift[1]) * _dx_row +
                      w[r] + _ix.in_shift[2];
      out.mask[r] = laneRange<T>(0, lanes[r]);
      if (same) {
        const TapSpan sd = _spans[0](d[r]), sh = _spans[1](h[r]);
        same = sd.begin == span[0].begin && sd.end == span[0].end && sh.begin == span[1].begin &&
               sh.end == span[1].end;
      }
    }
    // Kernels of more than 64 taps read every tap in Affine mode: only with full spans.
    if (same && !_bits.exact())
      same = span[0].begin == 0 && span[0].end == _ix.kernel[0] && span[1].begin == 0 &&
             span[1].end == _ix.kernel[1];
    if (same) {
      bool full = true;
      for (int r = 0; r < positions; ++r)
        out.base[r] = (d[r] + _ix.padding[0] + _ix.out_shift[0]) * _dy_plane +
                      (h[r] + _ix.padding[1] + _ix.out_shift[1]) * _dy_row + w[r] + _ix.padding[2] +
                      _ix.out_shift[2];
      for (int kw = 0; kw < _ix.kernel[2]; ++kw)
        for (int r = 0; r < positions; ++r) {
          const auto m = wLanes(w[r], kw, lanes[r]);
          taps.mask[std::size_t(kw) * kMaxTilePositions + std::size_t(r)] = m;
          full = full && m == fullMask<T>();
        }
      out.mode = TapMode::Affine;
      out.tap_bits = _bits(span[0], span[1]);
      out.load = full ? SimdLoad::Full : SimdLoad::Masked;
      out.tap_offset = _tap_offset.data();
      out.prefetch_bits = _prefetch_bits;
      out.prefetch_ahead = _dy_row;
      out.mask_rows = _ix.kernel[2];
      return;
    }
    out.mode = TapMode::Table;
    int count = 0;
    index_t cd[kMaxTilePositions] = {}, ch[kMaxTilePositions] = {};
    bool plane_ok[kMaxTilePositions], row_ok[kMaxTilePositions];
    for (int kd = 0; kd < _ix.kernel[0]; ++kd) {
      bool any_plane = false;
      for (int r = 0; r < positions; ++r) {
        plane_ok[r] = outputOf(_ix, 0, d[r], kd, _dy_box.min(0), _dy_box.max(0), cd[r]);
        any_plane = any_plane || plane_ok[r];
      }
      if (!any_plane) continue;
      for (int kh = 0; kh < _ix.kernel[1]; ++kh) {
        bool any_row = false;
        for (int r = 0; r < positions; ++r) {
          row_ok[r] =
              plane_ok[r] && outputOf(_ix, 1, h[r], kh, _dy_box.min(1), _dy_box.max(1), ch[r]);
          any_row = any_row || row_ok[r];
        }
        if (!any_row) continue;
        const int row_start = count;
        bool row_read = false;
        for (int kw = 0; kw < _ix.kernel[2]; ++kw) {
          const std::size_t slot = std::size_t(count) * kMaxTilePositions;
          bool any = false;
          for (int r = 0; r < positions; ++r) {
            const index_t cw0 = w[r] + _ix.padding[2] - index_t(kw) * _ix.dilation[2];
            const auto m = row_ok[r] ? wLanes(w[r], kw, lanes[r]) : typename Simd<T>::mask(0);
            taps.mask[slot + std::size_t(r)] = m;
            // Set wherever the row is read (RowsOuter finds taps 1 and 2 from tap 0's offset).
            taps.offset[slot + std::size_t(r)] =
                row_ok[r] ? (cd[r] + _ix.out_shift[0]) * _dy_plane +
                                (ch[r] + _ix.out_shift[1]) * _dy_row + cw0 + _ix.out_shift[2]
                          : 0;
            any = any || m != 0;
          }
          row_read = row_read || any;
          if (any || _whole_rows)
            taps.tap[std::size_t(count++)] = (kd * _ix.kernel[1] + kh) * _ix.kernel[2] + kw;
        }
        if (!row_read) count = row_start;
      }
    }
    taps.count = count;
  }

 private:
  // Lanes of the vector of dx cells [w, w + lanes) whose tap kw reads inside dy_box along W: lane l
  // reads dy cell cw0 + l (W stride 1).
  typename Simd<T>::mask wLanes(index_t w, int kw, int lanes) const {
    const index_t cw0 = w + _ix.padding[2] - index_t(kw) * _ix.dilation[2];
    return laneRange<T>(_dy_box.min(2) - cw0, std::min<index_t>(lanes, _dy_box.max(2) - cw0));
  }

  Conv3dIndexing _ix;
  index_t _dy_plane, _dy_row, _dx_plane, _dx_row;
  Box _dy_box;
  bool _unit_stride;
  bool _whole_rows;    // TapOrder::RowsOuter: tables list every kw tap of a row that is read
  TapSpans _spans[2];  // per dx plane and row, with unit strides
  TapBits _bits;
  std::vector<index_t> _tap_offset;
  std::uint64_t _prefetch_bits = 0;
};

// See conv3dBackwardData in kernels/Conv3d.hpp; requires hostBackwardDataApplies(g) and
// checkBackwardData.
template <class ExecSpace, class T>
void conv3dBackwardDataHost(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy,
                            const Conv3dWeightsOn<T, ExecSpace>& w, const WindowGeometry& g,
                            const Tensor<T, ExecSpace>& dx, const Box& dx_box, const Box& dy_box) {
  const index_t samples = dx.block().localSamples();
  if (dx_box.empty() || samples == 0) return;
  const Conv3dIndexing ix = makeIndexing(g, dx, dy);
  const auto& dyv = dy.view();
  const auto& dxv = dx.view();
  const DirectConv<T> p = directConv<T>(dy, dx, nullptr, ix.taps());
  // dy read per dx row: every channel and kernel plane.
  const index_t row_bytes =
      p.in_channels * g.kernel[0] * index_t(dyv.stride_3()) * index_t(sizeof(T));
  ScratchpadLease scratch(exec);
  const auto packed = packWeights<T>(exec, w, 1, scratch);
  const BackwardDataTiler<T> tiler(ix, dyv, dxv, dy_box, dx.block().globalExtents());
  const char* label = "halo3d::conv3dBackwardData(host simd)";
  if (rowsOuter(ix))
    runDirect<TapOrder::RowsOuter>(exec, label, p, packed, dx.block().channels(), samples, dx_box,
                                   row_bytes, tiler);
  else
    runDirect(exec, label, p, packed, dx.block().channels(), samples, dx_box, row_bytes, tiler);
}

#endif

}  // namespace halo3d::kernels::impl
