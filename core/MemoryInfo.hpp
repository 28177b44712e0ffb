#pragma once
// How much memory this process could still allocate, asked of the system rather than guessed: a
// plan that does not fit is refused before its first allocation (with overcommit, a too-large host
// allocation succeeds and the zero fill is then killed by the OOM killer, with no message).

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace halo3d {

// Linux's MemAvailable (/proc/meminfo: free memory plus what the kernel can reclaim), shared by
// every process of the node. 0 when unknown.
std::size_t availableHostBytes();

// Free memory of the device this process uses (cudaMemGetInfo), or availableHostBytes() on a host
// backend.
std::size_t availableDeviceBytes();

// What allocations in MemorySpace could still take.
template <class MemorySpace>
std::size_t availableBytes() {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible)
    return availableHostBytes();
  else
    return availableDeviceBytes();
}

// "1.50 GiB", "12.0 MiB", "512 B".
std::string formatBytes(double bytes);

}  // namespace halo3d
