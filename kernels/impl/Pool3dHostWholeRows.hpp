#pragma once
// Host average pooling of CosmoFlow's window along W (3 taps, stride 2, padding 1, dilation 1) over
// planes of whole rows: W a multiple of 32 cells (backward also 16), the box spanning the volume
// along W. Float only, AVX-512. Further down, the same window on whole 8 x 8 planes and whole 4^3
// volumes held in registers (see there). On the 32^3-128^3 volumes the planes
// (Pool3dHostPlanes.hpp) and the 16-channel forms (Pool3dHostChannels.hpp) spent more time setting
// up each row (table look-ups, view indexing, masks for partial steps, loops over a run-time count
// of rows) than in its few 16-cell steps, as the max planes did before
// PoolBackwardBody::denseMaxPlane (docs/PERFORMANCE.md, issue 12 item 3). Here every step is whole,
// the counts of D and H terms are template arguments, and a row's set-up is its pointers.
//
// Every cell keeps the bits of the planes:
// - Forward: (((+0 + h(2j - 1)) + h(2j)) + h(2j + 1)) * scale, h(-1) = 0, where h is the row
//   summed over the window's H rows and those over its D planes, each from its first present term
//   in window order. Its W taps come from two registers of h (32 cells) by one permute each for
//   the even and odd cells and the odd ones shifted by a lane for h(2j - 1).
// - Backward: R(m) = +0 plus the covering (od, oh) rows' dy(m), od outer, oh inner, R(W / 2) = 0;
//   dx(2m) = R(m) scale, dx(2m + 1) = (R(m) + R(m + 1)) scale, as avgBackwardRowK3S2P1.
//
// Host-only: included by Pool3dImpl.hpp, called from the bodies' hostPlane on host execution spaces
// where HALO3D_POOL3D_AVX512 is set.

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/core/Types.hpp"
#include "halo3d/kernels/impl/Pool3dHostSimd.hpp"

