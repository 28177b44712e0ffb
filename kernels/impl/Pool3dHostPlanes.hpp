#pragma once
// Host planes of average pooling for windows of dilation 1 with at most 3 taps along D and H and
// the W rows of Pool3dHostRows.hpp: one (sample, channel, d) plane per call, its input rows read
// once each (into a few summed rows held in L1) instead of once per output row that needs them.
//
// Forward sums separably: each input row (ih) is summed over the window's D planes once (kept in a
// ring of 4 rows, since consecutive output rows share rows when the stride is below the window),
// the summed rows over the window's H rows, then the W taps. So a cell's value is
//   (sum over kw of (sum over kh of (sum over kd of x))) * scale
// in window order at each level, the first present term starting each D and H sum and the W sum
// starting at +0 with an absent (padding) tap adding +0. The order depends only on the cell's
// global coordinates, never on the box or the block it is computed in.
//
// Backward (stride 2, window 3, padding 1 along W: CosmoFlow's pools) gathers: input cell i along
// W has output i / 2 (even i) or (i - 1) / 2 and (i + 1) / 2 (odd i), so one summed dy row
// (over the covering (od, oh) rows, from +0, in that order) gives a dx row densely:
// dx(2 m) = R(m) scale, dx(2 m + 1) = (R(m) + R(m + 1)) scale, with R = 0 past dy_box. These are
// the bits of the per-residue spreading of PoolBackwardBody::spreadRow (a sum of R that starts at
// +0 is never -0, so the +0 that starts each slot changes nothing).
//
// Host-only: included by Pool3dImpl.hpp, called from the bodies' hostPlane, which only host
// execution spaces instantiate.

#include <algorithm>
#include <type_traits>

#include "halo3d/core/Types.hpp"
#include "halo3d/kernels/impl/Pool3dHostRows.hpp"
#include "halo3d/kernels/impl/Pool3dHostSimd.hpp"

