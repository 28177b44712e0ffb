#pragma once
// AVX-512 rows of max pooling with window 2 and stride 2 along W (the U-Net's pools), float only:
// 16 output cells per register.
//
// Forward: each window row is loaded as 2 registers (32 input cells) and split into its even
// (tap 0) and odd (tap 1) cells with vpermt2ps, then compared in window order with PyTorch's rule
// (a strictly greater value or a NaN takes over, so the first maximum wins) and the winner's
// index selected under the same mask: the cell-by-cell comparison, so the same values and argmax.
// The comparisons are quiet (no FE_INVALID on a quiet NaN), like the scalar `v > a || v != v`
// under the default environment.
//
// Backward: every input cell lies in exactly one window along W (stride = window, no padding), so
// dx is written densely in one pass: dx(i) = [argmax(i / 2) == i] dy(i / 2) + 0, the +0 giving
// the per-cell sum's bits (which starts at +0) for a dy of -0.
//
// kPoolSimd says whether the rows exist: only where the compiler targets AVX-512 (F and VL), never
// in device compilation.

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

inline constexpr bool kPoolSimd = HALO3D_POOL3D_AVX512;

#if HALO3D_POOL3D_AVX512

// Max pooling forward over `cells` output cells whose W taps all lie in the volume: cell j pools
// positions first + 2 j and first + 2 j + 1 of each window row r < nrows, in window order; rows
// and bases as in maxPoolRowInterior (Pool3dHostRows.hpp).
inline void maxPoolRowK2S2(const float* const* rows, const std::int32_t* bases, int nrows,
                           index_t first, index_t cells, float* y, index_t* argmax) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  for (index_t j = 0; j < cells; j += 16) {
    const index_t m = cells - j < 16 ? cells - j : 16;
    const __mmask16 out_mask = __mmask16((1u << m) - 1u);
    const index_t in = 2 * m;  // input cells of this step
    const __mmask16 lo = __mmask16(in >= 16 ? 0xffffu : (1u << in) - 1u);
    const __mmask16 hi = __mmask16(in > 16 ? (1u << (in - 16)) - 1u : 0u);
    const index_t f = first + 2 * j;
    __m512 best = _mm512_setzero_ps();
    __m512i where = _mm512_setzero_si512();
    for (int r = 0; r < nrows; ++r) {
      const float* p = rows[r] + f;
      const __m512 a = _mm512_maskz_loadu_ps(lo, p), b = _mm512_maskz_loadu_ps(hi, p + 16);
      const __m512 v0 = _mm512_permutex2var_ps(a, even, b);
      const __m512 v1 = _mm512_permutex2var_ps(a, odd, b);
      const __m512i i0 = _mm512_add_epi32(_mm512_set1_epi32(bases[r] + std::int32_t(f)), even);
      if (r == 0) {
        best = v0;
        where = i0;
      } else {
        const __mmask16 take =
            _mm512_cmp_ps_mask(v0, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v0, v0, _CMP_UNORD_Q);
        best = _mm512_mask_mov_ps(best, take, v0);
        where = _mm512_mask_mov_epi32(where, take, i0);
      }
      const __mmask16 take =
          _mm512_cmp_ps_mask(v1, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v1, v1, _CMP_UNORD_Q);
      best = _mm512_mask_mov_ps(best, take, v1);
      where = _mm512_mask_mov_epi32(where, take, _mm512_add_epi32(i0, _mm512_set1_epi32(1)));
    }
    _mm512_mask_storeu_ps(y + j, out_mask, best);
    _mm512_mask_storeu_epi64(
        argmax + j, __mmask8(out_mask & 0xff),
        _mm512_maskz_cvtepi32_epi64(0xff, _mm512_maskz_extracti64x4_epi64(0xff, where, 0)));
    _mm512_mask_storeu_epi64(
        argmax + j + 8, __mmask8(out_mask >> 8),
        _mm512_maskz_cvtepi32_epi64(0xff, _mm512_maskz_extracti64x4_epi64(0xff, where, 1)));
  }
}

// Max pooling backward over the input cells [0, count) of a row whose outputs are o0 + i / 2:
// dx[i] = (argmax[i / 2] == base + i ? dy[i / 2] : 0) + 0, where dy and argmax point at output
// o0 and base is the global linear index of cell 0 (the volume's indices fit 32 bits). count even.
inline void maxPoolBackwardRowK2S2(const float* dy, const index_t* argmax, index_t base,
                                   index_t count, float* dx) {
  const __m512i dup = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  const __m512i cell = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512 zero = _mm512_setzero_ps();
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
    const __mmask16 hit = _mm512_cmpeq_epi32_mask(offset, cell);
    _mm512_mask_storeu_ps(dx + i, cells, _mm512_add_ps(_mm512_maskz_mov_ps(hit, g), zero));
  }
}

#endif

}  // namespace halo3d::kernels::impl
