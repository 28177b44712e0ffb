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
#include "halo3d/kernels/impl/Conv3dSimd.hpp"
#include "halo3d/kernels/impl/Conv3dTeam.hpp"
#include "halo3d/kernels/impl/TeamTuning.hpp"

namespace halo3d::kernels::impl {

template <class ExecSpace, class T>
void conv3dForward(const ExecSpace& exec, const HaloTensor<T, typename ExecSpace::memory_space>& x,
                   const Conv3dWeights<T, typename ExecSpace::memory_space>& w,
                   const Conv3dBias<T, typename ExecSpace::memory_space>& b,
                   const WindowGeometry& g,
                   const HaloTensor<T, typename ExecSpace::memory_space>& y, const Box& out_box,
                   KernelPath path, const TeamTuning& tuning) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "conv3dForward: exec must be an execution space");
  checkForward(x, w, b, g, y, out_box);
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
#if HALO3D_CONV3D_AVX512
      if constexpr (kHostSimd<T>) return conv3dForwardHost(exec, x, w, b, g, y, out_box);
#endif
      return conv3dForwardGeneric(exec, x, w, b, g, y, out_box);
    }
  }
  conv3dForwardTeam(exec, x, w, b, g, y, out_box, tuning);
}

template <class ExecSpace, class T>
void conv3dBackwardData(const ExecSpace& exec,
                        const HaloTensor<T, typename ExecSpace::memory_space>& dy,
                        const Conv3dWeights<T, typename ExecSpace::memory_space>& w,
                        const WindowGeometry& g,
                        const HaloTensor<T, typename ExecSpace::memory_space>& dx,
                        const Box& dx_box, const Box& dy_box, KernelPath path,
                        const TeamTuning& tuning) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "conv3dBackwardData: exec must be an execution space");
  checkBackwardData(dy, w, g, dx, dx_box, dy_box);
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
#if HALO3D_CONV3D_AVX512
      if constexpr (kHostSimd<T>) {
        if (hostBackwardDataApplies(g))
          return conv3dBackwardDataHost(exec, dy, w, g, dx, dx_box, dy_box);
      }
#endif
      return conv3dBackwardDataGeneric(exec, dy, w, g, dx, dx_box, dy_box);
    }
  }
  conv3dBackwardDataTeam(exec, dy, w, g, dx, dx_box, dy_box, tuning);
}

template <class ExecSpace, class T>
void conv3dBackwardFilter(const ExecSpace& exec,
                          const HaloTensor<T, typename ExecSpace::memory_space>& x,
                          const HaloTensor<T, typename ExecSpace::memory_space>& dy,
                          const WindowGeometry& g,
                          const Conv3dWeightsGrad<T, typename ExecSpace::memory_space>& dw,
                          const Conv3dBiasGrad<T, typename ExecSpace::memory_space>& db,
                          const Box& out_box, bool accumulate, KernelPath path,
                          const TeamTuning& tuning) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "conv3dBackwardFilter: exec must be an execution space");
  checkBackwardFilter(x, dy, g, dw, db, out_box);
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
#if HALO3D_CONV3D_AVX512
      if constexpr (kHostSimd<T>)
        return conv3dBackwardFilterHost(exec, x, dy, g, dw, db, out_box, accumulate);
#endif
      return conv3dBackwardFilterGeneric(exec, x, dy, g, dw, db, out_box, accumulate);
    }
  }
  conv3dBackwardFilterTeam(exec, x, dy, g, dw, db, out_box, accumulate, tuning);
}

}  // namespace halo3d::kernels::impl

namespace halo3d::kernels {

template <class ExecSpace, class T>
void conv3dForward(const ExecSpace& exec, const HaloTensor<T, typename ExecSpace::memory_space>& x,
                   const Conv3dWeights<T, typename ExecSpace::memory_space>& w,
                   const Conv3dBias<T, typename ExecSpace::memory_space>& b,
                   const WindowGeometry& g,
                   const HaloTensor<T, typename ExecSpace::memory_space>& y, const Box& out_box,
                   KernelPath path) {
  impl::conv3dForward(exec, x, w, b, g, y, out_box, path, impl::TeamTuning{});
}

template <class ExecSpace, class T>
void conv3dBackwardData(const ExecSpace& exec,
                        const HaloTensor<T, typename ExecSpace::memory_space>& dy,
                        const Conv3dWeights<T, typename ExecSpace::memory_space>& w,
                        const WindowGeometry& g,
                        const HaloTensor<T, typename ExecSpace::memory_space>& dx,
                        const Box& dx_box, const Box& dy_box, KernelPath path) {
  impl::conv3dBackwardData(exec, dy, w, g, dx, dx_box, dy_box, path, impl::TeamTuning{});
}

template <class ExecSpace, class T>
void conv3dBackwardFilter(const ExecSpace& exec,
                          const HaloTensor<T, typename ExecSpace::memory_space>& x,
                          const HaloTensor<T, typename ExecSpace::memory_space>& dy,
                          const WindowGeometry& g,
                          const Conv3dWeightsGrad<T, typename ExecSpace::memory_space>& dw,
                          const Conv3dBiasGrad<T, typename ExecSpace::memory_space>& db,
                          const Box& out_box, bool accumulate, KernelPath path) {
  impl::conv3dBackwardFilter(exec, x, dy, g, dw, db, out_box, accumulate, path, impl::TeamTuning{});
}

}  // namespace halo3d::kernels
