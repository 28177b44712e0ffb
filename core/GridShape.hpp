#pragma once
// The shape of a process grid, Pn x Pd x Ph x Pw, written "NxDxHxW": pure topology, no MPI.
//
// Rank order puts the blocks of one sample group consecutively (the spatial group), W fastest:
//   rank = ((n * Pd + d) * Ph + h) * Pw + w,   spatial rank = (d * Ph + h) * Pw + w.
// Neighbours are the 26 spatial offsets in {-1, 0, 1}^3 \ {0}; slot k = (od+1)*9 + (oh+1)*3 +
// (ow+1), so slot 13 is the block itself and the opposite of slot k is 26 - k.

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace halo3d {

struct GridCoords {
  int n = 0, d = 0, h = 0, w = 0;
  std::array<int, 3> spatial() const { return {d, h, w}; }
  friend bool operator==(const GridCoords& a, const GridCoords& b) {
    return a.n == b.n && a.d == b.d && a.h == b.h && a.w == b.w;
  }
};

inline constexpr int kNeighbourSlots = 27;
inline constexpr int kSelfSlot = 13;
inline constexpr int neighbourSlot(const std::array<int, 3>& offset) {
  return (offset[0] + 1) * 9 + (offset[1] + 1) * 3 + (offset[2] + 1);
}
inline constexpr std::array<int, 3> neighbourOffset(int slot) {
  return {slot / 9 - 1, (slot / 3) % 3 - 1, slot % 3 - 1};
}
inline constexpr int oppositeSlot(int slot) {
  return kNeighbourSlots - 1 - slot;
}

class GridShape;
// Every ordered factorisation of `ranks` into a grid N x D x H x W, N slowest and W fastest.
std::vector<GridShape> allGrids(int ranks);

class GridShape {
 public:
  GridShape() = default;
  // Requires every factor >= 1 (InputError otherwise).
  GridShape(int n, int d, int h, int w);

  // Parses "NxDxHxW", e.g. "2x2x2x1". Throws InputError naming the string on anything else.
  static GridShape parse(std::string_view text);

  int n() const { return _n; }
  int d() const { return _d; }
  int h() const { return _h; }
  int w() const { return _w; }
  std::array<int, 3> spatial() const { return {_d, _h, _w}; }
  int size() const { return _n * _d * _h * _w; }
  int spatialSize() const { return _d * _h * _w; }
  std::string str() const;

  GridCoords coordsOf(int rank) const;
  int rankOf(const GridCoords& c) const;
  int spatialRankOf(const std::array<int, 3>& spatial) const {
    return (spatial[0] * _h + spatial[1]) * _w + spatial[2];
  }
  // Spatial rank of the neighbour of `spatial` at `offset`, or -1 past a physical boundary.
  int neighbourSpatialRank(const std::array<int, 3>& spatial,
                           const std::array<int, 3>& offset) const;

  friend bool operator==(const GridShape& a, const GridShape& b) {
    return a._n == b._n && a._d == b._d && a._h == b._h && a._w == b._w;
  }

 private:
  int _n = 1, _d = 1, _h = 1, _w = 1;
};

}  // namespace halo3d
