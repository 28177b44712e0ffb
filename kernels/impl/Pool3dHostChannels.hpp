#pragma once
// Host average pooling 16 channels at a time (float, AVX-512). On the volumes of CosmoFlow's last
// pools (4^3 to 16^3) a row has 2 to 16 cells, so the row and plane code of Pool3dHostPlanes.hpp
// spends most of its time setting up rows of a few values (docs/PERFORMANCE.md, issue 12 item 3).
// Here one work item is a (sample, 16 channels, d) plane. On short rows each register holds one
// cell of 16 channels, and the plane's window sums are plain vector adds over cells, whatever the
// row length; the cells come in and go out through 16x16 transposes of the channels' rows (several
// short rows per register), not gathers, which measured several times slower here. The backward's
// rows of more than 16 cells instead run the planes' AVX-512 row on each channel, with the row's
// look-ups done once for the 16 channels.
//
// Every cell keeps the bits of the planes: lanes are independent channels, and each cell's terms
// are added in the planes' order.
// - Forward (avgForwardChannels): (sum over kw of (sum over kh of (sum over kd of x))) * scale, the
//   D and H sums starting at their first present term, the W sum at +0 over the taps present (an
//   absent tap adds +0 in the planes, which changes no sum that starts at +0).
// - Backward, window 3, stride 2, padding 1 along W (avgBackwardChannelsK3S2P1): R(m) = +0 plus the
//   covering (od, oh) rows' dy(m), od outer, oh inner, R = 0 past dy_box; dx(2m) = R(m) scale,
//   dx(2m + 1) = (R(m) + R(m + 1)) scale.
//
// Host-only: included by Pool3dImpl.hpp, called only on host execution spaces where
// HALO3D_POOL3D_AVX512 is set.

#include <algorithm>

#include "halo3d/core/Types.hpp"
#include "halo3d/kernels/impl/Pool3dHostSimd.hpp"

namespace halo3d::kernels::impl {

// Channels per register, and the largest window rectangle (input rows times cells) and row (input
// or output cells) of a plane that the scratch below holds.
inline constexpr index_t kPoolLanes = 16;
inline constexpr index_t kPoolChannelRect = 1024;
inline constexpr index_t kPoolChannelRow = 64;
inline constexpr index_t kPoolBandCells = 128;

#if HALO3D_POOL3D_AVX512

// A gather of all 16 lanes. The masked form: GCC 12's plain form starts from an undefined register,
// which trips -Wmaybe-uninitialized in its own header.
inline __m512 gatherLanes(const __m512i& offsets, const float* base) {
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xffff, offsets, base, 4);
}

// The lane offsets of 16 channels: lane l reads element l * channel_stride from its base.
inline __m512i channelOffsets(index_t channel_stride) {
  return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                            _mm512_set1_epi32(int(channel_stride)));
}

// Transposes 16 registers of 16 floats in place: afterwards r[j] lane l holds what r[l] lane j
// held. The zero-masked forms (all lanes set): GCC 12's plain forms start from an undefined
// register.
inline void transpose16(__m512* r) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_maskz_unpacklo_ps(0xffff, r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_maskz_unpackhi_ps(0xffff, r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    r[4 * i + 0] =
        _mm512_maskz_shuffle_ps(0xffff, t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 1] =
        _mm512_maskz_shuffle_ps(0xffff, t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[4 * i + 2] =
        _mm512_maskz_shuffle_ps(0xffff, t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 3] =
        _mm512_maskz_shuffle_ps(0xffff, t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      t[8 * i + j] = _mm512_maskz_shuffle_f32x4(0xffff, r[8 * i + j], r[8 * i + 4 + j], 0x88);
      t[8 * i + 4 + j] = _mm512_maskz_shuffle_f32x4(0xffff, r[8 * i + j], r[8 * i + 4 + j], 0xdd);
    }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_maskz_shuffle_f32x4(0xffff, t[j], t[8 + j], 0x88);
    r[8 + j] = _mm512_maskz_shuffle_f32x4(0xffff, t[j], t[8 + j], 0xdd);
  }
}

// out[j] for j < count <= 16, lane l: the sum over k < nrows of base[l * channel_stride +
// offsets[k] + j], in k order, from +0 when from_zero and from the first term otherwise. Each
// channel's rows are added as rows (contiguous loads), then the 16 sums transposed into cells.
inline void loadChannelSums(const float* base, index_t channel_stride, const index_t* offsets,
                            int nrows, bool from_zero, index_t count, __m512* out) {
  const __mmask16 m = laneRange(0, 0, count);
  __m512 r[16];
  for (index_t l = 0; l < kPoolLanes; ++l) {
    const float* p = base + l * channel_stride;
    __m512 v = _mm512_maskz_loadu_ps(m, p + offsets[0]);
    if (from_zero) v = _mm512_add_ps(_mm512_setzero_ps(), v);
    for (int k = 1; k < nrows; ++k)
      v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, p + offsets[k]));
    r[l] = v;
  }
  transpose16(r);
  for (index_t j = 0; j < count; ++j)
    out[j] = r[j];
}

