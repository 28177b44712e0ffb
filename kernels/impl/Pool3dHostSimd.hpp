#pragma once
// AVX-512 rows of max pooling backward with window 2 and stride 2 along W (the U-Net's pools),
// float only: every input cell lies in exactly one window along W (stride = window, no padding), so
// dx is written densely in one pass, 16 cells per register: dx(i) = [argmax(i / 2) == i]
// dy(i / 2) + 0, the +0 giving the per-cell sum's bits (which starts at +0) for a dy of -0.
//
// The forward row of the same window (2x2x2, stride 2, no padding) keeps the winner as its offset
// inside the window's box while comparing and widens it to the int64 argmax only at the store; the
// planes of PoolForwardBody::maxPlaneK2S2 call it once per output row, without the per-row set-up
// of maxPoolRowInterior.
//
// HALO3D_POOL3D_AVX512 says whether the rows exist: only where the compiler targets AVX-512 (F and
// VL), never in device compilation; elsewhere the dense rows run their scalar loop.

#include <algorithm>
#include <cstdint>

#include "halo3d/core/Types.hpp"

#if defined(__AVX512F__) && defined(__AVX512VL__) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__)
#define HALO3D_POOL3D_AVX512 1
#include <immintrin.h>
#else
#define HALO3D_POOL3D_AVX512 0
#endif

namespace halo3d::kernels::impl {

#if HALO3D_POOL3D_AVX512

// Max pooling backward over the input cells [0, count) of Rows (1 or 2) rows whose outputs are
// o0 + i / 2: dx[i] = (argmax[i / 2] == base + i ? dy[i / 2] : 0) + 0, where dy and argmax point at
// output o0 and base is the global linear index of cell 0 of the first row (the volume's indices
// fit 32 bits); count even. With two rows, the second (dx_b) is the next input row along H of the
// same outputs, W cells further in the global index: each 8 outputs' dy and argmax are loaded,
// offset and widened once for both rows, with the same compare and +0 as one row at a time, so the
// same bits. With Stream, whole 64-byte aligned steps of dx are stored around the caches (the
// caller fences); a template argument, since a run-time test in the loop cost the cached rows of
// 16^3-32^3 volumes 14%.
template <int Rows, bool Stream>
__attribute__((always_inline)) inline void maxPoolBackwardRowsK2S2(const float* dy,
                                                                   const index_t* argmax,
                                                                   index_t base, index_t W,
                                                                   index_t count, float* dx_a,
                                                                   float* dx_b) {
  static_assert(Rows == 1 || Rows == 2, "one row or a pair");
  const __m512i dup = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  const __m512i cell = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i cell_b = _mm512_add_epi32(cell, _mm512_set1_epi32(std::int32_t(W)));
  const __m512 zero = _mm512_setzero_ps();
  const auto store = [](float* out, index_t m, __mmask16 cells, __m512 v) {
    if (Stream && m == 16 && reinterpret_cast<std::uintptr_t>(out) % 64 == 0)
      _mm512_stream_ps(out, v);
    else
      _mm512_mask_storeu_ps(out, cells, v);
  };
  for (index_t i = 0; i < count; i += 16) {
    const index_t m = count - i < 16 ? count - i : 16;
    const __mmask16 cells = __mmask16((1u << m) - 1u);
    const __mmask8 outs = __mmask8((1u << (m / 2)) - 1u);
    const index_t o = i / 2;
    // The winner's offset from this step's first cell, in 32 bits (exact: both indices fit).
    const __m512i won =
        _mm512_sub_epi64(_mm512_maskz_loadu_epi64(outs, argmax + o), _mm512_set1_epi64(base + i));
    // The zero-masked forms (all lanes set): GCC 12's plain forms start from _mm*_undefined_*,
    // which trips -Wmaybe-uninitialized in its own header.
    const __m512i offset = _mm512_maskz_permutexvar_epi32(
        0xffff, dup, _mm512_castsi256_si512(_mm512_maskz_cvtepi64_epi32(0xff, won)));
    const __m512 g = _mm512_maskz_permutexvar_ps(
        0xffff, dup, _mm512_castps256_ps512(_mm256_maskz_loadu_ps(outs, dy + o)));
    const __mmask16 hit_a = _mm512_cmpeq_epi32_mask(offset, cell);
    store(dx_a + i, m, cells, _mm512_add_ps(_mm512_maskz_mov_ps(hit_a, g), zero));
    if constexpr (Rows == 2) {
      const __mmask16 hit_b = _mm512_cmpeq_epi32_mask(offset, cell_b);
      store(dx_b + i, m, cells, _mm512_add_ps(_mm512_maskz_mov_ps(hit_b, g), zero));
    }
  }
}

// One row (see above).
inline void maxPoolBackwardRowK2S2(const float* dy, const index_t* argmax, index_t base,
                                   index_t count, float* dx) {
  maxPoolBackwardRowsK2S2<1, false>(dy, argmax, base, 0, count, dx, nullptr);
}

// Max pooling forward, window 2 along D, H and W, stride 2 along W, over `cells` output cells whose
// taps all lie in the volume: rows[0..3] are the window's input rows in window order ((kd, kh) =
// (0, 0), (0, 1), (1, 0), (1, 1)), each pointing at the first cell's tap kw = 0; off[r] is row r's
// linear offset from row 0 and base the global linear index of rows[0][0] (32 bits suffice). The
// 8 taps are compared in window order under PyTorch's rule (a strictly greater value or a NaN takes
// over), as maxPoolRowInterior does, so every cell and its argmax keep their bits.
inline void maxPoolForwardRowK2S2(const float* const* rows, const std::int32_t* off,
                                  std::int32_t base, index_t cells, float* y, index_t* argmax) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512i lane2 =
      _mm512_slli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 1);
  for (index_t i = 0; i < cells; i += 16) {
    const index_t m = cells - i < 16 ? cells - i : 16;
    const __mmask16 outs = __mmask16((1u << m) - 1u);
    // The window rows' 2m inputs of these cells, in two registers of 16.
    const __mmask16 lo = __mmask16(2 * m >= 16 ? 0xffffu : (1u << (2 * m)) - 1u);
    const __mmask16 hi = __mmask16(2 * m >= 32  ? 0xffffu
                                   : 2 * m > 16 ? (1u << (2 * m - 16)) - 1u
                                                : 0u);
    __m512 acc = _mm512_setzero_ps();
    __m512i won = _mm512_setzero_si512();
    for (int r = 0; r < 4; ++r) {
      const float* p = rows[r] + 2 * i;
      const __m512 a = _mm512_maskz_loadu_ps(lo, p), b = _mm512_maskz_loadu_ps(hi, p + 16);
      const __m512 v0 = _mm512_permutex2var_ps(a, even, b), v1 = _mm512_permutex2var_ps(a, odd, b);
      if (r == 0) {
        acc = v0;
      } else {
        const __mmask16 take =
            _mm512_cmp_ps_mask(v0, acc, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v0, v0, _CMP_UNORD_Q);
        acc = _mm512_mask_mov_ps(acc, take, v0);
        won = _mm512_mask_mov_epi32(won, take, _mm512_set1_epi32(off[r]));
      }
      const __mmask16 take =
          _mm512_cmp_ps_mask(v1, acc, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v1, v1, _CMP_UNORD_Q);
      acc = _mm512_mask_mov_ps(acc, take, v1);
      won = _mm512_mask_mov_epi32(won, take, _mm512_set1_epi32(off[r] + 1));
    }
    _mm512_mask_storeu_ps(y + i, outs, acc);
    const __m512i index = _mm512_add_epi32(_mm512_add_epi32(won, lane2),
                                           _mm512_set1_epi32(base + 2 * std::int32_t(i)));
    _mm512_mask_storeu_epi64(
        argmax + i, __mmask8(outs),
        _mm512_maskz_cvtepi32_epi64(0xff, _mm512_maskz_extracti64x4_epi64(0xf, index, 0)));
    _mm512_mask_storeu_epi64(
        argmax + i + 8, __mmask8(outs >> 8),
        _mm512_maskz_cvtepi32_epi64(0xff, _mm512_maskz_extracti64x4_epi64(0xf, index, 1)));
  }
}

