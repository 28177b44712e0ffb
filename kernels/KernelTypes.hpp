#pragma once
// The type vocabulary of the kernel interfaces: tensors and plain Views in the memory space of an
// execution space, the default execution space of the overloads without an instance, and the
// KernelPath every kernel with separate host and device code takes (core/KernelPath.hpp).

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/KernelPath.hpp"

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

namespace detail {
template <class T>
struct NonDeducedImpl {
  using type = T;
};
}  // namespace detail

// Keeps a parameter out of template argument deduction. Read-only View arguments are declared
// NonDeduced<Vector<const T, E>>: T is deduced from the outputs, and a caller's View<T*> (or a View
// of the default layout) converts at the call instead of failing deduction.
template <class T>
using NonDeduced = typename detail::NonDeducedImpl<T>::type;

// The explicit instantiations of the kernels on the default execution space, PREFIX `extern` in the
// headers and empty in the .cpp files: MACRO(PREFIX, E, T) for each real type T, MACRO(PREFIX, E,
// L) for each label type L, MACRO(PREFIX, E, T, L) for each pair.
#define HALO3D_KERNELS_FOR_REALS(MACRO, PREFIX)       \
  MACRO(PREFIX, Kokkos::DefaultExecutionSpace, float) \
  MACRO(PREFIX, Kokkos::DefaultExecutionSpace, double)
#define HALO3D_KERNELS_FOR_LABELS(MACRO, PREFIX)             \
  MACRO(PREFIX, Kokkos::DefaultExecutionSpace, std::int32_t) \
  MACRO(PREFIX, Kokkos::DefaultExecutionSpace, std::int64_t)
#define HALO3D_KERNELS_FOR_REALS_AND_LABELS(MACRO, PREFIX)           \
  MACRO(PREFIX, Kokkos::DefaultExecutionSpace, float, std::int32_t)  \
  MACRO(PREFIX, Kokkos::DefaultExecutionSpace, float, std::int64_t)  \
  MACRO(PREFIX, Kokkos::DefaultExecutionSpace, double, std::int32_t) \
  MACRO(PREFIX, Kokkos::DefaultExecutionSpace, double, std::int64_t)

}  // namespace halo3d::kernels
