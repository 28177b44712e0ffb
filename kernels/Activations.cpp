// ReLU and LeakyReLU; see Activations.hpp for the contracts.
#include "halo3d/kernels/Activations.hpp"

#include "halo3d/kernels/impl/ElementwiseLoops.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels {

template <class ExecSpace, class T>
void leakyReluForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, double slope,
                      const Tensor<T, ExecSpace>& y, const Box& box, KernelPath path) {
  impl::requireCellwise("leakyReluForward", y, box, x);
  using C = ComputeType<T>;
  const C a = C(slope);
  impl::forEachCellRow(
      exec, "halo3d::leakyReluForward", y, box, path,
      KOKKOS_LAMBDA(index_t width, T * y, const T* x) {
        const C s = a;
        for (index_t i = 0; i < width; ++i) {
          const C v = C(x[i]);
          y[i] = T(v > C(0) ? v : s * v);
        }
      },
      x);
}

template <class ExecSpace, class T>
void leakyReluBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                       const Tensor<T, ExecSpace>& dy, double slope, const Tensor<T, ExecSpace>& dx,
                       const Box& box, KernelPath path) {
  impl::requireCellwise("leakyReluBackward", dx, box, x, dy);
  using C = ComputeType<T>;
  const C a = C(slope);
  impl::forEachCellRow(
      exec, "halo3d::leakyReluBackward", dx, box, path,
      KOKKOS_LAMBDA(index_t width, T * dx, const T* x, const T* dy) {
        const C s = a;
        for (index_t i = 0; i < width; ++i) {
          const C g = C(dy[i]);
          dx[i] = T(C(x[i]) > C(0) ? g : s * g);
        }
      },
      x, dy);
}

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_ACTIVATIONS, )
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_ACTIVATIONS, )

}  // namespace halo3d::kernels
