// ReLU and LeakyReLU; see Activations.hpp for the contracts.
#include "halo3d/kernels/Activations.hpp"

#include <type_traits>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "halo3d/kernels/impl/ElementwiseLoops.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels {

namespace {

// dx = (x > 0 ? dy : slope dy) over one row. GCC vectorises the plain loop as a masked multiply and
// a merge-masked load of dy, which on the AMD EPYC machine ran at half the speed of an add of the
// same traffic (bench_elementwise leaky_relu_bwd 6.5-6.9 ms against add's 3.0 ms, 1 thread);
// loading dy once and blending runs level with add (docs/PERFORMANCE.md). The blend picks dy or
// slope dy per lane as the select does, so the values are the same.
template <class T, class C>
KOKKOS_INLINE_FUNCTION void leakyReluBackwardRow(index_t width, T* dx, const T* x, const T* dy,
                                                 C slope) {
  index_t i = 0;
#if defined(__AVX512F__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  if constexpr (std::is_same<T, float>::value) {
    const __m512 s = _mm512_set1_ps(slope), zero = _mm512_setzero_ps();
    for (; i + 16 <= width; i += 16) {
      const __m512 g = _mm512_loadu_ps(dy + i);
      const __mmask16 pos = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), zero, _CMP_GT_OQ);
      _mm512_storeu_ps(dx + i, _mm512_mask_blend_ps(pos, _mm512_mul_ps(s, g), g));
    }
  }
#endif
  for (; i < width; ++i) {
    const C g = C(dy[i]);
    dx[i] = T(C(x[i]) > C(0) ? g : slope * g);
  }
}

}  // namespace

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
        leakyReluBackwardRow<T, C>(width, dx, x, dy, a);
      },
      x, dy);
}

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_ACTIVATIONS, )
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_ACTIVATIONS, )

}  // namespace halo3d::kernels
