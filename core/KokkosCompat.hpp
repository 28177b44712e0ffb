#pragma once
// The few spots where Kokkos 3.4 and 4.x spell things differently. Everything else uses the API
// common to both, and nothing deprecated.

#include <Kokkos_Core.hpp>

#include <string>

namespace halo3d {

// A fence on `exec`; named where Kokkos supports it (>= 3.6), so profiling tools show why it waits.
template <class ExecSpace>
void fence(const ExecSpace& exec, const char* why) {
#if KOKKOS_VERSION >= 30600
  exec.fence(std::string("halo3d: ") + why);
#else
  (void)why;
  exec.fence();
#endif
}

// A fence on the default execution space instance, named as above.
inline void fence(const char* why) {
  fence(Kokkos::DefaultExecutionSpace(), why);
}

namespace math {
#if KOKKOS_VERSION >= 30700
using Kokkos::exp;
using Kokkos::fabs;
using Kokkos::log;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::exp;
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::log;
using Kokkos::Experimental::sqrt;
#endif
}  // namespace math

}  // namespace halo3d