// maxPoolForwardRowK2S2 for two output rows of at most 8 cells each in one register (16^3 inputs
// have rows of 8 outputs, half a register): a[r] and b[r] are the two rows' window rows, base_a
// and base_b the global linear indices of a[0][0] and b[0][0]; lanes 0-7 hold row a's cells,
// lanes 8-15 row b's, with the same comparisons in the same order, so every cell and its argmax
// keep their bits.
inline void maxPoolForwardRowPairK2S2(const float* const* a, const float* const* b,
                                      const std::int32_t* off, std::int32_t base_a,
                                      std::int32_t base_b, index_t cells, float* y_a, float* y_b,
                                      index_t* argmax_a, index_t* argmax_b) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __mmask16 in = __mmask16((1u << (2 * cells)) - 1u);
  const __mmask8 outs = __mmask8((1u << cells) - 1u);
  __m512 acc = _mm512_setzero_ps();
  __m512i won = _mm512_setzero_si512();
  for (int r = 0; r < 4; ++r) {
    const __m512 va = _mm512_maskz_loadu_ps(in, a[r]), vb = _mm512_maskz_loadu_ps(in, b[r]);
    const __m512 v0 = _mm512_permutex2var_ps(va, even, vb),
                 v1 = _mm512_permutex2var_ps(va, odd, vb);
    if (r == 0) {
      acc = v0;
    } else {
      const __mmask16 take =
          _mm512_cmp_ps_mask(v0, acc, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v0, v0, _CMP_UNORD_Q);
      acc = _mm512_mask_mov_ps(acc, take, v0);
      won = _mm512_mask_mov_epi32(won, take, _mm512_set1_epi32(off[r]));
    }
    const __mmask16 take =
        _mm512_cmp_ps_mask(v1, acc, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v1, v1, _CMP_UNORD_Q);
    acc = _mm512_mask_mov_ps(acc, take, v1);
    won = _mm512_mask_mov_epi32(won, take, _mm512_set1_epi32(off[r] + 1));
  }
  // Tap 0 of lane l: base_a + 2 l (l < 8), base_b + 2 (l - 8).
  const __m512i first = _mm512_add_epi32(
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14),
      _mm512_mask_blend_epi32(0xff00, _mm512_set1_epi32(base_a), _mm512_set1_epi32(base_b)));
  const __m512i index = _mm512_add_epi32(won, first);
  _mm256_mask_storeu_ps(
      y_a, outs,
      _mm256_castsi256_ps(_mm512_maskz_extracti64x4_epi64(0xf, _mm512_castps_si512(acc), 0)));
  _mm256_mask_storeu_ps(
      y_b, outs,
      _mm256_castsi256_ps(_mm512_maskz_extracti64x4_epi64(0xf, _mm512_castps_si512(acc), 1)));
  _mm512_mask_storeu_epi64(
      argmax_a, outs,
      _mm512_maskz_cvtepi32_epi64(0xff, _mm512_maskz_extracti64x4_epi64(0xf, index, 0)));
  _mm512_mask_storeu_epi64(
      argmax_b, outs,
      _mm512_maskz_cvtepi32_epi64(0xff, _mm512_maskz_extracti64x4_epi64(0xf, index, 1)));
}

