#pragma once
// The median of a set of timings: the middle value, or the mean of the two middle values of an even
// count. Empty input is the caller's error.

#include <algorithm>
#include <vector>

namespace halo3d {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace halo3d
