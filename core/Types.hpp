#pragma once
// The scalar vocabulary shared by every layer.

#include <array>
#include <cstdint>

namespace halo3d {

// Global indices and extents: volumes reach 512^3 x channels, beyond 32 bits.
using index_t = std::int64_t;

// Spatial dimensions of a block, in the order of the tensor's trailing axes.
enum Dim : int { D = 0, H = 1, W = 2 };
inline constexpr int kSpatialDims = 3;

using Extents3 = std::array<index_t, 3>;

// (N, C, D, H, W) of a global tensor, C order.
using Shape5 = std::array<index_t, 5>;

inline constexpr const char* dimName(int dim) {
  return dim == 0 ? "D" : dim == 1 ? "H" : "W";
}

}  // namespace halo3d
