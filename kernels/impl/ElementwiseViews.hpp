#pragma once
// Type vocabulary of the kernels that take plain Views beside HaloTensors (parameters, statistics,
// flat buffers), and the switch between their host and device loop shapes.

#include <Kokkos_Core.hpp>

#include "halo3d/core/HaloTensor.hpp"

namespace halo3d::kernels {

// The execution space of the overloads without an instance argument.
using DefaultExec = Kokkos::DefaultExecutionSpace;

// A HaloTensor in the memory space of execution space E.
template <class T, class E>
using Tensor = HaloTensor<T, typename E::memory_space>;
// Rank-1 and rank-2 LayoutRight Views in the memory space of E: parameters (gamma, bias, dense
// weights), statistics and flat buffers.
template <class T, class E>
using Vector = Kokkos::View<T*, Kokkos::LayoutRight, typename E::memory_space>;
template <class T, class E>
using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, typename E::memory_space>;

namespace impl {

template <class T>
struct NonDeducedImpl {
  using type = T;
};
// Read-only View arguments are declared NonDeduced<Vector<const T, E>>: T is deduced from the
// outputs, and a caller's View<T*> converts to View<const T*> at the call instead of failing
// deduction.
template <class T>
using NonDeduced = typename NonDeducedImpl<T>::type;

// A tensor's cells addressed by (local sample, channel, global d, h, w): the global -> local shift
// of TensorChecks.hpp folded into the accessor, in a form device code can copy.
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

// True when E runs on the host, where loops take whole W rows (see ElementwiseLoops.hpp).
template <class E>
inline constexpr bool kRunsOnHost = Kokkos::SpaceAccessibility<E, Kokkos::HostSpace>::accessible;

}  // namespace impl
}  // namespace halo3d::kernels
