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

// Runs `iterations` steps of every chain from `seed`; returns a value depending on all of them, so
// that nothing is optimised away. Flops: 2 * kChains * lanes() * iterations.
inline float run(long iterations, float seed) {
#if defined(__AVX512F__)
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k)
    acc[k] = _mm512_set1_ps(seed + float(k));
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i)
#pragma GCC unroll 24
    for (int k = 0; k < kChains; ++k)
      acc[k] = _mm512_fmadd_ps(acc[k], m, c);
  alignas(64) float lanes[16];
  for (int k = 1; k < kChains; ++k)
    acc[0] = _mm512_add_ps(acc[0], acc[k]);
  _mm512_store_ps(lanes, acc[0]);
  float sum = 0;
  for (float v : lanes)
    sum += v;
  return sum;
#elif defined(__AVX2__) && defined(__FMA__)
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k)
    acc[k] = _mm256_set1_ps(seed + float(k));
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i)
#pragma GCC unroll 24
    for (int k = 0; k < kChains; ++k)
      acc[k] = _mm256_fmadd_ps(acc[k], m, c);
  alignas(32) float lanes[8];
  for (int k = 1; k < kChains; ++k)
    acc[0] = _mm256_add_ps(acc[0], acc[k]);
  _mm256_store_ps(lanes, acc[0]);
  float sum = 0;
  for (float v : lanes)
    sum += v;
  return sum;
#else
  float acc[kChains];
  for (int k = 0; k < kChains; ++k)
    acc[k] = seed + float(k);
  for (long i = 0; i < iterations; ++i)
    for (int k = 0; k < kChains; ++k)
      acc[k] = std::fma(acc[k], 0.999999f, 1e-7f);
  float sum = 0;
  for (float v : acc)
    sum += v;
  return sum;
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
