#pragma once
// The arithmetic type of an activation storage type, and the bf16 instantiation lists of the
// memory-bound kernels (pooling, batch norm, activations, dropout, element-wise, channels, losses,
// segmentation).
//
// bf16 (core/BFloat16.hpp) is storage only: a kernel on bf16 tensors loads each value as float,
// computes and accumulates in float (or in double where the kernel already sums in double) and
// rounds once on the store. ComputeType<T> names that type: float for bf16, T itself for float
// and double, so that the float and double kernels compile to what they were. Scalars next to a
// tensor (a fill value, a scale, a keep factor) and per-channel parameters (batch norm's gamma,
// beta and statistics) take ComputeType<T> too: a bf16 run keeps its parameters in float.

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "halo3d/core/BFloat16.hpp"

namespace halo3d::kernels {

template <class T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<bf16> {
  using type = float;
};
template <class T>
using ComputeType = typename ComputeTypeOf<T>::type;

// The bf16 instantiations on the default execution space, as HALO3D_KERNELS_FOR_REALS and
// HALO3D_KERNELS_FOR_REALS_AND_LABELS (KernelTypes.hpp) list float and double.
#define HALO3D_KERNELS_FOR_BF16(MACRO, PREFIX) \
  MACRO(PREFIX, Kokkos::DefaultExecutionSpace, ::halo3d::bf16)
#define HALO3D_KERNELS_FOR_BF16_AND_LABELS(MACRO, PREFIX)                    \
  MACRO(PREFIX, Kokkos::DefaultExecutionSpace, ::halo3d::bf16, std::int32_t) \
  MACRO(PREFIX, Kokkos::DefaultExecutionSpace, ::halo3d::bf16, std::int64_t)

}  // namespace halo3d::kernels
