#pragma once
// The MPI datatype of a C++ scalar.

#include <mpi.h>

#include <cstdint>
#include <type_traits>

namespace halo3d {

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
  else
    static_assert(sizeof(T) == 0, "mpiType: no MPI datatype for this type");
}

}  // namespace halo3d
