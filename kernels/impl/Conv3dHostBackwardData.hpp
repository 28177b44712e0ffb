#pragma once
// Host SIMD backward-data conv3d: the direct engine (Conv3dHostDirect.hpp) with dy as input and dx
// as output, in pull form. Tap (kd, kh, kw) of dx cell q reads dy cell c = (q + p - k dil) / s when
// that division is exact and c lies in dy_box; elsewhere the tap contributes nothing. Along W the
// stride must be 1, so that a vector of dx cells reads a contiguous vector of dy cells: the lanes
// whose dy cell leaves dy_box are masked off (never read), and a tile skips the taps that no lane
// of it reads (most taps at D/H strides > 1). The zero padding of dy is thus never materialised. W
// strides above 1 go to the generic path.

#include <Kokkos_Core.hpp>

#include <vector>

#include "core/HaloTensor.hpp"
#include "core/HaloWidths.hpp"
#include "kernels/impl/Conv3dChecks.hpp"
#include "kernels/impl/Conv3dGeneric.hpp"
#include "kernels/impl/Conv3dHostDirect.hpp"
#include "kernels/impl/Conv3dIndexing.hpp"
#include "kernels/impl/Conv3dSimd.hpp"

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
  template <class DyView, class DxView>
  BackwardDataTiler(const Conv3dIndexing& ix, const DyView& dy, const DxView& dx, const Box& dy_box)
      : _ix(ix),
        _dy_plane(index_t(dy.stride_2())),
        _dy_row(index_t(dy.stride_3())),
        _dx_plane(index_t(dx.stride_2())),
        _dx_row(index_t(dx.stride_3())),
        _dy_box(dy_box) {}

  void tile(index_t d, const index_t* h, const index_t* w, const int* lanes, int positions,
            TileTaps<T>& taps, TileOut<T>& out) const {
    constexpr auto full = fullMask<T>();
    for (int r = 0; r < positions; ++r) {
      out.offset[r] = (d + _ix.in_shift[0]) * _dx_plane + (h[r] + _ix.in_shift[1]) * _dx_row +
                      w[r] + _ix.in_shift[2];
      out.mask[r] = laneRange<T>(0, lanes[r]);
    }
    bool all_full = true;
    int count = 0;
    index_t ch[kMaxTilePositions];
    bool row_ok[kMaxTilePositions];
    for (int kd = 0; kd < _ix.kernel[0]; ++kd) {
      index_t cd;
      if (!outputOf(_ix, 0, d, kd, _dy_box.min(0), _dy_box.max(0), cd)) continue;
      const index_t plane = (cd + _ix.out_shift[0]) * _dy_plane;
      for (int kh = 0; kh < _ix.kernel[1]; ++kh) {
        bool any_row = false;
        for (int r = 0; r < positions; ++r) {
          row_ok[r] = outputOf(_ix, 1, h[r], kh, _dy_box.min(1), _dy_box.max(1), ch[r]);
          any_row = any_row || row_ok[r];
        }
        if (!any_row) continue;
        for (int kw = 0; kw < _ix.kernel[2]; ++kw) {
          const std::size_t slot = std::size_t(count) * kMaxTilePositions;
          bool any = false, tap_full = true;
          for (int r = 0; r < positions; ++r) {
            // dy cell of lane 0; lane l reads cw0 + l (W stride 1).
            const index_t cw0 = w[r] + _ix.padding[2] - index_t(kw) * _ix.dilation[2];
            const auto m = row_ok[r]
                               ? laneRange<T>(_dy_box.min(2) - cw0,
                                              std::min<index_t>(lanes[r], _dy_box.max(2) - cw0))
                               : typename Simd<T>::mask(0);
            taps.mask[slot + std::size_t(r)] = m;
            taps.offset[slot + std::size_t(r)] =
                m ? plane + (ch[r] + _ix.out_shift[1]) * _dy_row + cw0 + _ix.out_shift[2] : 0;
            any = any || m != 0;
            tap_full = tap_full && m == full;
          }
          if (!any) continue;
          taps.tap[std::size_t(count++)] = (kd * _ix.kernel[1] + kh) * _ix.kernel[2] + kw;
          all_full = all_full && tap_full;
        }
      }
    }
    taps.count = count;
    out.load = all_full ? SimdLoad::Full : SimdLoad::Masked;
  }

 private:
  Conv3dIndexing _ix;
  index_t _dy_plane, _dy_row, _dx_plane, _dx_row;
  Box _dy_box;
};

// See conv3dBackwardData in kernels/Conv3d.hpp; requires hostBackwardDataApplies(g) and
// checkBackwardData.
template <class ExecSpace, class T>
void conv3dBackwardDataHost(const ExecSpace& exec,
                            const HaloTensor<T, typename ExecSpace::memory_space>& dy,
                            const Conv3dWeights<T, typename ExecSpace::memory_space>& w,
                            const WindowGeometry& g,
                            const HaloTensor<T, typename ExecSpace::memory_space>& dx,
                            const Box& dx_box, const Box& dy_box) {
  const index_t samples = dx.block().localSamples();
  if (dx_box.empty() || samples == 0) return;
  const Conv3dIndexing ix = makeIndexing(g, dx, dy);
  const auto& dyv = dy.view();
  const auto& dxv = dx.view();
  DirectConv<T> p{};
  p.in = dyv.data();
  p.in_sample = index_t(dyv.stride_0());
  p.in_channel = index_t(dyv.stride_1());
  p.in_channels = dy.block().channels();
  p.out = dxv.data();
  p.out_sample = index_t(dxv.stride_0());
  p.out_channel = index_t(dxv.stride_1());
  p.bias = nullptr;
  p.taps = ix.taps();
  runDirect(exec, "halo3d::conv3dBackwardData(host simd)", p, packWeights<T>(w, 1),
            dx.block().channels(), samples, dx_box, BackwardDataTiler<T>(ix, dyv, dxv, dy_box));
}

#endif

}  // namespace halo3d::kernels::impl
