#pragma once
// A voxel's softmax over the C channels of a logits tensor, without overflow: the loss kernels
// (cross-entropy, soft Dice) and the segmentation kernels share it. Device-callable.

#include <Kokkos_Core.hpp>

#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/core/Types.hpp"

namespace halo3d::kernels::impl {

// The normaliser of a voxel's softmax: its largest logit m and s = sum_c exp(x_c - m), so that
// p_c = exp(x_c - m) / s and -log p_c = m + log s - x_c without overflow.
struct SoftmaxNorm {
  double m, s;
  KOKKOS_INLINE_FUNCTION double p(double x) const { return math::exp(x - m) / s; }
};

// The normaliser of voxel (n, d, h, w) of `x` (GlobalCells of logits with `classes` channels), in
// double.
template <class Cells>
KOKKOS_INLINE_FUNCTION SoftmaxNorm softmaxNorm(const Cells& x, index_t classes, index_t n,
                                               index_t d, index_t h, index_t w) {
  double m = double(x(n, 0, d, h, w));
  for (index_t c = 1; c < classes; ++c) {
    const double v = double(x(n, c, d, h, w));
    m = v > m ? v : m;
  }
  double s = 0.0;
  for (index_t c = 0; c < classes; ++c)
    s += math::exp(double(x(n, c, d, h, w)) - m);
  return {m, s};
}

}  // namespace halo3d::kernels::impl
