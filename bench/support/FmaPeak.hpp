#pragma once
// The compute anchor of the convolution benchmarks: the fp32 FMA peak that this machine reaches,
// measured in the same process as the figures it anchors (the machines are shared, and their clock
// drifts between runs). Each of the default host execution space's threads runs independent chains
// of fused multiply-adds that live in registers: 24 chains of 512-bit vectors where AVX-512 is
// compiled in (more than an FMA's latency times its two pipes, so the pipes never wait), 256-bit
// vectors with AVX2 and FMA, scalar std::fma otherwise. No memory is touched inside the loop, so
// this is the ceiling of any kernel's flop rate, convolutions included.
#include <Kokkos_Core.hpp>

#include <cmath>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#include "halo3d/core/KokkosCompat.hpp"
#include "support/ManualTime.hpp"

namespace halo3d::bench {

namespace fma_peak_detail {

constexpr int kChains = 24;

// The widest vector this build has, with the three intrinsics the chains need.
struct Vec {
#if defined(__AVX512F__)
  using V = __m512;
  static constexpr int kLanes = 16;
  static V set1(float v) {
    return _mm512_set1_ps(v);
  }
  static V fma(V a, V b, V c) {
    return _mm512_fmadd_ps(a, b, c);
  }
  static void store(float* p, V v) {
    _mm512_store_ps(p, v);
  }
#elif defined(__AVX2__) && defined(__FMA__)
  using V = __m256;
  static constexpr int kLanes = 8;
  static V set1(float v) {
    return _mm256_set1_ps(v);
  }
  static V fma(V a, V b, V c) {
    return _mm256_fmadd_ps(a, b, c);
  }
  static void store(float* p, V v) {
    _mm256_store_ps(p, v);
  }
#else
  using V = float;
  static constexpr int kLanes = 1;
  static V set1(float v) {
    return v;
  }
  static V fma(V a, V b, V c) {
    return std::fma(a, b, c);
  }
  static void store(float* p, V v) {
    *p = v;
  }
#endif
};

// Runs `iterations` steps of kChains chains of Vec from `seed`; returns a value depending on all of
// them, so that nothing is optimised away. Flops: 2 * kChains * Vec::kLanes * iterations.
inline float run(long iterations, float seed) {
  Vec::V acc[kChains];
  for (int k = 0; k < kChains; ++k)
    acc[k] = Vec::set1(seed + float(k));
  const Vec::V m = Vec::set1(0.999999f), c = Vec::set1(1e-7f);
  for (long i = 0; i < iterations; ++i)
#if !defined(__CUDACC__)  // nvcc does not know the pragma (a CUDA build may read a lower peak)
#pragma GCC unroll 24
#endif
    for (int k = 0; k < kChains; ++k)
      acc[k] = Vec::fma(acc[k], m, c);
  alignas(64) float out[Vec::kLanes * kChains];
  for (int k = 0; k < kChains; ++k)
    Vec::store(out + k * Vec::kLanes, acc[k]);
  float sum = 0;
  for (float v : out)
    sum += v;
  return sum;
}

}  // namespace fma_peak_detail

// Flops per second of the best of `repeats` runs, every host thread running `iterations` steps of
// its chains (2^20 steps are about 0.8 GFLOP per thread). The first run is not timed.
inline double fmaPeakFlopsPerSecond(long iterations = 1L << 20, int repeats = 10) {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const Exec exec;
  const int threads = exec.concurrency();
  Kokkos::View<float*, Exec::memory_space> sink("fma_peak_sink", threads);
  const double best = bestOfSeconds(repeats, [&] {
    Kokkos::parallel_for(
        "halo3d::bench::fmaPeak", Kokkos::RangePolicy<Exec>(exec, 0, threads),
        [=](const int t) { sink(t) = fma_peak_detail::run(iterations, float(t)); });
    halo3d::fence(exec, "fma peak");
  });
  return 2.0 * fma_peak_detail::kChains * fma_peak_detail::Vec::kLanes * double(iterations) *
         double(threads) / best;
}

}  // namespace halo3d::bench