namespace halo3d::kernels::impl {

// The longest row the forward holds (four D-summed rows on the stack, 16 KiB).
inline constexpr index_t kPoolWholeRowMax = 1024;

// Whether the whole-row planes can take a call along W: the window and an extent W that they
// cover (the caller checks that the box spans [0, W) of input cells backward, [0, W / 2) of output
// cells forward).
// Forward: W a multiple of 32; shorter rows stay with the 16-channel forms and the planes (per
// channel, rows of 4-16 cells in masked steps measured 1.5-4.5x slower than the 16-channel forms).
// Backward: also W = 16 (1.2-1.3x the 16-channel forms on 16^3 volumes; rows of 4 and 8 cells
// measured 0.4-0.7x of them).
inline bool poolWholeRowsAlongW(int taps, int stride, int padding, int dilation, index_t W,
                                bool backward) {
  return HALO3D_POOL3D_AVX512 && taps == 3 && stride == 2 && padding == 1 && dilation == 1 &&
         W > 0 && (W % 32 == 0 || (backward && W == 16));
}

// Whether a call is on volumes of avgForwardVolume4K3S2P1 and avgBackwardVolume4K3S2P1 (the caller
// checks the storage and the boxes): 4 x 4 x 4 cells, k3s2p1 along every axis.
inline bool poolVolume4(const WindowGeometry& g, const Extents3& e) {
  const WindowGeometry k3s2p1 = WindowGeometry::cubic(3, 2, 1);
  return HALO3D_POOL3D_AVX512 && e == Extents3{4, 4, 4} && g.kernel == k3s2p1.kernel &&
         g.stride == k3s2p1.stride && g.padding == k3s2p1.padding && g.dilation == k3s2p1.dilation;
}

// Whether a call's volume has the planes of avgForwardPlane8x8K3S2P1 and avgBackwardPlane8x8K3S2P1
// (the caller checks the storage and the boxes): 8 x 8 cells, k3s2p1 along H and W.
inline bool poolPlane8x8(const WindowGeometry& g, const Extents3& e) {
  return HALO3D_POOL3D_AVX512 && e[1] == 8 && e[2] == 8 && g.kernel[1] == 3 && g.kernel[2] == 3 &&
         g.stride[1] == 2 && g.stride[2] == 2 && g.padding[1] == 1 && g.padding[2] == 1 &&
         g.dilation[1] == 1 && g.dilation[2] == 1;
}

#if HALO3D_POOL3D_AVX512

// The offset from v.data() of global cell (d, h, 0) of channel c of sample n, where local = global
// + s. An integer, and a pointer only once an offset lands in the allocation: a split block's shift
// can put global plane or row 0 before its allocation.
template <class View, class Shift>
index_t cellOffset(const View& v, const Shift& s, index_t n, index_t c, index_t d, index_t h) {
  return n * index_t(v.stride_0()) + c * index_t(v.stride_1()) +
         (d + s[0]) * index_t(v.stride_2()) + (h + s[1]) * index_t(v.stride_3()) + s[2];
}

// Output cells j of the pair (2j, 2j + 1) of 32 input cells in two registers, as lanes j.
inline __m512 evenCells(__m512 a, __m512 b) {
  const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(a, idx, b);
}
inline __m512 oddCells(__m512 a, __m512 b) {
  const __m512i idx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  return _mm512_permutex2var_ps(a, idx, b);
}

// Average forward over the output rows [h0, h1) of plane (n, c, od), every cell of each, with ND
// D taps in the volume (the plane's) and W a multiple of 32 of at most kPoolWholeRowMax.
template <int ND, class Body>
void avgForwardWholeRowsK3S2P1(const Body& b, index_t n, index_t c, index_t od, index_t h0,
                               index_t h1) {
  const index_t W = b.ax[2].extent;
  const index_t sd = index_t(b.x.stride_2()), sh = index_t(b.x.stride_3());
  const index_t d = b.taps.at(0, od, 0) + b.taps.at(0, od, 1);  // the first present plane
  const index_t x0 = cellOffset(b.x, b.xs, n, c, d, 0);
  float* y = b.y.data() + cellOffset(b.y, b.ys, n, c, od, h0);
  const index_t ysh = index_t(b.y.stride_3());
  alignas(64) float ring[4][kPoolWholeRowMax];
  index_t ring_row[4] = {-1, -1, -1, -1};
  int next = 0;
  // Row ih summed over the D taps. Four rows: an output row needs at most three consecutive ones,
  // filled in increasing order, so the slot refilled never holds a row the current one needs.
  const auto drow = [&](index_t ih) -> const float* {
    for (int k = 0; k < 4; ++k)
      if (ring_row[k] == ih) return ring[k];
    float* out = ring[next];
    ring_row[next] = ih;
    next = (next + 1) & 3;
    const float* p = b.x.data() + (x0 + ih * sh);
    for (index_t i = 0; i < W; i += 16) {
      __m512 v = _mm512_loadu_ps(p + i);
      if constexpr (ND > 1) v = _mm512_add_ps(v, _mm512_loadu_ps(p + sd + i));
      if constexpr (ND > 2) v = _mm512_add_ps(v, _mm512_loadu_ps(p + 2 * sd + i));
      _mm512_store_ps(out + i, v);
    }
    return out;
  };
  const __m512 scale = _mm512_set1_ps(b.scale), zero = _mm512_setzero_ps();
  for (index_t oh = h0; oh < h1; ++oh, y += ysh) {
    const index_t ih = b.taps.at(1, oh, 0) + b.taps.at(1, oh, 1);
    const int nh = int(b.taps.at(1, oh, 2) - b.taps.at(1, oh, 1));
    const float* r0 = drow(ih);
    const float* r1 = nh > 1 ? drow(ih + 1) : r0;
    const float* r2 = nh > 2 ? drow(ih + 2) : r0;
    const auto row = [&](auto nhc) {
      constexpr int NH = decltype(nhc)::value;
      const auto hsum = [&](index_t i) {
        __m512 v = _mm512_load_ps(r0 + i);
        if constexpr (NH > 1) v = _mm512_add_ps(v, _mm512_load_ps(r1 + i));
        if constexpr (NH > 2) v = _mm512_add_ps(v, _mm512_load_ps(r2 + i));
        return v;
      };
      __m512 prev = zero;  // the previous step's odd cells: lane 15 is h(2j - 1) of lane 0
      for (index_t i = 0; i < W; i += 32) {
        const __m512 a = hsum(i), bb = hsum(i + 16);
        const __m512 even = evenCells(a, bb), odd = oddCells(a, bb);
        // The zero-masked form (all lanes set): GCC 12's plain form starts from an undefined
        // register.
        const __m512 before = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
            0xffff, _mm512_castps_si512(odd), _mm512_castps_si512(prev), 15));
        const __m512 acc = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(zero, before), even), odd);
        _mm512_storeu_ps(y + i / 2, _mm512_mul_ps(acc, scale));
        prev = odd;
      }
    };
    if (nh == 1)
      row(std::integral_constant<int, 1>());
    else if (nh == 2)
      row(std::integral_constant<int, 2>());
    else
      row(std::integral_constant<int, 3>());
  }
}

