#include "halo3d/core/BlockDecomposition.hpp"

#include "halo3d/core/Error.hpp"

namespace halo3d {

void checkDecomposable(const char* what, index_t extent, int parts) {
  require<ShapeError>(extent > 0, what, ": extent must be positive, got ", extent);
  require<ShapeError>(parts > 0, what, ": number of parts must be positive, got ", parts);
  require<ShapeError>(extent >= parts, what, ": extent ", extent, " cannot be split over ", parts,
                      " parts (every part needs at least one cell)");
}

index_t blockExtent(index_t extent, int parts, int i) {
  require<ShapeError>(i >= 0 && i < parts, "blockExtent: part ", i, " outside [0, ", parts, ")");
  const index_t base = extent / parts, rem = extent % parts;
  return base + (i < rem ? 1 : 0);
}

index_t blockOffset(index_t extent, int parts, int i) {
  require<ShapeError>(i >= 0 && i <= parts, "blockOffset: part ", i, " outside [0, ", parts, "]");
  const index_t base = extent / parts, rem = extent % parts;
  return i * base + (i < rem ? i : rem);
}

int blockOwner(index_t extent, int parts, index_t x) {
  require<ShapeError>(x >= 0 && x < extent, "blockOwner: cell ", x, " outside [0, ", extent, ")");
  const index_t base = extent / parts, rem = extent % parts;
  const index_t big = rem * (base + 1);  // cells held by the larger parts
  if (x < big) return static_cast<int>(x / (base + 1));
  return static_cast<int>(rem + (x - big) / base);
}

Box blockBox(const Extents3& extents, const std::array<int, 3>& parts,
             const std::array<int, 3>& coords) {
  Extents3 lo, hi;
  for (int d = 0; d < 3; ++d) {
    checkDecomposable(dimName(d), extents[d], parts[d]);
    lo[d] = blockOffset(extents[d], parts[d], coords[d]);
    hi[d] = lo[d] + blockExtent(extents[d], parts[d], coords[d]);
  }
  return Box(lo, hi);
}

}  // namespace halo3d
