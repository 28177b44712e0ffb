#pragma once
// Block decomposition of an extent E over p parts: pure functions, no MPI, tested alone.
//
// The first (E mod p) parts own ceil(E/p) cells and the rest own floor(E/p). Worked example, E =
// 10, p = 4:
//   part 0 -> [0, 3)   part 1 -> [3, 6)   part 2 -> [6, 8)   part 3 -> [8, 10)
// Every part owns at least one cell, so E >= p is required.

#include <array>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/core/Types.hpp"

namespace halo3d {

// Throws ShapeError naming `what` unless extent > 0, parts > 0 and extent >= parts.
void checkDecomposable(const char* what, index_t extent, int parts);

// Cells owned by part i of `parts`; requires checkDecomposable and 0 <= i < parts.
index_t blockExtent(index_t extent, int parts, int i);
// First cell owned by part i.
index_t blockOffset(index_t extent, int parts, int i);
// The part that owns cell x, 0 <= x < extent.
int blockOwner(index_t extent, int parts, index_t x);

// The block of part `coords` of a 3D decomposition of `extents` into `parts` blocks, in global
// indices.
Box blockBox(const Extents3& extents, const std::array<int, 3>& parts,
             const std::array<int, 3>& coords);

}  // namespace halo3d