// One dx row of W cells from the covering dy rows (see the top of the file): ND planes (od) of NH
// rows (oh) each, a at row oh0 of plane od0, the row oh0 + 1 at a + hs, plane od0 + 1 at a + ds.
// W a multiple of 32, or 16 (never streamed). With Stream, dx is 64-byte aligned and stored around
// the caches (the caller fences).
template <int ND, int NH, bool Stream>
inline void avgBackwardWholeRowK3S2P1(const float* a, index_t hs, index_t ds, index_t W,
                                      __m512 scale, float* dx) {
  const __m512i even = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(8));
  const auto sums = [&](index_t m) {
    __m512 r = _mm512_add_ps(_mm512_setzero_ps(), _mm512_loadu_ps(a + m));
    if constexpr (NH > 1) r = _mm512_add_ps(r, _mm512_loadu_ps(a + hs + m));
    if constexpr (ND > 1) r = _mm512_add_ps(r, _mm512_loadu_ps(a + ds + m));
    if constexpr (ND > 1 && NH > 1) r = _mm512_add_ps(r, _mm512_loadu_ps(a + ds + hs + m));
    return r;
  };
  if (W == 16) {  // one step: 8 outputs loaded under a mask, 16 cells stored
    const __mmask16 in = 0xff;
    __m512 r = _mm512_add_ps(_mm512_setzero_ps(), _mm512_maskz_loadu_ps(in, a));
    if constexpr (NH > 1) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(in, a + hs));
    if constexpr (ND > 1) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(in, a + ds));
    if constexpr (ND > 1 && NH > 1) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(in, a + ds + hs));
    const __m512 shifted = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(
        0xffff, _mm512_castps_si512(_mm512_setzero_ps()), _mm512_castps_si512(r), 1));
    const __m512 e = _mm512_mul_ps(r, scale);
    const __m512 o = _mm512_mul_ps(_mm512_add_ps(r, shifted), scale);
    _mm512_storeu_ps(dx, _mm512_permutex2var_ps(e, even, o));
    return;
  }
  const index_t outs = W / 2;
  __m512 cur = sums(0);
  for (index_t m = 0; m < outs; m += 16) {
    const __m512 next = m + 16 < outs ? sums(m + 16) : _mm512_setzero_ps();
    const __m512 shifted = _mm512_castsi512_ps(
        _mm512_maskz_alignr_epi32(0xffff, _mm512_castps_si512(next), _mm512_castps_si512(cur), 1));
    const __m512 e = _mm512_mul_ps(cur, scale);
    const __m512 o = _mm512_mul_ps(_mm512_add_ps(cur, shifted), scale);
    const __m512 lo = _mm512_permutex2var_ps(e, even, o), hi = _mm512_permutex2var_ps(e, odd, o);
    if constexpr (Stream) {
      _mm512_stream_ps(dx + 2 * m, lo);
      _mm512_stream_ps(dx + 2 * m + 16, hi);
    } else {
      _mm512_storeu_ps(dx + 2 * m, lo);
      _mm512_storeu_ps(dx + 2 * m + 16, hi);
    }
    cur = next;
  }
}

