#include "halo3d/nn/layers/Boxes.hpp"

#include <algorithm>

namespace halo3d::nn {

Box validWithoutExchange(const TensorBlock& x) {
  Extents3 lo = x.owned().min(), hi = x.owned().max();
  for (int d = 0; d < 3; ++d) {
    if (x.atBoundary(d, 0)) lo[d] -= x.halo().lo[d];
    if (x.atBoundary(d, 1)) hi[d] += x.halo().hi[d];
  }
  return Box(lo, hi);
}

std::vector<Box> splitAlongD(const Box& box, int parts) {
  std::vector<Box> out;
  if (box.empty()) return out;
  const index_t n = std::min<index_t>(std::max(parts, 1), box.extent(0));
  for (index_t i = 0; i < n; ++i)
    out.push_back(box.withRange(0, box.min(0) + box.extent(0) * i / n,
                                box.min(0) + box.extent(0) * (i + 1) / n));
  return out;
}

std::vector<Box> shellSlabs(const Box& outer, const Box& inner) {
  std::vector<Box> slabs;
  if (inner.empty()) {
    if (!outer.empty()) slabs.push_back(outer);
    return slabs;
  }
  Box core = outer;
  for (int d = 0; d < 3; ++d) {
    const Box below = core.withRange(d, core.min(d), inner.min(d));
    const Box above = core.withRange(d, inner.max(d), core.max(d));
    if (!below.empty()) slabs.push_back(below);
    if (!above.empty()) slabs.push_back(above);
    core = core.withRange(d, inner.min(d), inner.max(d));
  }
  return slabs;
}

Box narrowAlongW(const Box& outer, const Box& inner, index_t cells) {
  if (inner.empty()) return inner;
  index_t lo = inner.min(2), hi = inner.max(2);
  if (lo > outer.min(2)) lo = std::max(lo, outer.min(2) + cells);
  if (hi < outer.max(2)) hi = std::min(hi, outer.max(2) - cells);
  return inner.withRange(2, lo, std::max(lo, hi));
}

Box hull(const Box& a, const Box& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  Extents3 lo, hi;
  for (int d = 0; d < 3; ++d) {
    lo[d] = std::min(a.min(d), b.min(d));
    hi[d] = std::max(a.max(d), b.max(d));
  }
  return Box(lo, hi);
}

}  // namespace halo3d::nn
