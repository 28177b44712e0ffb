#pragma once
// The plain-data description of one conv3d call that kernels capture by value: the window geometry
// and the global -> local index shifts of the input-side and output-side tensors. Plain ints rather
// than std::array, so that it is usable in device code without relaxed constexpr.

#include <Kokkos_Core.hpp>

#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/core/Types.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels::impl {

struct Conv3dIndexing {
  int kernel[3];
  int stride[3];
  int dilation[3];
  int padding[3];
  // Local (allocation) index = global index + shift, for the tensor on the input side (x, dx) and
  // on the output side (y, dy).
  index_t in_shift[3];
  index_t out_shift[3];

  int taps() const { return kernel[0] * kernel[1] * kernel[2]; }

  // Global input coordinate read by output coordinate `o` through tap `k` along dimension `d`.
  KOKKOS_INLINE_FUNCTION index_t inputOf(int d, index_t o, int k) const {
    return o * stride[d] - padding[d] + index_t(k) * dilation[d];
  }
};

template <class InTensor, class OutTensor>
Conv3dIndexing makeIndexing(const WindowGeometry& g, const InTensor& in, const OutTensor& out) {
  Conv3dIndexing ix{};
  const auto si = localShift(in);
  const auto so = localShift(out);
  for (int d = 0; d < 3; ++d) {
    ix.kernel[d] = g.kernel[d];
    ix.stride[d] = g.stride[d];
    ix.dilation[d] = g.dilation[d];
    ix.padding[d] = g.padding[d];
    ix.in_shift[d] = si[d];
    ix.out_shift[d] = so[d];
  }
  return ix;
}

}  // namespace halo3d::kernels::impl