namespace halo3d::kernels::impl {

// out[i] = (r[0][i] + r[1][i]) + ... for i < len, in the order of r, each term converted to Acc.
template <class Acc, class In>
void sumRowsInto(const In* const* r, int count, index_t len, Acc* out) {
  switch (count) {
    case 1: {
      const In* a = r[0];
      for (index_t i = 0; i < len; ++i)
        out[i] = Acc(a[i]);
      return;
    }
    case 2: {
      const In *a = r[0], *b = r[1];
      for (index_t i = 0; i < len; ++i)
        out[i] = Acc(a[i]) + Acc(b[i]);
      return;
    }
    case 3: {
      const In *a = r[0], *b = r[1], *c = r[2];
      for (index_t i = 0; i < len; ++i)
        out[i] = (Acc(a[i]) + Acc(b[i])) + Acc(c[i]);
      return;
    }
    default:
      for (index_t i = 0; i < len; ++i)
        out[i] = Acc(r[0][i]);
      for (int k = 1; k < count; ++k)
        for (index_t i = 0; i < len; ++i)
          out[i] += Acc(r[k][i]);
  }
}

// Output cells [w0, w1) of the output rows [h0, h1) of plane (n, c, od), for W stride S and KW taps
// (see the top of the file). Requires dilation 1 and 1 to 3 taps in the volume along D and H for
// every cell (the caller checks).
template <int S, int KW, class T, class Body>
void avgForwardPlane(const Body& b, index_t n, index_t c, index_t od, index_t h0, index_t h1,
                     index_t w0, index_t w1) {
  using Acc = typename Body::Acc;
  constexpr index_t kCells = 128;                  // output cells per chunk of a row
  constexpr index_t kLen = (kCells - 1) * S + KW;  // input positions of a chunk
  const index_t pad = b.ax[2].padding, W = b.ax[2].extent;
  const index_t fd = b.taps.at(0, od, 0), kd0 = b.taps.at(0, od, 1), kd1 = b.taps.at(0, od, 2);
  const int nd = int(kd1 - kd0);
  for (index_t c0 = w0; c0 < w1; c0 += kCells) {
    const index_t c1 = std::min(w1, c0 + kCells);
    const index_t a = c0 * S - pad;  // the position of slot 0: tap 0 of cell c0
    const index_t len = (c1 - 1 - c0) * S + KW;
    const index_t va = std::max<index_t>(a, 0), vb = std::min(a + len, W);
    Acc ring[4][kLen];
    index_t ring_row[4] = {-1, -1, -1, -1};
    int next = 0;
    Acc hsum[kLen];
    // Row ih summed over the plane's D taps, slots outside the volume zero. The ring keeps the
    // last four rows: an output row needs at most three consecutive ones, and rows are filled in
    // increasing order, so the slot refilled never holds a row still needed.
    const auto drow = [&](index_t ih) -> const Acc* {
      for (int k = 0; k < 4; ++k)
        if (ring_row[k] == ih) return ring[k];
      Acc* out = ring[next];
      ring_row[next] = ih;
      next = (next + 1) & 3;
      const T* rows[3] = {};
      for (int k = 0; k < nd; ++k)
        rows[k] = &b.x(n, c, fd + kd0 + k + b.xs[0], ih + b.xs[1], 0) + b.xs[2] + va;
      for (index_t i = 0; i < va - a; ++i)
        out[i] = Acc(0);
      sumRowsInto(rows, nd, vb - va, out + (va - a));
      for (index_t i = std::max(vb - a, index_t(0)); i < len; ++i)
        out[i] = Acc(0);
      return out;
    };
    for (index_t oh = h0; oh < h1; ++oh) {
      const index_t fh = b.taps.at(1, oh, 0), kh0 = b.taps.at(1, oh, 1), kh1 = b.taps.at(1, oh, 2);
      const int nh = int(kh1 - kh0);
      const Acc* rows[3] = {};
      for (int k = 0; k < nh; ++k)
        rows[k] = drow(fh + kh0 + k);
      const Acc* summed = rows[0];
      if (nh > 1) {
        sumRowsInto(rows, nh, len, hsum);
        summed = hsum;
      }
      T* yrow = &b.y(n, c, od + b.ys[0], oh + b.ys[1], 0) + b.ys[2];
      avgPoolRowInterior<S, KW>(summed, c1 - c0, b.scale, yrow + c0);
    }
  }
}

// Input cells [w0, w1) of the input rows [h0, h1) of plane (n, c, id), for stride 2, window 3 and
// padding 1 along W and dilation 1 (see the top of the file); dy_box spans [dyw0, dyw1) along W.
template <class T, class Body>
void avgBackwardPlaneK3S2P1(const Body& b, index_t n, index_t c, index_t id, index_t h0, index_t h1,
                            index_t w0, index_t w1, index_t dyw0, index_t dyw1) {
  using Acc = typename Body::Acc;
  constexpr index_t kCells = 512;           // input cells per chunk of a row
  constexpr index_t kLen = kCells / 2 + 2;  // their outputs
  const index_t od0 = b.outputs.at(0, id, 0), od1 = b.outputs.at(0, id, 1);
  const Acc sc = b.scale;
  for (index_t ih = h0; ih < h1; ++ih) {
    T* dxrow = &b.dx(n, c, id + b.xs[0], ih + b.xs[1], 0) + b.xs[2];
    const index_t oh0 = b.outputs.at(1, ih, 0), oh1 = b.outputs.at(1, ih, 1);
    if (od1 <= od0 || oh1 <= oh0) {
      for (index_t iw = w0; iw < w1; ++iw)
        dxrow[iw] = T(0);
      continue;
    }
#if HALO3D_POOL3D_AVX512
    if constexpr (std::is_same_v<T, float>) {
      constexpr index_t kMaxRows = 16;
      if ((od1 - od0) * (oh1 - oh0) <= kMaxRows) {
        const float* rows[kMaxRows];
        int nrows = 0;
        for (index_t od = od0; od < od1; ++od)
          for (index_t oh = oh0; oh < oh1; ++oh)
            rows[nrows++] = &b.dy(n, c, od + b.ys[0], oh + b.ys[1], 0) + b.ys[2];
        index_t iw = w0;
        if (iw & 1) {  // an odd first cell: outputs iw / 2 and iw / 2 + 1
          Acc r0 = Acc(0), r1 = Acc(0);
          const index_t o = iw / 2;
          for (int k = 0; k < nrows; ++k) {
            if (o >= dyw0 && o < dyw1) r0 += rows[k][o];
            if (o + 1 >= dyw0 && o + 1 < dyw1) r1 += rows[k][o + 1];
          }
          dxrow[iw] = (r0 + r1) * sc;
          ++iw;
        }
        if (iw < w1)
          avgBackwardRowK3S2P1(rows, nrows, iw / 2, dyw0, dyw1, w1 - iw, sc, dxrow + iw, b.stream);
        continue;
      }
    }
#endif
    for (index_t c0 = w0; c0 < w1; c0 += kCells) {
      const index_t c1 = std::min(w1, c0 + kCells);
      // Outputs [ra, ra + len) cover the cells [c0, c1); those outside dy_box are zero.
      const index_t ra = c0 / 2, len = (c1 - 1) / 2 + 2 - ra;
      const index_t va = std::max(ra, dyw0), vb = std::min(ra + len, dyw1);
      Acc r[kLen];
      for (index_t i = 0; i < len; ++i)
        r[i] = Acc(0);
      for (index_t od = od0; od < od1; ++od)
        for (index_t oh = oh0; oh < oh1; ++oh) {
          const T* dyrow = &b.dy(n, c, od + b.ys[0], oh + b.ys[1], 0) + b.ys[2];
          for (index_t o = va; o < vb; ++o)
            r[o - ra] += Acc(dyrow[o]);
        }
      index_t iw = c0;
      if (iw & 1) {
        dxrow[iw] = T((r[iw / 2 - ra] + r[iw / 2 + 1 - ra]) * sc);
        ++iw;
      }
      const index_t pairs = (c1 - iw) / 2;
      const Acc* rp = r + (iw / 2 - ra);
      T* out = dxrow + iw;
      for (index_t p = 0; p < pairs; ++p) {
        out[2 * p] = T(rp[p] * sc);
        out[2 * p + 1] = T((rp[p] + rp[p + 1]) * sc);
      }
      iw += 2 * pairs;
      if (iw < c1) dxrow[iw] = T(r[iw / 2 - ra] * sc);
    }
  }
#if HALO3D_POOL3D_AVX512
  if (b.stream) _mm_sfence();  // the streamed dx lines, visible before the kernel returns
#endif
}

}  // namespace halo3d::kernels::impl
