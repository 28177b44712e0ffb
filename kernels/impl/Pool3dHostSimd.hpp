#pragma once
// AVX-512 rows of max pooling backward with window 2 and stride 2 along W (the U-Net's pools),
// float only: every input cell lies in exactly one window along W (stride = window, no padding), so
// dx is written densely in one pass, 16 cells per register: dx(i) = [argmax(i / 2) == i]
// dy(i / 2) + 0, the +0 giving the per-cell sum's bits (which starts at +0) for a dy of -0.
//
// (An AVX-512 forward row for this window, with vpermt2ps splitting each window row into its even
// and odd taps, measured no faster than the compiler-vectorised maxPoolRowInterior on 16^3-64^3
// volumes, so the forward keeps that.)
//
// HALO3D_POOL3D_AVX512 says whether the rows exist: only where the compiler targets AVX-512 (F and
// VL), never in device compilation; elsewhere the dense rows run their scalar loop.

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
