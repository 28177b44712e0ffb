#pragma once
// What MPI can take: the MPI datatype of a C++ scalar, and whether MPI may read and write a memory
// space directly.

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#include "halo3d/core/BFloat16.hpp"

namespace halo3d {

// Built with HALO3D_ENABLE_GPU_AWARE_MPI: MPI takes device pointers.
#ifdef HALO3D_GPU_AWARE_MPI
inline constexpr bool kGpuAwareMpi = true;
#else
inline constexpr bool kGpuAwareMpi = false;
#endif

// True when MPI may be handed pointers into MemorySpace: host-accessible memory always, device
// memory with a GPU-aware MPI. Otherwise the data is staged through a host copy. The one place
// that decides it, for the halo exchange, the allreduce wrappers and the gradient buckets.
template <class MemorySpace>
inline constexpr bool kMpiCanAccess =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible || kGpuAwareMpi;

template <class T>
MPI_Datatype mpiType() {
  if constexpr (std::is_same<T, float>::value)
    return MPI_FLOAT;
  else if constexpr (std::is_same<T, double>::value)
    return MPI_DOUBLE;
  else if constexpr (std::is_same<T, std::int32_t>::value)
    return MPI_INT32_T;
  else if constexpr (std::is_same<T, std::int64_t>::value)
    return MPI_INT64_T;
  else if constexpr (std::is_same<T, std::int16_t>::value)
    return MPI_INT16_T;
  else if constexpr (std::is_same<T, std::uint8_t>::value)
    return MPI_UINT8_T;
  else if constexpr (std::is_same<T, std::uint64_t>::value)
    return MPI_UINT64_T;
  else if constexpr (std::is_same<T, bf16>::value)
    return MPI_UINT16_T;  // moved as bits, never reduced by MPI
  else
    static_assert(sizeof(T) == 0, "mpiType: no MPI datatype for this type");
}

}  // namespace halo3d
