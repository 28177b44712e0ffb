#pragma once
// The float weights of a bf16 convolution rounded to bf16 (nearest even) in one pass, so that the
// kernels read 2-byte weights and round each weight once per call rather than once per product.

#include <Kokkos_Core.hpp>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/Types.hpp"

namespace halo3d::kernels::impl {

template <class ExecSpace>
using Bf16Weights = Kokkos::View<bf16*****, Kokkos::LayoutRight, typename ExecSpace::memory_space>;

// `w`: any rank-5 float View in ExecSpace's memory space; the result has its extents and layout
// order.
template <class ExecSpace, class WView>
Bf16Weights<ExecSpace> roundWeightsToBf16(const ExecSpace& exec, const WView& w) {
  Bf16Weights<ExecSpace> wb(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "halo3d::bf16 conv weights"), w.extent(0),
      w.extent(1), w.extent(2), w.extent(3), w.extent(4));
  const float* wd = w.data();
  bf16* wbd = wb.data();
  Kokkos::parallel_for(
      "halo3d::roundWeightsToBf16",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, index_t(w.size())),
      KOKKOS_LAMBDA(const index_t i) { wbd[i] = bf16(wd[i]); });
  return wb;
}

}  // namespace halo3d::kernels::impl