// Stores cells [0, count) of a row of 16-channel registers (`row[j]`, lane l = channel l) as 16
// channel rows: channel l's cell j goes to out + l * channel_stride + j.
inline void storeChannelRows(const __m512* row, index_t count, float* out, index_t channel_stride) {
  if (count <= 4) {  // a transpose would move at most 4 values per channel: plain copies cost less
    const float* in = reinterpret_cast<const float*>(row);
    for (index_t l = 0; l < kPoolLanes; ++l)
      for (index_t j = 0; j < count; ++j)
        out[l * channel_stride + j] = in[j * kPoolLanes + l];
    return;
  }
  for (index_t j0 = 0; j0 < count; j0 += 16) {
    const index_t n = std::min<index_t>(16, count - j0);
    __m512 r[16];
    for (index_t j = 0; j < 16; ++j)
      r[j] = j < n ? row[j0 + j] : _mm512_setzero_ps();
    transpose16(r);
    const __mmask16 m = laneRange(0, 0, n);
    for (index_t l = 0; l < kPoolLanes; ++l)
      _mm512_mask_storeu_ps(out + l * channel_stride + j0, m, r[l]);
  }
}

// Loads `rows` rows of `count` cells of 16 channels (rows * count <= 16) into out[j * count + i]
// (lane l = channel l): cell i of row j of channel l is the sum over k < nterms of
// base[l * channel_stride + j * row_stride + terms[k] + i], in k order, from +0 when from_zero and
// from the first term otherwise. Each channel's rows fill one register (row j in lanes [j count,
// (j + 1) count)), so that a plane of short rows costs one transpose, not one per row.
inline void loadChannelBlock(const float* base, index_t channel_stride, index_t row_stride,
                             index_t rows, index_t count, const index_t* terms, int nterms,
                             bool from_zero, __m512* out) {
  const unsigned row_mask = (1u << count) - 1u;
  __m512 r[16];
  for (index_t l = 0; l < kPoolLanes; ++l) {
    const float* p = base + l * channel_stride;
    const auto block = [&](index_t term) {
      __m512 v = _mm512_setzero_ps();
      // Lane j count + i reads row j's cell i: the pointer is moved back by j count cells (still
      // inside row 0 or later, since row_stride >= count).
      for (index_t j = 0; j < rows; ++j)
        v = _mm512_mask_loadu_ps(v, __mmask16(row_mask << (j * count)),
                                 p + term + j * (row_stride - count));
      return v;
    };
    __m512 v = block(terms[0]);
    if (from_zero) v = _mm512_add_ps(_mm512_setzero_ps(), v);
    for (int k = 1; k < nterms; ++k)
      v = _mm512_add_ps(v, block(terms[k]));
    r[l] = v;
  }
  transpose16(r);
  for (index_t j = 0; j < rows * count; ++j)
    out[j] = r[j];
}

// Stores cells[j * count + i] (rows * count <= 16 registers, lane l = channel l) as `rows` rows of
// `count` cells of 16 channels: channel l's cell i of row j goes to out + l * channel_stride +
// j * row_stride + i.
inline void storeChannelBlock(const __m512* cells, index_t rows, index_t count, float* out,
                              index_t channel_stride, index_t row_stride) {
  const index_t n = rows * count;
  if (n <= 4) {  // a transpose would move at most 4 values per channel: plain copies cost less
    const float* in = reinterpret_cast<const float*>(cells);
    for (index_t l = 0; l < kPoolLanes; ++l)
      for (index_t j = 0; j < rows; ++j)
        for (index_t i = 0; i < count; ++i)
          out[l * channel_stride + j * row_stride + i] = in[(j * count + i) * kPoolLanes + l];
    return;
  }
  __m512 r[16];
  for (index_t j = 0; j < 16; ++j)
    r[j] = j < n ? cells[j] : _mm512_setzero_ps();
  transpose16(r);
  const unsigned row_mask = (1u << count) - 1u;
  for (index_t l = 0; l < kPoolLanes; ++l)
    for (index_t j = 0; j < rows; ++j)
      _mm512_mask_storeu_ps(out + l * channel_stride + j * (row_stride - count),
                            __mmask16(row_mask << (j * count)), r[l]);
}

