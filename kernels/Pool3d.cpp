// Pooling window validation, and the explicit instantiations of the pooling kernels.
#include "halo3d/kernels/Pool3d.hpp"

#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/impl/Pool3dImpl.hpp"

namespace halo3d::kernels {

void validatePool3d(const WindowGeometry& g) {
  g.validate();
  for (int d = 0; d < 3; ++d) {
    const int span = g.dilation[d] * (g.kernel[d] - 1) + 1;
    require<ShapeError>(2 * g.padding[d] <= span, "pooling along ", dimName(d), ": padding ",
                        g.padding[d], " exceeds half the window (kernel ", g.kernel[d],
                        ", dilation ", g.dilation[d], ", extent ", span,
                        "); PyTorch allows at most ", span / 2);
  }
}

PoolStreamBytes poolStreamBytes() {
  return {impl::maxPoolStreamMinBytes(), impl::poolStreamMinBytes()};
}

void setPoolStreamBytes(const PoolStreamBytes& bytes) {
  impl::maxPoolStreamMinBytes() = bytes.max_pool;
  impl::poolStreamMinBytes() = bytes.avg_pool;
}

HALO3D_POOL3D_INSTANTIATE(, float, Kokkos::DefaultExecutionSpace)
HALO3D_POOL3D_INSTANTIATE(, double, Kokkos::DefaultExecutionSpace)
HALO3D_POOL3D_INSTANTIATE(, ::halo3d::bf16, Kokkos::DefaultExecutionSpace)

}  // namespace halo3d::kernels
