#pragma once
// The compute anchor of the convolution benchmarks: the fp32 FMA peak that this machine reaches,
// measured in the same process as the figures it anchors (the machines are shared, and their clock
// drifts between runs). Each of the default host execution space's threads runs independent chains
// of fused multiply-adds that live in registers: 24 chains of 512-bit vectors where AVX-512 is
// compiled in (more than an FMA's latency times its two pipes, so the pipes never wait), 256-bit
// vectors with AVX2 and FMA, scalar std::fma otherwise. No memory is touched inside the loop, so
// this is the ceiling of any kernel's flop rate, convolutions included.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#include "halo3d/core/KokkosCompat.hpp"

namespace halo3d::bench {

namespace fma_peak_detail {

constexpr int kChains = 24;

// Runs `iterations` steps of kChains chains of vectors V of `Lanes` floats from `seed` (set1, fma
// and store are the vector's intrinsics); returns a value depending on all of them, so that
// nothing is optimised away.
template <class V, int Lanes, class Set1, class Fma, class Store>
float chains(long iterations, float seed, Set1 set1, Fma fma, Store store) {
  V acc[kChains];
  for (int k = 0; k < kChains; ++k)
    acc[k] = set1(seed + float(k));
  const V m = set1(0.999999f), c = set1(1e-7f);
  for (long i = 0; i < iterations; ++i)
#if !defined(__CUDACC__)  // nvcc does not know the pragma (a CUDA build may read a lower peak)
#pragma GCC unroll 24
#endif
    for (int k = 0; k < kChains; ++k)
      acc[k] = fma(acc[k], m, c);
  alignas(64) float out[Lanes * kChains];
  for (int k = 0; k < kChains; ++k)
    store(out + k * Lanes, acc[k]);
  float sum = 0;
  for (float v : out)
    sum += v;
  return sum;
}

// Flops: 2 * kChains * lanes() * iterations.
inline float run(long iterations, float seed) {
#if defined(__AVX512F__)
  return chains<__m512, 16>(
      iterations, seed, [](float v) { return _mm512_set1_ps(v); },
      [](__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); },
      [](float* p, __m512 v) { _mm512_store_ps(p, v); });
#elif defined(__AVX2__) && defined(__FMA__)
  return chains<__m256, 8>(
      iterations, seed, [](float v) { return _mm256_set1_ps(v); },
      [](__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); },
      [](float* p, __m256 v) { _mm256_store_ps(p, v); });
#else
  return chains<float, 1>(
      iterations, seed, [](float v) { return v; },
      [](float a, float b, float c) { return std::fma(a, b, c); },
      [](float* p, float v) { *p = v; });
#endif
}

constexpr int lanes() {
#if defined(__AVX512F__)
  return 16;
#elif defined(__AVX2__) && defined(__FMA__)
  return 8;
#else
  return 1;
#endif
}

}  // namespace fma_peak_detail

// Flops per second of the best of `repeats` runs, every host thread running `iterations` steps of
// its chains (2^20 steps are about 0.8 GFLOP per thread). The first run is not timed.
inline double fmaPeakFlopsPerSecond(long iterations = 1L << 20, int repeats = 10) {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const Exec exec;
  const int threads = exec.concurrency();
  Kokkos::View<float*, Exec::memory_space> sink("fma_peak_sink", threads);
  auto once = [&] {
    Kokkos::parallel_for(
        "halo3d::bench::fmaPeak", Kokkos::RangePolicy<Exec>(exec, 0, threads),
        [=](const int t) { sink(t) = fma_peak_detail::run(iterations, float(t)); });
    halo3d::fence(exec, "fma peak");
  };
  once();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    once();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * fma_peak_detail::kChains * fma_peak_detail::lanes() * double(iterations) *
         double(threads) / best;
}

}  // namespace halo3d::bench
