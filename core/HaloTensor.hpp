#pragma once
// HaloTensor<T, MemorySpace>: one rank's block of a global (N, C, D, H, W) tensor with its ghost
// cells in the same allocation. The View is (samples, C, D + lo + hi, H + lo + hi, W + lo + hi),
// LayoutRight, so the W axis is contiguous. Ghost cells at a physical boundary are zero, and that
// zero *is* the zero padding of the layer that reads them.

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/TensorBlock.hpp"

namespace halo3d {

template <class T, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class HaloTensor {
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "HaloTensor: MemorySpace must be a Kokkos memory space");
  static_assert(std::is_arithmetic<T>::value || std::is_same<T, bf16>::value,
                "HaloTensor: T must be an arithmetic type or bf16");

 public:
  using value_type = T;
  using memory_space = MemorySpace;
  using view_type = Kokkos::View<T*****, Kokkos::LayoutRight, MemorySpace>;
  using owned_view_type = decltype(Kokkos::subview(
      std::declval<view_type>(), Kokkos::ALL, Kokkos::ALL, Kokkos::pair<index_t, index_t>(),
      Kokkos::pair<index_t, index_t>(), Kokkos::pair<index_t, index_t>()));

  HaloTensor() = default;

  // Allocates the block's cells, ghosts included, zero-initialised.
  HaloTensor(const std::string& label, const TensorBlock& block) : _block(block) {
    const Shape5 e = block.allocationExtents();
    _view = view_type(label, e[0], e[1], e[2], e[3], e[4]);
  }

  const TensorBlock& block() const { return _block; }
  const view_type& view() const { return _view; }
  std::string label() const { return _view.label(); }
  bool isAllocated() const { return _view.data() != nullptr; }

  // The owned cells, without ghosts: (samples, C, D, H, W).
  owned_view_type owned() const {
    const Box b = _block.localOwned();
    return Kokkos::subview(_view, Kokkos::ALL, Kokkos::ALL, rangeOf(b, 0), rangeOf(b, 1),
                           rangeOf(b, 2));
  }

  // Owned cells in local (view) indices; and the whole allocation.
  Box localOwned() const { return _block.localOwned(); }
  Box localAll() const { return _block.localAll(); }
  Extents3 toLocal(const Extents3& global) const { return _block.toLocal(global); }
  Extents3 toGlobal(const Extents3& local) const { return _block.toGlobal(local); }

 private:
  TensorBlock _block;
  view_type _view;
};

}  // namespace halo3d
