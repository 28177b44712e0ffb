#pragma once
// Integer division rounding toward minus and plus infinity, for window arithmetic on global
// coordinates that go negative near the low boundary (padding, ghost cells). Device-callable.

#include <Kokkos_Core.hpp>

#include "halo3d/core/Types.hpp"

namespace halo3d::kernels::impl {

// floor(a / b) for b > 0 and either sign of a.
KOKKOS_INLINE_FUNCTION index_t floorDiv(index_t a, index_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
// ceil(a / b) for b > 0 and either sign of a.
KOKKOS_INLINE_FUNCTION index_t ceilDiv(index_t a, index_t b) {
  return -floorDiv(-a, b);
}

}  // namespace halo3d::kernels::impl