// The rows of avgBackwardWholeRowsK3S2P1 for ND covering planes.
template <int ND, bool Stream, class Body>
void avgBackwardWholeRowsK3S2P1(const Body& b, index_t dy0, index_t ds, float* dx, index_t h0,
                                index_t h1) {
  const index_t W = b.ax[2].extent;
  const index_t ysh = index_t(b.dy.stride_3()), xsh = index_t(b.dx.stride_3());
  const float* dy = b.dy.data();
  const __m512 scale = _mm512_set1_ps(b.scale);
  const auto row = [&](auto nh, const float* a, float* to) {
    constexpr int NH = decltype(nh)::value;
    if (Stream && (reinterpret_cast<std::uintptr_t>(to) & 63) == 0)
      avgBackwardWholeRowK3S2P1<ND, NH, true>(a, ysh, ds, W, scale, to);
    else
      avgBackwardWholeRowK3S2P1<ND, NH, false>(a, ysh, ds, W, scale, to);
  };
  if (ND > 0 && b.pairs_h && h0 == 0 && h1 == b.ax[1].extent) {
    // Rows 2 q have dy row q, rows 2 q + 1 dy rows q and q + 1 (the last only q): no look-ups.
    const index_t rows = h1 / 2;
    const float* a = dy + dy0;
    for (index_t q = 0; q < rows; ++q, a += ysh, dx += 2 * xsh) {
      row(std::integral_constant<int, 1>(), a, dx);
      if (q + 1 < rows)
        row(std::integral_constant<int, 2>(), a, dx + xsh);
      else
        row(std::integral_constant<int, 1>(), a, dx + xsh);
    }
    if constexpr (Stream) _mm_sfence();
    return;
  }
  for (index_t ih = h0; ih < h1; ++ih, dx += xsh) {
    const index_t oh0 = b.outputs.at(1, ih, 0), oh1 = b.outputs.at(1, ih, 1);
    if (ND == 0 || oh1 <= oh0) {
      for (index_t i = 0; i < W; i += 16)
        _mm512_storeu_ps(dx + i, _mm512_setzero_ps());
      continue;
    }
    const float* a = dy + (dy0 + oh0 * ysh);
    if (oh1 - oh0 == 1)
      row(std::integral_constant<int, 1>(), a, dx);
    else
      row(std::integral_constant<int, 2>(), a, dx);
  }
  if constexpr (Stream) _mm_sfence();  // the streamed dx lines, visible before the kernel returns
}

// Average backward over the input rows [h0, h1) of plane (n, c, id), every cell of each, with
// dy_box spanning [0, W / 2) along W and at most 2 covering outputs along D and along H. Stream: dx
// rows whose start is 64-byte aligned are stored around the caches.
template <bool Stream, class Body>
void avgBackwardWholeRowsK3S2P1(const Body& b, index_t n, index_t c, index_t id, index_t h0,
                                index_t h1) {
  const index_t od0 = b.outputs.at(0, id, 0), od1 = b.outputs.at(0, id, 1);
  const index_t ds = index_t(b.dy.stride_2());
  const index_t dy0 = cellOffset(b.dy, b.ys, n, c, od0, 0);  // row 0 of the first covering plane
  float* dx = b.dx.data() + cellOffset(b.dx, b.xs, n, c, id, h0);
  if (od1 - od0 == 1)
    avgBackwardWholeRowsK3S2P1<1, Stream>(b, dy0, ds, dx, h0, h1);
  else if (od1 - od0 == 2)
    avgBackwardWholeRowsK3S2P1<2, Stream>(b, dy0, ds, dx, h0, h1);
  else
    avgBackwardWholeRowsK3S2P1<0, Stream>(b, dy0, ds, dx, h0, h1);
}

// Planes of 8 x 8 cells (the 8^3 volumes of CosmoFlow's last pools), k3s2p1 along H and W, rows
// stored densely (8 cells apart in x and dx, 4 in y and dy): a whole plane is four registers of two
// rows, and a whole output plane one register, so that a (channel, plane) is some twenty vector
// operations instead of eight rows of set-up (the 16-channel forms' transposes measured 26-47% of
// the stream bandwidth on these volumes). The same terms in the same order as the rows above.

// Lane l of the result is v's lane idx[l]. The zero-masked form (all lanes set): GCC 12's plain
// form starts from an undefined register.
inline __m512 permuteLanes(__m512i idx, __m512 v) {
  return _mm512_maskz_permutexvar_ps(0xffff, idx, v);
}

