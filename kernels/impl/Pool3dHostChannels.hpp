#pragma once
// Host average pooling of small planes with 16 channels per AVX-512 register (float). On the
// volumes of CosmoFlow's last pools (4^3 to 16^3) a row has 2 to 16 cells, so the row and plane
// code of Pool3dHostPlanes.hpp spends most of its time setting up rows of a few values
// (docs/PERFORMANCE.md, issue 12 item 3). Here one work item is a (sample, 16 channels, d) plane,
// each register holds one cell of 16 channels (the lanes gathered at the channel stride), and the
// plane's window sums are plain vector adds over cells, whatever the row length.
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

// Transposes 16 registers of 16 floats in place: afterwards r[j] lane l holds what r[l] lane j held.
// The zero-masked forms (all lanes set): GCC 12's plain forms start from an undefined register.
inline void transpose16(__m512* r) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_maskz_unpacklo_ps(0xffff, r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_maskz_unpackhi_ps(0xffff, r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    r[4 * i + 0] = _mm512_maskz_shuffle_ps(0xffff, t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 1] = _mm512_maskz_shuffle_ps(0xffff, t[4 * i + 0], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[4 * i + 2] = _mm512_maskz_shuffle_ps(0xffff, t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[4 * i + 3] = _mm512_maskz_shuffle_ps(0xffff, t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
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
// W (see the top of the file). Requires w1 - w0 <= kPoolChannelRow.
template <class Body>
void avgBackwardChannelsK3S2P1(const Body& b, index_t n, index_t c0, index_t id, index_t h0,
                               index_t h1, index_t w0, index_t w1) {
  alignas(64) static thread_local __m512 r[kPoolChannelRow / 2 + 2];
  alignas(64) static thread_local __m512 dxrow[kPoolChannelRow];
  constexpr index_t kMaxRows = 16;
  const auto& dy = b.dy;
  const index_t cs = index_t(dy.stride_1()), sd = index_t(dy.stride_2()), sh = index_t(dy.stride_3());
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
      dxrow[iw - w0] =
          _mm512_mul_ps(iw & 1 ? _mm512_add_ps(e, r[iw / 2 + 1 - m0]) : e, scale);
    }
    storeChannelRows(dxrow, w1 - w0, &b.dx(n, c0, id + b.xs[0], ih + b.xs[1], w0 + b.xs[2]),
                     index_t(b.dx.stride_1()));
  }
}

#endif

}  // namespace halo3d::kernels::impl
