#pragma once
// A tensor's cells addressed by global coordinates, in a form device code can copy: the accessor
// of the element-wise, normalisation, dropout, loss and segmentation kernels.

#include <Kokkos_Core.hpp>

#include "halo3d/core/HaloTensor.hpp"

namespace halo3d::kernels::impl {

// A tensor's cells addressed by (local sample, channel, global d, h, w): the global -> local shift
// of TensorChecks.hpp folded into the accessor.
template <class T, class MemorySpace>
struct GlobalCells {
  Kokkos::View<T*****, Kokkos::LayoutRight, MemorySpace> view;
  index_t s0 = 0, s1 = 0, s2 = 0;

  KOKKOS_INLINE_FUNCTION T& operator()(index_t n, index_t c, index_t d, index_t h,
                                       index_t w) const {
    return view(n, c, d + s0, h + s1, w + s2);
  }
  // The contiguous W row from cell (n, c, d, h, w) on. Row loops index this pointer rather than the
  // View: the compiler then sees the row's base and the functor's scalars as loop invariants and
  // vectorises.
  KOKKOS_INLINE_FUNCTION T* row(index_t n, index_t c, index_t d, index_t h, index_t w) const {
    return &view(n, c, d + s0, h + s1, w + s2);
  }
};

template <class T, class MemorySpace>
GlobalCells<T, MemorySpace> writeCells(const HaloTensor<T, MemorySpace>& t) {
  const TensorBlock& b = t.block();
  return {t.view(), b.halo().lo[0] - b.owned().min(0), b.halo().lo[1] - b.owned().min(1),
          b.halo().lo[2] - b.owned().min(2)};
}
template <class T, class MemorySpace>
GlobalCells<const T, MemorySpace> readCells(const HaloTensor<T, MemorySpace>& t) {
  const GlobalCells<T, MemorySpace> w = writeCells(t);
  return {w.view, w.s0, w.s1, w.s2};
}

}  // namespace halo3d::kernels::impl