// Calls f(j, q, i, m) for blocks that tile `rows` rows of `count` cells: q whole rows from row j
// when a row has at most 16 cells (q count <= 16), else cells [i, i + m) of row j (q = 1).
template <class F>
void forEachChannelBlock(index_t rows, index_t count, const F& f) {
  if (count <= 16) {
    const index_t q = 16 / count;
    for (index_t j = 0; j < rows; j += q)
      f(j, std::min(q, rows - j), index_t(0), count);
    return;
  }
  for (index_t j = 0; j < rows; ++j)
    for (index_t i = 0; i < count; i += 16)
      f(j, index_t(1), i, std::min<index_t>(16, count - i));
}

// Average forward of output rows [h0, h1), cells [w0, w1) of plane od, channels [c0, c0 + 16) of
// sample n (see the top of the file). Requires dilation 1, at most kPoolChannelRow cells along W
// and kPoolChannelRect in the window rectangle of the rows and cells (the caller cuts the plane
// into such bands and chunks).
template <class Body>
void avgForwardChannels(const Body& b, index_t n, index_t c0, index_t od, index_t h0, index_t h1,
                        index_t w0, index_t w1) {
  alignas(64) static thread_local __m512 dsum[kPoolChannelRect];
  alignas(64) static thread_local __m512 hrow[kPoolChannelRow];
  alignas(64) static thread_local __m512 yrow[kPoolChannelRow];
  const auto& x = b.x;
  const index_t cs = index_t(x.stride_1()), sd = index_t(x.stride_2()), sh = index_t(x.stride_3());
  // The window rectangle of the rows and cells: input rows [ih0, ih1), cells [iw0, iw1).
  const index_t ih0 = b.taps.at(1, h0, 0) + b.taps.at(1, h0, 1);
  const index_t ih1 = b.taps.at(1, h1 - 1, 0) + b.taps.at(1, h1 - 1, 2);
  const index_t iw0 = b.taps.at(2, w0, 0) + b.taps.at(2, w0, 1);
  const index_t iw1 = b.taps.at(2, w1 - 1, 0) + b.taps.at(2, w1 - 1, 2);
  const index_t rw = iw1 - iw0;
  const index_t fd = b.taps.at(0, od, 0), kd0 = b.taps.at(0, od, 1), kd1 = b.taps.at(0, od, 2);
  index_t planes[3];
  for (index_t k = 0; k < kd1 - kd0; ++k)
    planes[k] = k * sd;
  // D sums of every cell of the rectangle, from its first present plane.
  const float* plane0 = &x(n, c0, fd + kd0 + b.xs[0], 0, 0) + b.xs[2];
  for (index_t ih = ih0; ih < ih1; ++ih) {
    const float* row = plane0 + (ih + b.xs[1]) * sh;
    for (index_t iw = iw0; iw < iw1; iw += 16)
      loadChannelSums(row + iw, cs, planes, int(kd1 - kd0), false, std::min<index_t>(16, iw1 - iw),
                      dsum + (ih - ih0) * rw + (iw - iw0));
  }
  const __m512 scale = _mm512_set1_ps(b.scale);
  for (index_t oh = h0; oh < h1; ++oh) {
    const index_t fh = b.taps.at(1, oh, 0), kh0 = b.taps.at(1, oh, 1), kh1 = b.taps.at(1, oh, 2);
    // H sums of the rectangle's cells, from the first present row.
    const __m512* first = dsum + (fh + kh0 - ih0) * rw;
    for (index_t i = 0; i < rw; ++i) {
      __m512 v = first[i];
      for (index_t k = 1; k < kh1 - kh0; ++k)
        v = _mm512_add_ps(v, first[k * rw + i]);
      hrow[i] = v;
    }
    for (index_t ow = w0; ow < w1; ++ow) {
      const index_t fw = b.taps.at(2, ow, 0), kw0 = b.taps.at(2, ow, 1), kw1 = b.taps.at(2, ow, 2);
      __m512 acc = _mm512_setzero_ps();
      for (index_t k = kw0; k < kw1; ++k)
        acc = _mm512_add_ps(acc, hrow[fw + k - iw0]);
      yrow[ow - w0] = _mm512_mul_ps(acc, scale);
    }
    storeChannelRows(yrow, w1 - w0, &b.y(n, c0, od + b.ys[0], oh + b.ys[1], w0 + b.ys[2]),
                     index_t(b.y.stride_1()));
  }
}

