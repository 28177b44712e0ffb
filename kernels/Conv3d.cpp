// Explicit instantiations of the conv3d kernels for float and double on the default execution
// space. This translation unit alone sees the implementations, and with them the AVX-512 engine
// when the library is compiled for it.
#include "halo3d/kernels/Conv3d.hpp"

#include "halo3d/kernels/impl/Conv3dImpl.hpp"

namespace halo3d::kernels {

HALO3D_CONV3D_INSTANTIATE(, float, Kokkos::DefaultExecutionSpace)
HALO3D_CONV3D_INSTANTIATE(, double, Kokkos::DefaultExecutionSpace)

}  // namespace halo3d::kernels
