#pragma once
// AVX-512 vocabulary of the host conv3d path: one zmm register of floats (16 lanes) or doubles (8
// lanes) along the contiguous W axis, with masked and strided (gather) loads for W tails and W
// strides. Masked-off lanes are never touched, so a tail vector may start or end past its row, or
// past the allocation.
//
// kHostSimd<T> says whether the path exists for T in this translation unit: only where the compiler
// targets AVX-512 (-march=native on the machines we run), never in device compilation.

#include <cstdint>
#include <type_traits>

#include "halo3d/core/Types.hpp"

#if defined(__AVX512F__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define HALO3D_CONV3D_AVX512 1
#include <immintrin.h>
#else
#define HALO3D_CONV3D_AVX512 0
#endif

namespace halo3d::kernels::impl {

template <class T>
inline constexpr bool kHostSimd = HALO3D_CONV3D_AVX512 &&
                                  (std::is_same<T, float>::value || std::is_same<T, double>::value);

#if HALO3D_CONV3D_AVX512

template <class T>
struct Simd;

template <>
struct Simd<float> {
  using vec = __m512;
  using mask = __mmask16;
  using index = __m512i;
  static constexpr int lanes = 16;

  static vec zero() { return _mm512_setzero_ps(); }
  static vec broadcast(float v) { return _mm512_set1_ps(v); }
  static vec load(const float* p) { return _mm512_loadu_ps(p); }
  static vec load(const float* p, mask m) { return _mm512_maskz_loadu_ps(m, p); }
  // Lanes p[0], p[stride], p[2 stride], ... where `m` is set.
  static vec gather(const float* p, index stride_index, mask m) {
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, stride_index, p, 4);
  }
  static vec fma(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
  static vec add(vec a, vec b) { return _mm512_add_ps(a, b); }
  static void store(float* p, vec v) { _mm512_storeu_ps(p, v); }
  static void store(float* p, vec v, mask m) { _mm512_mask_storeu_ps(p, m, v); }
  static void stream(float* p, vec v) { _mm512_stream_ps(p, v); }
  // Lane sum by swapping halves, quarters, pairs and neighbours. The zero-masked forms (all lanes
  // set, here and in sum8) because GCC 12's plain forms and _mm512_reduce_add_* start from
  // _mm512_undefined_*, which trips -Wmaybe-uninitialized in its own header.
  static float sum(vec v) {
    v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(0xffff, v, v, 0x4e));
    v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(0xffff, v, v, 0xb1));
    v = _mm512_add_ps(v, _mm512_maskz_permute_ps(0xffff, v, 0x4e));
    v = _mm512_add_ps(v, _mm512_maskz_permute_ps(0xffff, v, 0xb1));
    return _mm512_cvtss_f32(v);
  }
  // out[k] = sum(v[k]) for 8 vectors, each sum in sum()'s order (so bitwise equal to it), with the
  // shuffles of each step shared between vectors: 23 operations instead of 64.
  static void sum8(const vec (&v)[8], float* out) {
    vec c[4], d[2];
    // Per vector, halves then quarters, two and then four vectors per register.
    for (int i = 0; i < 4; ++i)
      c[i] = _mm512_add_ps(_mm512_maskz_shuffle_f32x4(0xffff, v[2 * i], v[2 * i + 1], 0x44),
                           _mm512_maskz_shuffle_f32x4(0xffff, v[2 * i], v[2 * i + 1], 0xee));
    for (int i = 0; i < 2; ++i)
      d[i] = _mm512_add_ps(_mm512_maskz_shuffle_f32x4(0xffff, c[2 * i], c[2 * i + 1], 0x88),
                           _mm512_maskz_shuffle_f32x4(0xffff, c[2 * i], c[2 * i + 1], 0xdd));
    // 128-bit block k now holds vector k's four partial sums in d[0], vector 4 + k's in d[1]:
    // pairs, then neighbours; lane 4k ends with sum(v[k]), lane 4k + 2 with sum(v[4 + k]).
    vec f = _mm512_add_ps(_mm512_maskz_shuffle_ps(0xffff, d[0], d[1], 0x44),
                          _mm512_maskz_shuffle_ps(0xffff, d[0], d[1], 0xee));
    f = _mm512_add_ps(f, _mm512_maskz_permute_ps(0xffff, f, 0xb1));
    const __m512i pick = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 14, 10, 6, 2, 12, 8, 4, 0);
    _mm512_mask_storeu_ps(out, 0xff, _mm512_maskz_permutexvar_ps(0xffff, pick, f));
  }
  static index strideIndex(int stride) {
    return _mm512_mullo_epi32(
        _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
        _mm512_set1_epi32(stride));
  }
};

template <>
struct Simd<double> {
  using vec = __m512d;
  using mask = __mmask8;
  using index = __m256i;
  static constexpr int lanes = 8;

  static vec zero() { return _mm512_setzero_pd(); }
  static vec broadcast(double v) { return _mm512_set1_pd(v); }
  static vec load(const double* p) { return _mm512_loadu_pd(p); }
  static vec load(const double* p, mask m) { return _mm512_maskz_loadu_pd(m, p); }
  static vec gather(const double* p, index stride_index, mask m) {
    return _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, stride_index, p, 8);
  }
  static vec fma(vec a, vec b, vec c) { return _mm512_fmadd_pd(a, b, c); }
  static vec add(vec a, vec b) { return _mm512_add_pd(a, b); }
  static void store(double* p, vec v) { _mm512_storeu_pd(p, v); }
  static void store(double* p, vec v, mask m) { _mm512_mask_storeu_pd(p, m, v); }
  static void stream(double* p, vec v) { _mm512_stream_pd(p, v); }
  static double sum(vec v) {
    v = _mm512_add_pd(v, _mm512_maskz_shuffle_f64x2(0xff, v, v, 0x4e));
    v = _mm512_add_pd(v, _mm512_maskz_shuffle_f64x2(0xff, v, v, 0xb1));
    v = _mm512_add_pd(v, _mm512_maskz_permute_pd(0xff, v, 0x55));
    return _mm512_cvtsd_f64(v);
  }
  static index strideIndex(int stride) {
    return _mm256_mullo_epi32(_mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), _mm256_set1_epi32(stride));
  }
};

// The mask of lanes [lo, hi) (clipped to the vector).
template <class T>
typename Simd<T>::mask laneRange(index_t lo, index_t hi) {
  constexpr int n = Simd<T>::lanes;
  lo = lo < 0 ? 0 : lo;
  hi = hi > n ? n : hi;
  if (hi <= lo) return 0;
  const std::uint32_t below_hi = hi >= 32 ? ~0u : (1u << hi) - 1u;
  const std::uint32_t below_lo = (1u << lo) - 1u;
  return typename Simd<T>::mask(below_hi & ~below_lo);
}

template <class T>
constexpr typename Simd<T>::mask fullMask() {
  return typename Simd<T>::mask((1u << Simd<T>::lanes) - 1u);
}

// How a tile reads its input vectors: contiguous full vectors, contiguous under a lane mask, or
// gathered with the W stride under a lane mask.
enum class SimdLoad { Full, Masked, Gather };

template <SimdLoad L, class T>
typename Simd<T>::vec loadInput(const T* p, typename Simd<T>::mask m,
                                typename Simd<T>::index stride_index) {
  if constexpr (L == SimdLoad::Full) {
    return Simd<T>::load(p);
  } else if constexpr (L == SimdLoad::Masked) {
    return Simd<T>::load(p, m);
  } else {
    return Simd<T>::gather(p, stride_index, m);
  }
}

#endif

}  // namespace halo3d::kernels::impl