// Average backward, window 3, stride 2, padding 1 along W and dilation 1, of input rows [h0, h1),
// cells [w0, w1) of plane id, channels [c0, c0 + 16) of sample n; dy_box spans [dyw0, dyw1) along
// W (see the top of the file), for short rows: the dy rows a band of dx rows reads are transposed
// once into cells (several rows per register, when they fit the scratch), each dx row sums them as
// cells, and the band's dx rows go out several per register. Requires w1 - w0 <= kPoolChannelRow.
template <class Body>
void avgBackwardChannelBandK3S2P1(const Body& b, index_t n, index_t c0, index_t id, index_t h0,
                                  index_t h1, index_t w0, index_t w1) {
  alignas(64) static thread_local __m512 dyb[kPoolChannelRect];
  alignas(64) static thread_local __m512 r[kPoolChannelRow / 2 + 2];
  alignas(64) static thread_local __m512 dxbuf[kPoolChannelRect];
  const auto& dy = b.dy;
  const index_t cs = index_t(dy.stride_1()), sh = index_t(dy.stride_3());
  const __m512i lanes = channelOffsets(cs);
  const index_t od0 = b.outputs.at(0, id, 0), od1 = b.outputs.at(0, id, 1);
  const index_t m0 = w0 / 2, m1 = (w1 - 1) / 2 + 2;  // the outputs R the cells need
  const index_t va = std::max(m0, b.dyw0), vb = std::min(m1, b.dyw1), nm = vb - va;
  const index_t wx = w1 - w0;
  const __m512 scale = _mm512_set1_ps(b.scale);
  // Bands of at most kPoolBandCells dx cells: stored while they are in L1 (a band of a whole
  // 32^3 plane, 64 KiB, measured 0.8x).
  const index_t band = std::max<index_t>(1, kPoolBandCells / wx);
  const index_t zero_term = 0;
  float* out = &b.dx(n, c0, id + b.xs[0], 0, w0 + b.xs[2]);
  const index_t xcs = index_t(b.dx.stride_1()), xrs = index_t(b.dx.stride_3());
  for (index_t hb0 = h0; hb0 < h1; hb0 += band) {
    const index_t hb1 = std::min(h1, hb0 + band);
    // The dy rows [oa, ob) of the band's dx rows (their ranges grow with ih), transposed into
    // dyb[((od - od0) (ob - oa) + oh - oa) nm + m - va] where they fit.
    const index_t oa = b.outputs.at(1, hb0, 0), ob = b.outputs.at(1, hb1 - 1, 1);
    const bool any = od1 > od0 && ob > oa && nm > 0;
    const bool packed = any && (od1 - od0) * (ob - oa) * nm <= kPoolChannelRect;
    if (packed)
      for (index_t od = od0; od < od1; ++od) {
        const float* rows = &dy(n, c0, od + b.ys[0], oa + b.ys[1], va + b.ys[2]);
        __m512* to = dyb + (od - od0) * (ob - oa) * nm;
        forEachChannelBlock(ob - oa, nm, [&](index_t j, index_t q, index_t i, index_t m) {
          loadChannelBlock(rows + j * sh + i, cs, sh, q, m, &zero_term, 1, false, to + j * nm + i);
        });
      }
    for (index_t ih = hb0; ih < hb1; ++ih) {
      const index_t oh0 = b.outputs.at(1, ih, 0), oh1 = b.outputs.at(1, ih, 1);
      for (index_t m = m0; m < m1; ++m)
        r[m - m0] = _mm512_setzero_ps();
      if (any && oh1 > oh0) {
        for (index_t od = od0; od < od1; ++od)
          for (index_t oh = oh0; oh < oh1; ++oh) {
            if (packed) {
              const __m512* row = dyb + ((od - od0) * (ob - oa) + oh - oa) * nm - va;
              for (index_t m = va; m < vb; ++m)
                r[m - m0] = _mm512_add_ps(r[m - m0], row[m]);
            } else {
              const float* row = &dy(n, c0, od + b.ys[0], oh + b.ys[1], 0) + b.ys[2];
              for (index_t m = va; m < vb; ++m)
                r[m - m0] = _mm512_add_ps(r[m - m0], gatherLanes(lanes, row + m));
            }
          }
      }
      __m512* dxrow = dxbuf + (ih - hb0) * wx - w0;
      for (index_t iw = w0; iw < w1; ++iw) {
        const __m512 e = r[iw / 2 - m0];
        dxrow[iw] = _mm512_mul_ps(iw & 1 ? _mm512_add_ps(e, r[iw / 2 + 1 - m0]) : e, scale);
      }
    }
    forEachChannelBlock(hb1 - hb0, wx, [&](index_t j, index_t q, index_t i, index_t m) {
      storeChannelBlock(dxbuf + j * wx + i, q, m, out + (hb0 + b.xs[1] + j) * xrs + i, xcs, xrs);
    });
  }
}

