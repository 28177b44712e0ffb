// Explicit instantiations of the conv3d kernels for float and double on the default execution
// space.
#include "halo3d/kernels/Conv3d.hpp"

namespace halo3d::kernels {

HALO3D_CONV3D_INSTANTIATE(, float, Kokkos::DefaultExecutionSpace)
HALO3D_CONV3D_INSTANTIATE(, double, Kokkos::DefaultExecutionSpace)

}  // namespace halo3d::kernels
