#include "nn/layers/Boxes.hpp"

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