// Blocks of four lanes: Imm picks blocks 0 and 1 from a, 2 and 3 from b. The zero-masked form (all
// lanes set): GCC 12's plain form starts from an undefined register.
template <int Imm>
inline __m512 shuffleBlocks(__m512 a, __m512 b) {
  return _mm512_maskz_shuffle_f32x4(0xffff, a, b, Imm);
}

// Average forward of output plane od (4 x 4 cells) from ND D taps.
template <int ND, class Body>
void avgForwardPlane8x8K3S2P1(const Body& b, index_t n, index_t c, index_t od) {
  const index_t sd = index_t(b.x.stride_2());
  const index_t d = b.taps.at(0, od, 0) + b.taps.at(0, od, 1);  // the first present plane
  const float* p = b.x.data() + cellOffset(b.x, b.xs, n, c, d, 0);
  __m512 a[4];  // rows (0, 1), (2, 3), (4, 5), (6, 7), summed over the D taps
  for (int r = 0; r < 4; ++r) {
    __m512 v = _mm512_loadu_ps(p + 16 * r);
    if constexpr (ND > 1) v = _mm512_add_ps(v, _mm512_loadu_ps(p + sd + 16 * r));
    if constexpr (ND > 2) v = _mm512_add_ps(v, _mm512_loadu_ps(p + 2 * sd + 16 * r));
    a[r] = v;
  }
  // Output rows (0, 1) and (2, 3) summed over their H rows, each a register of two 8-cell rows:
  // row oh is (A(2 oh - 1) + A(2 oh)) + A(2 oh + 1), row 0 starting at A(0).
  const __m512 y0 = shuffleBlocks<0x44>(a[0], a[1]);  // A0 | A2
  const __m512 z0 = shuffleBlocks<0xee>(a[0], a[1]);  // A1 | A3
  const __m512 x0 = shuffleBlocks<0xe0>(a[0], a[0]);  // - | A1
  const __m512 h0 = _mm512_add_ps(_mm512_mask_add_ps(y0, 0xff00, x0, y0), z0);
  const __m512 y1 = shuffleBlocks<0x44>(a[2], a[3]);  // A4 | A6
  const __m512 z1 = shuffleBlocks<0xee>(a[2], a[3]);  // A5 | A7
  const __m512 x1 = shuffleBlocks<0xee>(a[1], a[2]);  // A3 | A5
  const __m512 h1 = _mm512_add_ps(_mm512_add_ps(x1, y1), z1);
  // Lane j: output row j / 4, cell j % 4; the tap before each row's first cell is absent.
  const __m512 even = evenCells(h0, h1), odd = oddCells(h0, h1);
  const __m512i back = _mm512_setr_epi32(0, 0, 1, 2, 4, 4, 5, 6, 8, 8, 9, 10, 12, 12, 13, 14);
  const __m512 before = _mm512_maskz_permutexvar_ps(0xeeee, back, odd);
  const __m512 zero = _mm512_setzero_ps();
  const __m512 acc = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(zero, before), even), odd);
  float* y = b.y.data() + cellOffset(b.y, b.ys, n, c, od, 0);
  _mm512_storeu_ps(y, _mm512_mul_ps(acc, _mm512_set1_ps(b.scale)));
}