// Average backward, window 3, stride 2, padding 1 along W and dilation 1, of input rows [h0, h1),
// cells [w0, w1) of plane id, channels [c0, c0 + 16) of sample n; dy_box spans [dyw0, dyw1) along
// W (see the top of the file), row by row: each dx row's covering dy rows are summed as rows, per
// channel, then transposed into cells. Requires w1 - w0 <= kPoolChannelRow.
template <class Body>
void avgBackwardChannelRowsK3S2P1(const Body& b, index_t n, index_t c0, index_t id, index_t h0,
                                  index_t h1, index_t w0, index_t w1) {
  alignas(64) static thread_local __m512 r[kPoolChannelRow / 2 + 2];
  alignas(64) static thread_local __m512 dxrow[kPoolChannelRow];
  constexpr index_t kMaxRows = 16;
  const auto& dy = b.dy;
  const index_t cs = index_t(dy.stride_1()), sd = index_t(dy.stride_2()),
                sh = index_t(dy.stride_3());
  const __m512i lanes = channelOffsets(cs);
  const index_t od0 = b.outputs.at(0, id, 0), od1 = b.outputs.at(0, id, 1);
  const index_t m0 = w0 / 2, m1 = (w1 - 1) / 2 + 2;  // the outputs R the cells need
  const index_t va = std::max(m0, b.dyw0), vb = std::min(m1, b.dyw1);
  const __m512 scale = _mm512_set1_ps(b.scale);
  for (index_t ih = h0; ih < h1; ++ih) {
    const index_t oh0 = b.outputs.at(1, ih, 0), oh1 = b.outputs.at(1, ih, 1);
    for (index_t m = m0; m < m1; ++m)
      r[m - m0] = _mm512_setzero_ps();
    const index_t nrows = (od1 - od0) * (oh1 - oh0);
    if (od1 > od0 && oh1 > oh0 && vb > va && nrows <= kMaxRows) {
      index_t rows[kMaxRows];
      int k = 0;
      for (index_t od = od0; od < od1; ++od)
        for (index_t oh = oh0; oh < oh1; ++oh)
          rows[k++] = (od - od0) * sd + (oh - oh0) * sh;
      const float* first = &dy(n, c0, od0 + b.ys[0], oh0 + b.ys[1], 0) + b.ys[2];
      for (index_t m = va; m < vb; m += 16)
        loadChannelSums(first + m, cs, rows, k, true, std::min<index_t>(16, vb - m), r + (m - m0));
    } else if (od1 > od0 && oh1 > oh0) {
      for (index_t od = od0; od < od1; ++od)
        for (index_t oh = oh0; oh < oh1; ++oh) {
          const float* row = &dy(n, c0, od + b.ys[0], oh + b.ys[1], 0) + b.ys[2];
          for (index_t m = va; m < vb; ++m)
            r[m - m0] = _mm512_add_ps(r[m - m0], gatherLanes(lanes, row + m));
        }
    }
    for (index_t iw = w0; iw < w1; ++iw) {
      const __m512 e = r[iw / 2 - m0];
      dxrow[iw - w0] = _mm512_mul_ps(iw & 1 ? _mm512_add_ps(e, r[iw / 2 + 1 - m0]) : e, scale);
    }
    storeChannelRows(dxrow, w1 - w0, &b.dx(n, c0, id + b.xs[0], ih + b.xs[1], w0 + b.xs[2]),
                     index_t(b.dx.stride_1()));
  }
}

