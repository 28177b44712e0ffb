// The bf16 conv3d passes: the shape checks, then on a host space with KernelPath::Fastest the
// AVX512-BF16 engine or the float route (Conv3dBf16Float.hpp), elsewhere the generic kernel; and
// their instantiations on the default execution space.
#include "halo3d/kernels/Conv3dBf16.hpp"

#include "halo3d/core/KernelPath.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Float.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Generic.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Host.hpp"
#include "halo3d/kernels/impl/Conv3dBf16HostFilter.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Weights.hpp"
#include "halo3d/kernels/impl/Conv3dChecks.hpp"

namespace halo3d::kernels {

bool conv3dBf16HostEngine(const WindowGeometry& g) {
  return impl::bf16EngineApplies(g);
}

std::size_t conv3dBf16HostEngineScratchBytes(const Shape5& x_owned, const Shape5& y_owned,
                                             const WindowGeometry& g) {
#if HALO3D_CONV3D_AVX512BF16
  if (impl::bf16EngineApplies(g)) return impl::bf16EngineScratchBytes(x_owned, y_owned, g);
#endif
  (void)x_owned;
  (void)y_owned;
  (void)g;
  return 0;
}

template <class ExecSpace>
void conv3dForwardBf16(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x,
                       const Conv3dWeightsOn<float, ExecSpace>& w,
                       const Conv3dBiasOn<float, ExecSpace>& b, const WindowGeometry& g,
                       const Tensor<bf16, ExecSpace>& y, const Box& out_box, KernelPath path) {
  impl::checkForward(x, w, b, g, y, out_box);
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
#if HALO3D_CONV3D_AVX512BF16
      if (impl::bf16EngineApplies(g))
        return impl::conv3dForwardBf16Host(exec, x, w, b, g, y, out_box);
#endif
      if (out_box.empty()) return;
      const auto yf = HaloTensor<float, typename ExecSpace::memory_space>("y(float)", y.block());
      conv3dForward(exec, impl::widenToFloat(exec, x), impl::bf16RoundedWeights(exec, w), b, g, yf,
                    out_box, KernelPath::Fastest);
      return impl::narrowBoxToBf16(exec, yf.view(), y, out_box);
    }
  }
  impl::conv3dForwardBf16Generic(exec, x, impl::roundWeightsToBf16(exec, w), b, g, y, out_box);
}

template <class ExecSpace>
void conv3dBackwardDataBf16(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& dy,
                            const Conv3dWeightsOn<float, ExecSpace>& w, const WindowGeometry& g,
                            const Tensor<bf16, ExecSpace>& dx, const Box& dx_box, const Box& dy_box,
                            KernelPath path) {
  impl::checkBackwardData(dy, w, g, dx, dx_box, dy_box);
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
#if HALO3D_CONV3D_AVX512BF16
      if (impl::bf16EngineApplies(g))
        return impl::conv3dBackwardDataBf16Host(exec, dy, w, g, dx, dx_box, dy_box);
#endif
      if (dx_box.empty()) return;
      const auto dxf = HaloTensor<float, typename ExecSpace::memory_space>("dx(float)", dx.block());
      conv3dBackwardData(exec, impl::widenToFloat(exec, dy), impl::bf16RoundedWeights(exec, w), g,
                         dxf, dx_box, dy_box, KernelPath::Fastest);
      return impl::narrowBoxToBf16(exec, dxf.view(), dx, dx_box);
    }
  }
  impl::conv3dBackwardDataBf16Generic(exec, dy, impl::roundWeightsToBf16(exec, w), g, dx, dx_box,
                                      dy_box);
}

template <class ExecSpace>
void conv3dBackwardFilterBf16(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x,
                              const Tensor<bf16, ExecSpace>& dy, const WindowGeometry& g,
                              const Conv3dWeightsGradOn<float, ExecSpace>& dw,
                              const Conv3dBiasGradOn<float, ExecSpace>& db, const Box& out_box,
                              bool accumulate, KernelPath path) {
  impl::checkBackwardFilter(x, dy, g, dw, db, out_box);
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
#if HALO3D_CONV3D_AVX512BF16
      if (impl::bf16EngineApplies(g)) {
        impl::conv3dBackwardFilterBf16Host(exec, x, dy, g, dw, out_box, accumulate);
        return impl::conv3dBiasGradBf16Generic(exec, dy, db, out_box, accumulate,
                                               impl::TeamTuning{});
      }
#endif
      return conv3dBackwardFilter(exec, impl::widenToFloat(exec, x), impl::widenToFloat(exec, dy),
                                  g, dw, db, out_box, accumulate, KernelPath::Fastest);
    }
  }
  impl::conv3dBackwardFilterBf16Generic(exec, x, dy, g, dw, db, out_box, accumulate,
                                        impl::TeamTuning{});
}

template void conv3dForwardBf16<Kokkos::DefaultExecutionSpace>(
    const Kokkos::DefaultExecutionSpace&, const Tensor<bf16, Kokkos::DefaultExecutionSpace>&,
    const Conv3dWeightsOn<float, Kokkos::DefaultExecutionSpace>&,
    const Conv3dBiasOn<float, Kokkos::DefaultExecutionSpace>&, const WindowGeometry&,
    const Tensor<bf16, Kokkos::DefaultExecutionSpace>&, const Box&, KernelPath);
template void conv3dBackwardDataBf16<Kokkos::DefaultExecutionSpace>(
    const Kokkos::DefaultExecutionSpace&, const Tensor<bf16, Kokkos::DefaultExecutionSpace>&,
    const Conv3dWeightsOn<float, Kokkos::DefaultExecutionSpace>&, const WindowGeometry&,
    const Tensor<bf16, Kokkos::DefaultExecutionSpace>&, const Box&, const Box&, KernelPath);
template void conv3dBackwardFilterBf16<Kokkos::DefaultExecutionSpace>(
    const Kokkos::DefaultExecutionSpace&, const Tensor<bf16, Kokkos::DefaultExecutionSpace>&,
    const Tensor<bf16, Kokkos::DefaultExecutionSpace>&, const WindowGeometry&,
    const Conv3dWeightsGradOn<float, Kokkos::DefaultExecutionSpace>&,
    const Conv3dBiasGradOn<float, Kokkos::DefaultExecutionSpace>&, const Box&, bool, KernelPath);

}  // namespace halo3d::kernels
