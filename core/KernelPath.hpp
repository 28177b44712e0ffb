#pragma once
// Which code a kernel or data-movement step runs, and the one "runs on the host" trait.
//
// Most kernels have two implementations behind one dispatch: host code (whole W rows, SIMD
// registers, per-thread lanes) for execution spaces that run on the host, and device code (one
// thread per cell, teams with scratch memory) for the others. KernelPath::Fastest, the default,
// takes the host code on a host execution space and the device code elsewhere. KernelPath::Device
// takes the device code on *any* execution space: it is exactly what a CUDA build runs, and the
// test suite runs it on the OpenMP backend so that no device code goes untested on a machine
// without a GPU (docs/DEVELOPERS.md, "Device paths"). The same choice is spelled the same way by
// the halo pack kernels (comm/), the gradient buckets (nn/) and the loader's copy to device
// memory (io/).
//
// A dispatch reads:
//
//   if constexpr (kRunsOnHost<ExecSpace>) {
//     if (path == KernelPath::Fastest) return hostCode(exec, ...);
//   }
//   deviceCode(exec, ...);
//
// so that a device compilation never sees the host code.

#include <Kokkos_Core.hpp>

namespace halo3d {

enum class KernelPath {
  Fastest,  // host code on host execution spaces, device code elsewhere
  Device,   // device code on every execution space (tests and benchmarks of the device code)
};

// True for execution spaces that run on the host (Serial, OpenMP, Threads): the ones that get the
// host code.
template <class ExecSpace>
inline constexpr bool kRunsOnHost =
    Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

inline constexpr const char* kernelPathName(KernelPath path) {
  return path == KernelPath::Fastest ? "Fastest" : "Device";
}

}  // namespace halo3d