// Average backward of input plane id (8 x 8 cells) from its ND covering dy planes (4 x 4 cells,
// from od0).
template <int ND, class Body>
void avgBackwardPlane8x8K3S2P1(const Body& b, index_t n, index_t c, index_t id, index_t od0) {
  float* dx = b.dx.data() + cellOffset(b.dx, b.xs, n, c, id, 0);
  if constexpr (ND == 0) {
    for (int r = 0; r < 4; ++r)
      _mm512_storeu_ps(dx + 16 * r, _mm512_setzero_ps());
    return;
  } else {
    const index_t sd = index_t(b.dy.stride_2());
    const float* q = b.dy.data() + cellOffset(b.dy, b.ys, n, c, od0, 0);
    __m512 d[ND];  // the dy planes, lane 4 oh + ow
    for (int k = 0; k < ND; ++k)
      d[k] = _mm512_loadu_ps(q + k * sd);
    const __m512 scale = _mm512_set1_ps(b.scale);
    const __m512i even = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(8));
    const __m512i next = _mm512_setr_epi32(1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15, 0);
    // dx rows 4 k .. 4 k + 3, lane 4 r + m: R(m) of row 4 k + r. An even row 2 q has dy row q, an
    // odd row 2 q + 1 dy rows q and q + 1 (the last odd row only q): per plane its first rows
    // (blocks first), then under the mask of the odd rows their second.
    const auto half = [&](auto first, auto second, __mmask16 odd_rows, __m512& lo, __m512& hi) {
      __m512 r = _mm512_setzero_ps();
      for (int k = 0; k < ND; ++k) {
        r = _mm512_add_ps(r, shuffleBlocks<decltype(first)::value>(d[k], d[k]));
        r = _mm512_mask_add_ps(r, odd_rows, r, shuffleBlocks<decltype(second)::value>(d[k], d[k]));
      }
      const __m512 shifted = _mm512_maskz_permutexvar_ps(0x7777, next, r);  // R(m + 1), 0 at 4
      const __m512 e = _mm512_mul_ps(r, scale);
      const __m512 o = _mm512_mul_ps(_mm512_add_ps(r, shifted), scale);
      lo = _mm512_permutex2var_ps(e, even, o);
      hi = _mm512_permutex2var_ps(e, odd, o);
    };
    // Blocks (0, 0, 1, 1) and (-, 1, -, 2) for rows 0-3; (2, 2, 3, 3) and (-, 3, -, -) for 4-7.
    __m512 r0, r1, r2, r3;
    half(std::integral_constant<int, 0x50>(), std::integral_constant<int, 0x84>(), 0xf0f0, r0, r1);
    half(std::integral_constant<int, 0xfa>(), std::integral_constant<int, 0x0c>(), 0x00f0, r2, r3);
    _mm512_storeu_ps(dx, r0);
    _mm512_storeu_ps(dx + 16, r1);
    _mm512_storeu_ps(dx + 32, r2);
    _mm512_storeu_ps(dx + 48, r3);
  }
}

// Volumes of 4 x 4 x 4 cells stored densely (CosmoFlow's last pools), k3s2p1 along every axis: a
// channel's whole volume is four registers (one per plane, lane 4 h + w) and its 2 x 2 x 2 outputs
// half of one, so that a channel is a few vector operations; 16 channels per call, whose work
// items are (sample, 16 channels) (per plane, the 16-channel forms' transposes measured 14-30% of
// the stream bandwidth here). The same terms in the same order as the rows above.

// Average forward of channels [c0, c0 + 16) of sample n.
template <class Body>
void avgForwardVolume4K3S2P1(const Body& b, index_t n, index_t c0) {
  const __m512 scale = _mm512_set1_ps(b.scale), zero = _mm512_setzero_ps();
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i back = _mm512_setr_epi32(0, 1, 0, 5, 0, 9, 0, 13, 0, 0, 0, 0, 0, 0, 0, 0);
  // The pointers and strides in locals: the stores below may alias the body for all the compiler
  // knows.
  const float* x0 = b.x.data() + cellOffset(b.x, b.xs, n, c0, 0, 0);
  float* y0 = b.y.data() + cellOffset(b.y, b.ys, n, c0, 0, 0);
  const index_t xc = index_t(b.x.stride_1()), yc = index_t(b.y.stride_1());
  for (index_t l = 0; l < kPoolLanes; ++l) {
    const float* x = x0 + l * xc;
    const __m512 p0 = _mm512_loadu_ps(x), p1 = _mm512_loadu_ps(x + 16),
                 p2 = _mm512_loadu_ps(x + 32), p3 = _mm512_loadu_ps(x + 48);
    // D: output plane 0 has planes 0 and 1, plane 1 planes 1, 2 and 3.
    const __m512 d0 = _mm512_add_ps(p0, p1), d1 = _mm512_add_ps(_mm512_add_ps(p1, p2), p3);
    // H, one output row per block (od 2 + oh): row 0 has rows 0 and 1, row 1 rows 1, 2 and 3.
    __m512 h = _mm512_add_ps(shuffleBlocks<0x44>(d0, d1), shuffleBlocks<0x99>(d0, d1));
    h = _mm512_mask_add_ps(h, 0xf0f0, h, shuffleBlocks<0xcc>(d0, d1));
    // W, lane 2 (block) + ow: cell 0 has cells 0 and 1, cell 1 cells 1, 2 and 3.
    const __m512 before = _mm512_maskz_permutexvar_ps(0xaa, back, h);
    const __m512 acc = _mm512_add_ps(
        _mm512_add_ps(_mm512_add_ps(zero, before), permuteLanes(even, h)), permuteLanes(odd, h));
    float* y = y0 + l * yc;
    _mm512_mask_storeu_ps(y, 0xff, _mm512_mul_ps(acc, scale));
  }
}

