#pragma once
// The loops the naive references share: plain host loops over the cells of a box, written once so
// that each reference states only its formula. Memory must be host-accessible; callers fence
// before.

#include <Kokkos_Core.hpp>

#include <array>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/KernelTypes.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"

namespace halo3d::kernels::reference::detail {

template <class MemorySpace>
constexpr void requireHostSpace() {
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible,
                "reference kernels run plain host loops: use host-accessible tensors");
}

template <class ExecSpace>
constexpr void requireHostMemory() {
  requireHostSpace<typename ExecSpace::memory_space>();
}

// f(d, h, w) for the global cells of `box`, W fastest.
template <class F>
void forEachBoxCell(const Box& box, const F& f) {
  for (index_t d = box.min(0); d < box.max(0); ++d)
    for (index_t h = box.min(1); h < box.max(1); ++h)
      for (index_t w = box.min(2); w < box.max(2); ++w)
        f(d, h, w);
}

// f(n, c, d, h, w) for local samples [0, samples), channels [0, channels) and the global cells of
// `box`.
template <class F>
void forEachCell(index_t samples, index_t channels, const Box& box, const F& f) {
  for (index_t n = 0; n < samples; ++n)
    for (index_t c = 0; c < channels; ++c)
      forEachBoxCell(box, [&](index_t d, index_t h, index_t w) { f(n, c, d, h, w); });
}

// Every cell of `box` in `t`, all samples and channels.
template <class Tensor, class F>
void forEachCell(const Tensor& t, const Box& box, const F& f) {
  forEachCell(t.block().localSamples(), t.block().channels(), box, f);
}

// f(n, global cell) for local samples [0, samples) and the cells of `box`.
template <class F>
void forEachVoxel(index_t samples, const Box& box, const F& f) {
  for (index_t n = 0; n < samples; ++n)
    forEachBoxCell(box, [&](index_t d, index_t h, index_t w) { f(n, Extents3{d, h, w}); });
}

template <class Tensor, class F, class... Cells>
void forEachValueOf(const Tensor& t, const Box& box, const F& f, const Cells&... xc) {
  forEachCell(t, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    f(n, c, d, h, w, xc(n, c, d, h, w)...);
  });
}

// f(c, values...) at every cell of `box` in the first input: c the cell's channel, the values the
// inputs' at that cell.
template <class MemorySpace, class F, class T, class... In>
void forEachValue(const Box& box, const F& f, const HaloTensor<T, MemorySpace>& first,
                  const HaloTensor<In, MemorySpace>&... inputs) {
  requireHostSpace<MemorySpace>();
  forEachValueOf(
      first, box,
      [&](index_t, index_t c, index_t, index_t, index_t, const T& v, const In&... values) {
        f(c, v, values...);
      },
      impl::readCells(first), impl::readCells(inputs)...);
}

// The cell-wise references: y = f(c, inputs...) at every cell of `box`, c the cell's channel and
// the inputs' values at the same cell.
template <class MemorySpace, class T, class F, class... In>
void mapCells(const HaloTensor<T, MemorySpace>& y, const Box& box, const F& f,
              const HaloTensor<In, MemorySpace>&... inputs) {
  requireHostSpace<MemorySpace>();
  const auto yc = impl::writeCells(y);
  forEachValueOf(
      y, box,
      [&](index_t n, index_t c, index_t d, index_t h, index_t w, const In&... values) {
        yc(n, c, d, h, w) = f(c, values...);
      },
      impl::readCells(inputs)...);
}

// Clears the `size` partial sums unless the reference accumulates into them.
template <class Sums>
void startSums(const Sums& sums, index_t size, bool accumulate) {
  if (!accumulate)
    for (index_t k = 0; k < size; ++k)
      sums(k) = 0.0;
}

// Per-channel partial sums over `box`, all samples: sums(k C + c) += f(c, values...)[k] for the K
// sums f returns per cell, C the first input's channels. Clears the first `size` sums first unless
// the reference accumulates.
template <class Sums, class F, class MemorySpace, class T, class... In>
void sumPerChannel(const Sums& sums, index_t size, bool accumulate, const Box& box, const F& f,
                   const HaloTensor<T, MemorySpace>& first,
                   const HaloTensor<In, MemorySpace>&... inputs) {
  startSums(sums, size, accumulate);
  const index_t channels = first.block().channels();
  forEachValue(
      box,
      [&](index_t c, const T& v, const In&... values) {
        const auto terms = f(c, v, values...);
        for (std::size_t k = 0; k < terms.size(); ++k)
          sums(index_t(k) * channels + c) += terms[k];
      },
      first, inputs...);
}

}  // namespace halo3d::kernels::reference::detail
