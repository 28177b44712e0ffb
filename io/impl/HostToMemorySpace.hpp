#pragma once
// Moves a host HaloTensor into another memory space: free for HostSpace, one deep_copy otherwise
// (the allocation, ghosts included, is contiguous in both). Main thread only: it may launch Kokkos
// work. KernelPath::Device takes the copy for HostSpace too: what a device build runs, which the
// tests run on the host (core/KernelPath.hpp).

#include <Kokkos_Core.hpp>

#include <type_traits>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/KernelPath.hpp"

namespace halo3d::impl {

template <class M, class T>
HaloTensor<T, M> toMemorySpace(HaloTensor<T, Kokkos::HostSpace>&& host,
                               KernelPath path = KernelPath::Fastest) {
  if constexpr (std::is_same<M, Kokkos::HostSpace>::value) {
    if (path == KernelPath::Fastest) return std::move(host);
  }
  if (!host.isAllocated()) return HaloTensor<T, M>();
  HaloTensor<T, M> out(host.label(), host.block());
  Kokkos::deep_copy(out.view(), host.view());
  return out;
}

}  // namespace halo3d::impl