// Average backward of channels [c0, c0 + 16) of sample n. `terms` (see avgBackwardVolume4Terms)
// places each dx cell's dy terms in order.
struct PoolVolume4Terms {
  __m512i index[4][4];   // [dx plane][term]: the dy cell (4 od + 2 oh + ow) of each lane
  __mmask16 mask[4][4];  // the lanes that have the term
  int terms[4];          // the terms of each dx plane
};

// The terms of every dx cell of the 4^3 volume, lane 4 ih + iw of plane id: R(m) (m = iw / 2) of
// the backward rows, its covering (od, oh) in order, od outer, then for an odd iw its R(m + 1)
// added after the sum (0 past the volume) by the caller.
inline PoolVolume4Terms avgBackwardVolume4Terms() {
  alignas(64) std::int32_t index[4][4][16] = {};
  __mmask16 mask[4][4] = {};
  const auto covering = [](int i, int& o0, int& o1) {  // outputs of input i, k3s2p1, 2 outputs
    o0 = i / 2;
    o1 = std::min((i + 1) / 2 + 1, 2);
  };
  for (int id = 0; id < 4; ++id)
    for (int lane = 0; lane < 16; ++lane) {
      const int ih = lane / 4, m = (lane % 4) / 2;
      int od0, od1, oh0, oh1;
      covering(id, od0, od1);
      covering(ih, oh0, oh1);
      int k = 0;
      for (int od = od0; od < od1; ++od)
        for (int oh = oh0; oh < oh1; ++oh, ++k) {
          index[id][k][lane] = od * 4 + oh * 2 + m;
          mask[id][k] = __mmask16(mask[id][k] | (1u << lane));
        }
    }
  PoolVolume4Terms t;
  for (int id = 0; id < 4; ++id) {
    t.terms[id] = 0;
    for (int k = 0; k < 4; ++k) {
      t.index[id][k] = _mm512_load_si512(index[id][k]);
      t.mask[id][k] = mask[id][k];
      if (mask[id][k]) t.terms[id] = k + 1;
    }
  }
  return t;
}

template <class Body>
void avgBackwardVolume4K3S2P1(const Body& b, const PoolVolume4Terms& t, index_t n, index_t c0) {
  const __m512 scale = _mm512_set1_ps(b.scale), zero = _mm512_setzero_ps();
  // R(m + 1) for the lanes of an odd cell of m = 0 (lane 4 ih + 1 takes lane 4 ih + 2).
  const __m512i next = _mm512_setr_epi32(0, 2, 0, 0, 0, 6, 0, 0, 0, 10, 0, 0, 0, 14, 0, 0);
  // The pointers and strides in locals: the stores below may alias the body for all the compiler
  // knows.
  const float* dy0 = b.dy.data() + cellOffset(b.dy, b.ys, n, c0, 0, 0);
  float* dx0 = b.dx.data() + cellOffset(b.dx, b.xs, n, c0, 0, 0);
  const index_t yc = index_t(b.dy.stride_1()), xc = index_t(b.dx.stride_1());
  for (index_t l = 0; l < kPoolLanes; ++l) {
    const __m512 d = _mm512_maskz_loadu_ps(0xff, dy0 + l * yc);
    float* dx = dx0 + l * xc;
    for (int id = 0; id < 4; ++id) {
      __m512 r = zero;
      for (int k = 0; k < t.terms[id]; ++k)
        r = _mm512_mask_add_ps(r, t.mask[id][k], r, permuteLanes(t.index[id][k], d));
      const __m512 rn = _mm512_maskz_permutexvar_ps(0x2222, next, r);
      _mm512_storeu_ps(dx + 16 * id, _mm512_mul_ps(_mm512_add_ps(r, rn), scale));
    }
  }
}

#endif

}  // namespace halo3d::kernels::impl
