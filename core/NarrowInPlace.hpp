#pragma once
// Converting an array between a wide type and bf16 in its own memory, so that a bf16 copy of a
// float array needs no second buffer: the gradient allreduce in bf16 (nn/GradientReducer) sends
// the bucket's bf16 image from the first half of the bucket itself and widens the sum back.
//
// Element i of the narrow array lives at bytes [2i, 2i + 2), of the wide one at [w i, w i + w)
// (w = sizeof(Wide) > 2). Narrowing the elements [a, 2a) reads bytes [w a, 2 w a) and writes
// [2a, 4a): disjoint, and the written bytes belong to wide elements below a, already read. So the
// array is converted in ranges [0, 1), [1, 2), [2, 4), [4, 8), ... in that order, each one a
// parallel kernel with no element depending on another. Widening runs the same ranges from the
// top down: range [a, 2a) reads narrow bytes [2a, 4a) and writes [w a, 2 w a), which held narrow
// elements at or above 2a, already widened.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

#include "halo3d/core/BFloat16.hpp"

namespace halo3d {

namespace impl {

// The ranges [0, 1), [1, 2), [2, 4), ..., [2^k, n) covering [0, n), in ascending order. (A list
// rather than a callback: nvcc allows no device lambda inside another lambda.)
inline std::vector<std::pair<std::size_t, std::size_t>> doublingRanges(std::size_t n) {
  std::vector<std::pair<std::size_t, std::size_t>> r;
  if (n == 0) return r;
  r.emplace_back(0, 1);
  for (std::size_t a = 1; a < n; a *= 2)
    r.emplace_back(a, a * 2 < n ? a * 2 : n);
  return r;
}

}  // namespace impl

// Rounds data[0, n) to bf16 (nearest even) and stores the results as a bf16 array over the first
// 2n bytes of the same memory. Runs on ExecSpace, which must be able to access `data`; returns
// after the last kernel is enqueued (fence before the host reads).
template <class ExecSpace, class Wide>
void narrowToBf16InPlace(const ExecSpace& space, Wide* data, std::size_t n) {
  static_assert(sizeof(Wide) > sizeof(bf16), "narrowing needs a wider element");
  char* bytes = reinterpret_cast<char*>(data);
  for (const auto& [lo, hi] : impl::doublingRanges(n))
    Kokkos::parallel_for(
        "halo3d::narrowToBf16InPlace", Kokkos::RangePolicy<ExecSpace>(space, lo, hi),
        KOKKOS_LAMBDA(const std::size_t i) {
          Wide w;
          std::memcpy(&w, bytes + i * sizeof(Wide), sizeof(Wide));
          const bf16 h{float(w)};
          std::memcpy(bytes + i * sizeof(bf16), &h, sizeof(bf16));
        });
}

// The inverse: the bf16 array over the first 2n bytes of `data` becomes data[0, n) (exact).
template <class ExecSpace, class Wide>
void widenFromBf16InPlace(const ExecSpace& space, Wide* data, std::size_t n) {
  static_assert(sizeof(Wide) > sizeof(bf16), "widening needs a wider element");
  char* bytes = reinterpret_cast<char*>(data);
  const auto ranges = impl::doublingRanges(n);
  for (auto r = ranges.rbegin(); r != ranges.rend(); ++r)
    Kokkos::parallel_for(
        "halo3d::widenFromBf16InPlace", Kokkos::RangePolicy<ExecSpace>(space, r->first, r->second),
        KOKKOS_LAMBDA(const std::size_t i) {
          bf16 h;
          std::memcpy(&h, bytes + i * sizeof(bf16), sizeof(bf16));
          const Wide w = Wide(float(h));
          std::memcpy(bytes + i * sizeof(Wide), &w, sizeof(Wide));
        });
}

}  // namespace halo3d
