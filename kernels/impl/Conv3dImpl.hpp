#pragma once
// Definitions of the Conv3d.hpp kernels: the shape checks at the boundary, then the dispatch to the
// host code (the AVX-512 engine where it applies, the generic kernel elsewhere) or the device code
// (the team kernels). The impl:: entry points also take the team size of the device code, so that
// the tests run the device code on the host backend with one and several threads per team.
// Included by kernels/Conv3d.cpp (the instantiations) and by tests.

#include <Kokkos_Core.hpp>

#include "halo3d/core/KernelPath.hpp"
#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/impl/Conv3dChecks.hpp"
#include "halo3d/kernels/impl/Conv3dGeneric.hpp"
#include "halo3d/kernels/impl/Conv3dHostBackwardData.hpp"
#include "halo3d/kernels/impl/Conv3dHostBackwardFilter.hpp"
#include "halo3d/kernels/impl/Conv3dHostForward.hpp"
#include "halo3d/kernels/impl/Conv3dHostStrided.hpp"
#include "halo3d/kernels/impl/Conv3dSimd.hpp"
#include "halo3d/kernels/impl/Conv3dTeam.hpp"
#include "halo3d/kernels/impl/TeamTuning.hpp"

namespace halo3d::kernels::impl {

// Runs one conv3d pass on the code that the path, the execution space and the scalar type select:
// on a host space with KernelPath::Fastest, the AVX-512 engine where it is compiled in for T and
// `simd_applies` (the geometry), else the generic kernel; the team kernel otherwise. `simd` is a
// generic lambda taking exec, so that its call of the engine is only compiled where the engine
// exists.
template <class T, class ExecSpace, class Simd, class Generic, class Team>
void runConv3dPass(const ExecSpace& exec, KernelPath path, bool simd_applies, const Simd& simd,
                   const Generic& generic, const Team& team) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "conv3d kernels: exec must be an execution space");
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
#if HALO3D_CONV3D_AVX512
      if constexpr (kHostSimd<T>) {
        if (simd_applies) return simd(exec);
      }
#endif
      return generic();
    }
  }
  team();
}

template <class ExecSpace, class T>
void conv3dForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                   const Conv3dWeightsOn<T, ExecSpace>& w, const Conv3dBiasOn<T, ExecSpace>& b,
                   const WindowGeometry& g, const Tensor<T, ExecSpace>& y, const Box& out_box,
                   KernelPath path, const TeamTuning& tuning) {
  checkForward(x, w, b, g, y, out_box);
  runConv3dPass<T>(
      exec, path, true,
      [&](const auto& e) {
        if (hostStridedForwardApplies(g)) return conv3dForwardStrided(e, x, w, b, g, y, out_box);
        conv3dForwardHost(e, x, w, b, g, y, out_box);
      },
      [&] { conv3dForwardGeneric(exec, x, w, b, g, y, out_box); },
      [&] { conv3dForwardTeam(exec, x, w, b, g, y, out_box, tuning); });
}

template <class ExecSpace, class T>
void conv3dBackwardData(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy,
                        const Conv3dWeightsOn<T, ExecSpace>& w, const WindowGeometry& g,
                        const Tensor<T, ExecSpace>& dx, const Box& dx_box, const Box& dy_box,
                        KernelPath path, const TeamTuning& tuning) {
  checkBackwardData(dy, w, g, dx, dx_box, dy_box);
  runConv3dPass<T>(
      exec, path, hostBackwardDataApplies(g) || hostStridedBackwardDataApplies(g),
      [&](const auto& e) {
        if (hostStridedBackwardDataApplies(g))
          return conv3dBackwardDataStrided(e, dy, w, g, dx, dx_box, dy_box);
        conv3dBackwardDataHost(e, dy, w, g, dx, dx_box, dy_box);
      },
      [&] { conv3dBackwardDataGeneric(exec, dy, w, g, dx, dx_box, dy_box); },
      [&] { conv3dBackwardDataTeam(exec, dy, w, g, dx, dx_box, dy_box, tuning); });
}

template <class ExecSpace, class T>
void conv3dBackwardFilter(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                          const Tensor<T, ExecSpace>& dy, const WindowGeometry& g,
                          const Conv3dWeightsGradOn<T, ExecSpace>& dw,
                          const Conv3dBiasGradOn<T, ExecSpace>& db, const Box& out_box,
                          bool accumulate, KernelPath path, const TeamTuning& tuning) {
  checkBackwardFilter(x, dy, g, dw, db, out_box);
  runConv3dPass<T>(
      exec, path, true,
      [&](const auto& e) {
        if (hostStridedBackwardFilterApplies<T>(g, index_t(dw.extent(0))))
          return conv3dBackwardFilterStrided(e, x, dy, g, dw, db, out_box, accumulate);
        conv3dBackwardFilterHost(e, x, dy, g, dw, db, out_box, accumulate);
      },
      [&] { conv3dBackwardFilterGeneric(exec, x, dy, g, dw, db, out_box, accumulate); },
      [&] { conv3dBackwardFilterTeam(exec, x, dy, g, dw, db, out_box, accumulate, tuning); });
}

}  // namespace halo3d::kernels::impl

namespace halo3d::kernels {

template <class ExecSpace, class T>
void conv3dForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                   const Conv3dWeightsOn<T, ExecSpace>& w, const Conv3dBiasOn<T, ExecSpace>& b,
                   const WindowGeometry& g, const Tensor<T, ExecSpace>& y, const Box& out_box,
                   KernelPath path) {
  impl::conv3dForward(exec, x, w, b, g, y, out_box, path, impl::TeamTuning{});
}

template <class ExecSpace, class T>
void conv3dBackwardData(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy,
                        const Conv3dWeightsOn<T, ExecSpace>& w, const WindowGeometry& g,
                        const Tensor<T, ExecSpace>& dx, const Box& dx_box, const Box& dy_box,
                        KernelPath path) {
  impl::conv3dBackwardData(exec, dy, w, g, dx, dx_box, dy_box, path, impl::TeamTuning{});
}

template <class ExecSpace, class T>
void conv3dBackwardFilter(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                          const Tensor<T, ExecSpace>& dy, const WindowGeometry& g,
                          const Conv3dWeightsGradOn<T, ExecSpace>& dw,
                          const Conv3dBiasGradOn<T, ExecSpace>& db, const Box& out_box,
                          bool accumulate, KernelPath path) {
  impl::conv3dBackwardFilter(exec, x, dy, g, dw, db, out_box, accumulate, path, impl::TeamTuning{});
}

}  // namespace halo3d::kernels
