#pragma once
// The team size of the device code's team kernels. Kokkos::AUTO (team_size 0) is what the kernels
// use; a fixed size lets the tests run a team kernel on the host backend with one thread per team
// and with several, so that its barriers and team reductions are exercised.

#include <Kokkos_Core.hpp>

#include "halo3d/core/Types.hpp"

namespace halo3d::kernels::impl {

struct TeamTuning {
  int team_size = 0;  // 0: Kokkos::AUTO
};

template <class ExecSpace>
Kokkos::TeamPolicy<ExecSpace> teamPolicy(const ExecSpace& exec, index_t league,
                                         const TeamTuning& tuning) {
  return tuning.team_size > 0 ? Kokkos::TeamPolicy<ExecSpace>(exec, league, tuning.team_size)
                              : Kokkos::TeamPolicy<ExecSpace>(exec, league, Kokkos::AUTO);
}

}  // namespace halo3d::kernels::impl
