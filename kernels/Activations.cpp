// ReLU and LeakyReLU; see Activations.hpp for the contracts.
#include "halo3d/kernels/Activations.hpp"

#include "halo3d/kernels/impl/ElementwiseLoops.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels {

template <class ExecSpace, class T>
void leakyReluForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, double slope,
                      const Tensor<T, ExecSpace>& y, const Box& box, KernelPath path) {
  impl::requireCellwise("leakyReluForward", y, box, x);
  const auto xc = impl::readCells(x);
  const auto yc = impl::writeCells(y);
  const T a = T(slope);
  impl::forEachRow(
      exec, "halo3d::leakyReluForward", y.block().localSamples(), y.block().channels(), box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w0, index_t w1) {
        const T* x = xc.row(n, c, d, h, w0);
        T* y = yc.row(n, c, d, h, w0);
        const T s = a;
        for (index_t i = 0; i < w1 - w0; ++i) {
          const T v = x[i];
          y[i] = v > T(0) ? v : s * v;
        }
      },
      path);
}

template <class ExecSpace, class T>
void leakyReluBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                       const Tensor<T, ExecSpace>& dy, double slope, const Tensor<T, ExecSpace>& dx,
                       const Box& box, KernelPath path) {
  impl::requireCellwise("leakyReluBackward", dx, box, x, dy);
  const auto xc = impl::readCells(x);
  const auto dyc = impl::readCells(dy);
  const auto dxc = impl::writeCells(dx);
  const T a = T(slope);
  impl::forEachRow(
      exec, "halo3d::leakyReluBackward", dx.block().localSamples(), dx.block().channels(), box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w0, index_t w1) {
        const T* x = xc.row(n, c, d, h, w0);
        const T* dy = dyc.row(n, c, d, h, w0);
        T* dx = dxc.row(n, c, d, h, w0);
        const T s = a;
        for (index_t i = 0; i < w1 - w0; ++i) {
          const T g = dy[i];
          dx[i] = x[i] > T(0) ? g : s * g;
        }
      },
      path);
}

HALO3D_KERNELS_ACTIVATIONS(, Kokkos::DefaultExecutionSpace, float)
HALO3D_KERNELS_ACTIVATIONS(, Kokkos::DefaultExecutionSpace, double)

}  // namespace halo3d::kernels
