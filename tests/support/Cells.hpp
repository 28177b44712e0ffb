#pragma once
// The (n, c, d, h, w) walk over a rank-5 View that the tests use to fill, read and compare tensors:
// one loop nest, so that every helper visits cells in the same C order as the reference arrays.

#include <cstddef>

#include "halo3d/core/TensorBlock.hpp"

namespace halo3d::testing {

// f(n, c, d, h, w) for every index of the rank-5 View v (a HaloTensor's owned() or whole view), in
// C order.
template <class View, class F>
void forEachIndex5(const View& v, const F& f) {
  for (std::size_t n = 0; n < v.extent(0); ++n)
    for (std::size_t c = 0; c < v.extent(1); ++c)
      for (std::size_t d = 0; d < v.extent(2); ++d)
        for (std::size_t h = 0; h < v.extent(3); ++h)
          for (std::size_t w = 0; w < v.extent(4); ++w)
            f(n, c, d, h, w);
}

// f(c, d, h, w, global cell) for every channel and every allocated cell (ghosts included) of one
// sample of block b, in C order: (d, h, w) index the allocation, the global cell says what belongs
// there.
template <class F>
void forEachAllocationCell(const TensorBlock& b, const F& f) {
  const Shape5 a = b.allocationExtents();
  for (index_t c = 0; c < a[1]; ++c)
    for (index_t d = 0; d < a[2]; ++d)
      for (index_t h = 0; h < a[3]; ++h)
        for (index_t w = 0; w < a[4]; ++w)
          f(c, d, h, w, b.toGlobal({d, h, w}));
}

// The central difference (loss(x + step) - loss(x - step)) / 2 step at `cell`, which is restored.
template <class V, class Loss>
double centralDifference(V& cell, double step, const Loss& loss) {
  const V saved = cell;
  cell = V(saved + step);
  const double up = loss();
  cell = V(saved - step);
  const double down = loss();
  cell = saved;
  return (up - down) / (2.0 * step);
}

}  // namespace halo3d::testing
