// conv3dForwardBf16: the shape checks, then the AVX512-BF16 engine or the generic kernel, and its
// instantiation on the default execution space.
#include "halo3d/kernels/Conv3dBf16.hpp"

#include "halo3d/core/KernelPath.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Generic.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Host.hpp"
#include "halo3d/kernels/impl/Conv3dChecks.hpp"

namespace halo3d::kernels {

bool conv3dBf16HostEngine(const WindowGeometry& g) {
  return impl::bf16EngineApplies(g);
}

template <class ExecSpace>
void conv3dForwardBf16(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x,
                       const Conv3dWeightsOn<float, ExecSpace>& w,
                       const Conv3dBiasOn<float, ExecSpace>& b, const WindowGeometry& g,
                       const Tensor<bf16, ExecSpace>& y, const Box& out_box, KernelPath path) {
  impl::checkForward(x, w, b, g, y, out_box);
#if HALO3D_CONV3D_AVX512BF16
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest && impl::bf16EngineApplies(g))
      return impl::conv3dForwardBf16Host(exec, x, w, b, g, y, out_box);
  }
#endif
  // The weights rounded once, not once per output value.
  Kokkos::View<bf16*****, Kokkos::LayoutRight, typename ExecSpace::memory_space> wb(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "halo3d::conv3dForwardBf16::weights"),
      w.extent(0), w.extent(1), w.extent(2), w.extent(3), w.extent(4));
  const float* wd = w.data();
  bf16* wbd = wb.data();
  Kokkos::parallel_for(
      "halo3d::conv3dBf16RoundWeights",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, index_t(w.size())),
      KOKKOS_LAMBDA(const index_t i) { wbd[i] = bf16(wd[i]); });
  impl::conv3dForwardBf16Generic(exec, x, wb, b, g, y, out_box);
}

template void conv3dForwardBf16<Kokkos::DefaultExecutionSpace>(
    const Kokkos::DefaultExecutionSpace&, const Tensor<bf16, Kokkos::DefaultExecutionSpace>&,
    const Conv3dWeightsOn<float, Kokkos::DefaultExecutionSpace>&,
    const Conv3dBiasOn<float, Kokkos::DefaultExecutionSpace>&, const WindowGeometry&,
    const Tensor<bf16, Kokkos::DefaultExecutionSpace>&, const Box&, KernelPath);

}  // namespace halo3d::kernels