// Average backward, window 3, stride 2, padding 1 along W and dilation 1, of input rows [h0, h1),
// cells [w0, w1) of plane id, channels [c0, c0 + 16) of sample n, channel by channel in each row:
// the AVX-512 row of the planes (avgBackwardRowK3S2P1) on each channel's rows, with the row's
// look-ups and row pointers worked out once for the 16 channels. The same code as the planes, so
// the same bits.
template <class Body>
void avgBackwardChannelLoopK3S2P1(const Body& b, index_t n, index_t c0, index_t id, index_t h0,
                                  index_t h1, index_t w0, index_t w1) {
  constexpr index_t kMaxRows = 16;
  const index_t cs = index_t(b.dy.stride_1()), xcs = index_t(b.dx.stride_1());
  const index_t od0 = b.outputs.at(0, id, 0), od1 = b.outputs.at(0, id, 1);
  const index_t dyw0 = b.dyw0, dyw1 = b.dyw1;
  const float sc = b.scale;
  for (index_t ih = h0; ih < h1; ++ih) {
    const index_t oh0 = b.outputs.at(1, ih, 0), oh1 = b.outputs.at(1, ih, 1);
    float* dx0 = &b.dx(n, c0, id + b.xs[0], ih + b.xs[1], 0) + b.xs[2];
    if (od1 <= od0 || oh1 <= oh0) {
      for (index_t l = 0; l < kPoolLanes; ++l)
        for (index_t iw = w0; iw < w1; ++iw)
          dx0[l * xcs + iw] = 0.0f;
      continue;
    }
    const index_t nrows = (od1 - od0) * (oh1 - oh0);
    if (nrows > kMaxRows) {
      avgBackwardChannelRowsK3S2P1(b, n, c0, id, ih, ih + 1, w0, w1);
      continue;
    }
    const float* rows0[kMaxRows];
    int k = 0;
    for (index_t od = od0; od < od1; ++od)
      for (index_t oh = oh0; oh < oh1; ++oh)
        rows0[k++] = &b.dy(n, c0, od + b.ys[0], oh + b.ys[1], 0) + b.ys[2];
    for (index_t l = 0; l < kPoolLanes; ++l) {
      const float* rows[kMaxRows];
      for (int q = 0; q < k; ++q)
        rows[q] = rows0[q] + l * cs;
      // The odd first cell and the row as avgBackwardPlaneK3S2P1 does them. A shared function for
      // both measured 5-9% slower on this path and the planes' (docs/PERFORMANCE.md).
      float* dxrow = dx0 + l * xcs;
      index_t iw = w0;
      if (iw & 1) {  // an odd first cell: outputs iw / 2 and iw / 2 + 1
        float r0 = 0.0f, r1 = 0.0f;
        const index_t o = iw / 2;
        for (int q = 0; q < k; ++q) {
          if (o >= dyw0 && o < dyw1) r0 += rows[q][o];
          if (o + 1 >= dyw0 && o + 1 < dyw1) r1 += rows[q][o + 1];
        }
        dxrow[iw] = (r0 + r1) * sc;
        ++iw;
      }
      if (iw < w1)
        avgBackwardRowK3S2P1(rows, k, iw / 2, dyw0, dyw1, w1 - iw, sc, dxrow + iw, false);
    }
  }
}

// The backward of the three forms above that measured fastest for rows of w1 - w0 cells (any
// length): the bands for rows of at most 8 cells (4^3 and 8^3 volumes: 1.2-1.7x the row form), the
// transposed rows up to 16 cells (16^3: the channel loop measured 0.9x of them), the channel loop
// above (32^3: 1.35-1.4x the transposed rows; 64^3 and 128^3: 1.0-1.6x the planes).
template <class Body>
void avgBackwardChannelsK3S2P1(const Body& b, index_t n, index_t c0, index_t id, index_t h0,
                               index_t h1, index_t w0, index_t w1) {
  if (w1 - w0 <= 8)
    avgBackwardChannelBandK3S2P1(b, n, c0, id, h0, h1, w0, w1);
  else if (w1 - w0 <= 16)
    avgBackwardChannelRowsK3S2P1(b, n, c0, id, h0, h1, w0, w1);
  else
    avgBackwardChannelLoopK3S2P1(b, n, c0, id, h0, h1, w0, w1);
}

#endif

}  // namespace halo3d::kernels::impl