// The lanes of a 16-cell step starting at o whose cell lies in [lo, hi).
inline __mmask16 laneRange(index_t o, index_t lo, index_t hi) {
  const index_t a = std::clamp<index_t>(lo - o, 0, 16), b = std::clamp<index_t>(hi - o, 0, 16);
  return b > a ? __mmask16(((1u << b) - 1u) & ~((1u << a) - 1u)) : __mmask16(0);
}

// Average pooling backward with window 3, stride 2 and padding 1 along W over `cells` input cells
// of a row starting at the even cell 2 m0: dx(2 m) = R(m) sc, dx(2 m + 1) = (R(m) + R(m + 1)) sc,
// where R(o) = ((+0 + rows[0][o]) + rows[1][o]) + ... over the `nrows` covering dy rows (indexed by
// global output o) for o in [va, vb), and 0 elsewhere: the terms and order of
// avgBackwardPlaneK3S2P1's scalar loop, so every cell keeps its bits. 16 outputs (32 cells) per
// step, R(m + 1) taken from the next step's sums (valignd) and the even and odd cells interleaved
// with vpermt2ps. `stream`: full, 64-byte aligned steps store around the caches (for dx far larger
// than the caches: it saves the read of every dx line before it is written); the caller fences.
inline void avgBackwardRowK3S2P1(const float* const* rows, int nrows, index_t m0, index_t va,
                                 index_t vb, index_t cells, float sc, float* dx, bool stream) {
  const __m512i even = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(8));
  const __m512 scale = _mm512_set1_ps(sc);
  const auto sums = [&](index_t o) {
    const __mmask16 in = laneRange(o, va, vb);
    __m512 r = _mm512_setzero_ps();
    if (in)
      for (int k = 0; k < nrows; ++k)
        r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(in, rows[k] + o));
    return r;
  };
  __m512 cur = sums(m0);
  for (index_t i = 0; i < cells; i += 32) {
    const index_t m = m0 + i / 2;
    const __m512 next = sums(m + 16);
    // The zero-masked form (all lanes set), as above.
    const __m512 shifted = _mm512_castsi512_ps(
        _mm512_maskz_alignr_epi32(0xffff, _mm512_castps_si512(next), _mm512_castps_si512(cur), 1));
    const __m512 e = _mm512_mul_ps(cur, scale);
    const __m512 o = _mm512_mul_ps(_mm512_add_ps(cur, shifted), scale);
    const __m512 lo = _mm512_permutex2var_ps(e, even, o), hi = _mm512_permutex2var_ps(e, odd, o);
    const index_t left = cells - i;
    if (left >= 32 && stream && (reinterpret_cast<std::uintptr_t>(dx + i) & 63) == 0) {
      _mm512_stream_ps(dx + i, lo);
      _mm512_stream_ps(dx + i + 16, hi);
    } else if (left >= 32) {
      _mm512_storeu_ps(dx + i, lo);
      _mm512_storeu_ps(dx + i + 16, hi);
    } else {
      _mm512_mask_storeu_ps(dx + i, laneRange(0, 0, left), lo);
      _mm512_mask_storeu_ps(dx + i + 16, laneRange(16, 0, left), hi);
    }
    cur = next;
  }
}

#endif

}  // namespace halo3d::kernels::impl
