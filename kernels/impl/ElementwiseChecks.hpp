#pragma once
// Shape checks of the kernels that pair tensors cell by cell or take plain Views, on top of
// TensorChecks.hpp.

#include <Kokkos_Core.hpp>

#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels::impl {

// Tensors paired cell by cell: same global (N, C, D, H, W) and the same samples.
template <class A, class B>
void requireSameShape(const char* kernel, const A& a, const B& b) {
  require<ShapeError>(a.block().globalShape() == b.block().globalShape(), kernel,
                      ": global shapes differ between ", describe(a), " and ", describe(b));
  requireSameSamples(kernel, a, b);
}

// The common checks of a cell-by-cell kernel: `box` is owned by the output and held by every input.
template <class Out, class... In>
void requireCellwise(const char* kernel, const Out& out, const Box& box, const In&... in) {
  requireOwned(kernel, out, box);
  (requireSameShape(kernel, in, out), ...);
  (requireAllocated(kernel, in, box, "input box"), ...);
}

// View `v` has extent `expected` along `dim` (`what` says where the number comes from).
template <class View>
void requireExtent(const char* kernel, const View& v, int dim, index_t expected, const char* what) {
  require<ShapeError>(index_t(v.extent(dim)) == expected, kernel, ": View '", v.label(),
                      "' has extent ", v.extent(dim), " along dimension ", dim, " but ", what,
                      " is ", expected);
}

}  // namespace halo3d::kernels::impl
