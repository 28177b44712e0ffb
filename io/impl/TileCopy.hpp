#pragma once
// Moving one sample's owned cells between a host allocation laid out like a HaloTensor (HostTile)
// and a contiguous (C, d, h, w) buffer: what the data store keeps and what travels between ranks.
// Plain loops over W rows, no Kokkos, so that the loader's background thread can run them.

#include <algorithm>

#include "halo3d/io/HyperslabReader.hpp"

namespace halo3d::impl {

// Calls f(row pointer in the allocation, row index) for every W row of the owned cells of
// tile.slot.
template <class T, class F>
void forEachOwnedRow(const HostTile<T>& tile, F&& f) {
  const Shape5& a = tile.allocation;
  const Box& o = tile.local_owned;
  index_t row = 0;
  for (index_t c = 0; c < a[1]; ++c)
    for (index_t d = o.min(0); d < o.max(0); ++d)
      for (index_t h = o.min(1); h < o.max(1); ++h, ++row)
        f(tile.data + (((tile.slot * a[1] + c) * a[2] + d) * a[3] + h) * a[4] + o.min(2), row);
}

// Elements of the owned cells of one slot: C * d * h * w.
template <class T>
std::size_t ownedElements(const HostTile<T>& tile) {
  return std::size_t(tile.allocation[1] * tile.local_owned.size());
}

template <class T>
void copyOwnedOut(const HostTile<T>& tile, T* dst) {
  const index_t w = tile.local_owned.extent(2);
  forEachOwnedRow(tile, [&](const T* row, index_t r) { std::copy(row, row + w, dst + r * w); });
}

template <class T>
void copyOwnedIn(const T* src, const HostTile<T>& tile) {
  const index_t w = tile.local_owned.extent(2);
  forEachOwnedRow(tile, [&](T* row, index_t r) { std::copy(src + r * w, src + (r + 1) * w, row); });
}

// Zeroes every ghost cell of a whole host allocation (all samples), keeping the owned cells: a
// reused batch tensor may hold neighbour values from a halo exchange in its ghosts.
template <class T>
void zeroGhosts(T* data, const Shape5& a, const Box& local_owned) {
  const Box& o = local_owned;
  for (index_t nc = 0; nc < a[0] * a[1]; ++nc)
    for (index_t d = 0; d < a[2]; ++d)
      for (index_t h = 0; h < a[3]; ++h) {
        T* row = data + ((nc * a[2] + d) * a[3] + h) * a[4];
        if (d < o.min(0) || d >= o.max(0) || h < o.min(1) || h >= o.max(1)) {
          std::fill(row, row + a[4], T(0));
        } else {
          std::fill(row, row + o.min(2), T(0));
          std::fill(row + o.max(2), row + a[4], T(0));
        }
      }
}

}  // namespace halo3d::impl
