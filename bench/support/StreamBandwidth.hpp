#pragma once
// The memory-bandwidth anchor of the on-node benchmarks: a STREAM "copy" (b[i] = a[i]) over arrays
// far larger than the last-level cache, on the default host execution space with as many threads as
// it has (OMP_NUM_THREADS). Bytes count as STREAM counts them: one read and one write per element
// (the write-allocate read is not counted), so a kernel's "compulsory bytes" over its time compare
// with it directly. Measured in the same process as the figure it anchors: the machines these
// benchmarks run on are shared and drift between runs.
#include <Kokkos_Core.hpp>

#include <cstddef>

#include "halo3d/core/KokkosCompat.hpp"
#include "support/ManualTime.hpp"

namespace halo3d::bench {

// Bytes per second of the best of `repeats` copies of `bytes` (per array). The first copy touches
// both arrays and is not timed.
inline double streamCopyBytesPerSecond(std::size_t bytes = std::size_t(256) << 20,
                                       int repeats = 10) {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const std::size_t n = bytes / sizeof(float);
  Kokkos::View<float*, Exec::memory_space> a(Kokkos::view_alloc("stream_a"), n);
  Kokkos::View<float*, Exec::memory_space> b(Kokkos::view_alloc("stream_b"), n);
  Kokkos::deep_copy(a, 1.0f);
  const Exec exec;
  auto copy = [&] {
    Kokkos::parallel_for(
        "halo3d::bench::streamCopy", Kokkos::RangePolicy<Exec>(exec, 0, n),
        KOKKOS_LAMBDA(const std::size_t i) { b(i) = a(i); });
    halo3d::fence(exec, "stream copy");
  };
  const double best = bestOfSeconds(repeats, copy);
  return 2.0 * double(n) * sizeof(float) / best;
}

}  // namespace halo3d::bench
