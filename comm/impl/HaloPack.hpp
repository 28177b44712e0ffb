#pragma once
// Pack and unpack kernels of the halo exchange: a box of a (samples, C, D, H, W) view to or from a
// linear buffer in (n, c, d, h, w) order, straight from the box's index space (no per-element
// steering table).
//
// In the host code (KernelPath::Fastest on a host execution space, core/KernelPath.hpp) one work
// item is an (n, c, d) plane of the box, walked by plain h and w loops: no index arithmetic per
// element (a W face has one-element rows, where a per-row decode costs 30x the copy), and the w
// loop vectorises. In the device code one work item is one element, so neighbouring threads touch
// neighbouring addresses.
//
// packRegionStreaming is packRegion for a buffer that another core reads next (the shared arena):
// in the host code it writes whole cache lines with streaming stores (impl/StreamingStore.hpp).

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "halo3d/comm/impl/StreamingStore.hpp"
#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/core/KernelPath.hpp"

namespace halo3d::impl {

// Applies op(element_of_view, element_of_buffer) to every cell of `region` (all samples and
// channels) of `v`, pairing cell (n, c, d, h, w) with buffer element ((((n C + c) ed + d) eh + h)
// ew + w).
template <class ExecSpace, class View5, class Op>
void forEachRegionCell(const char* label, const ExecSpace& exec, const View5& v, const Box& region,
                       const Op& op, KernelPath path) {
  if (region.empty()) return;
  const index_t C = index_t(v.extent(1)), NC = index_t(v.extent(0)) * C;
  const index_t d0 = region.min(0), h0 = region.min(1), w0 = region.min(2);
  const index_t ed = region.extent(0), eh = region.extent(1), ew = region.extent(2);
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
      const index_t row_stride = index_t(v.stride(3));
      Kokkos::parallel_for(
          label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, NC * ed),
          KOKKOS_LAMBDA(const index_t plane) {
            const index_t d = plane % ed, nc = plane / ed;
            auto* row = &v(nc / C, nc % C, d0 + d, h0, w0);
            index_t i = plane * eh * ew;
            for (index_t h = 0; h < eh; ++h, row += row_stride)
              for (index_t w = 0; w < ew; ++w, ++i)
                op(row[w], i);
          });
      return;
    }
  }
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, NC * ed * eh * ew),
      KOKKOS_LAMBDA(const index_t i) {
        const index_t w = i % ew, row = i / ew;
        const index_t h = row % eh, d = (row / eh) % ed, nc = row / (eh * ed);
        op(v(nc / C, nc % C, d0 + d, h0 + h, w0 + w), i);
      });
}

// Copies `region` of `v` into buf[offset, offset + size).
template <class ExecSpace, class View5, class Buffer>
void packRegion(const ExecSpace& exec, const View5& v, const Box& region, const Buffer& buf,
                std::size_t offset, KernelPath path = KernelPath::Fastest) {
  auto* out = buf.data() + offset;
  using T = typename View5::non_const_value_type;
  forEachRegionCell(
      "halo3d::haloPack", exec, v, region,
      KOKKOS_LAMBDA(const T& cell, index_t i) { out[i] = cell; }, path);
}

// packRegion, the buffer's whole 64-byte lines written by streaming stores in the host code (the
// device code, and KernelPath::Device, are packRegion's). The bytes are those of packRegion; the
// stores are fenced before the kernel completes.
template <class ExecSpace, class View5, class Buffer>
void packRegionStreaming(const ExecSpace& exec, const View5& v, const Box& region,
                         const Buffer& buf, std::size_t offset,
                         KernelPath path = KernelPath::Fastest) {
  using T = typename View5::non_const_value_type;
  if constexpr (kRunsOnHost<ExecSpace> && kStreamLine % sizeof(T) == 0) {
    if (path == KernelPath::Fastest) {
      if (region.empty()) return;
      T* const out = buf.data() + offset;
      const index_t C = index_t(v.extent(1)), NC = index_t(v.extent(0)) * C;
      const index_t d0 = region.min(0), h0 = region.min(1), w0 = region.min(2);
      const index_t ed = region.extent(0), eh = region.extent(1), ew = region.extent(2);
      const index_t row_stride = index_t(v.stride(3));
      constexpr index_t kLine = index_t(kStreamLine / sizeof(T));
      // One (n, c, d) plane per work item, as in forEachRegionCell; its part of the buffer is
      // contiguous. Lines shared with a neighbouring row (rows of a line or more) or plane take
      // plain stores; every other line is streamed, straight from the row when it lies in one row,
      // else (rows shorter than a line) gathered from the rows it spans.
      // A fence per plane cost a fifth of the pack (it waits for the line writes to drain): one
      // work item per thread, a range of planes each, fenced once.
      const index_t planes = NC * ed;
      const index_t items = std::max<index_t>(1, std::min<index_t>(planes, exec.concurrency()));
      const auto pack_plane = [=](const index_t plane) {
        const index_t d = plane % ed, nc = plane / ed;
        const T* const first_row = &v(nc / C, nc % C, d0 + d, h0, w0);
        T* const dst = out + plane * eh * ew;
        const auto to_line = [](const T* p) {
          const std::uintptr_t misalign = reinterpret_cast<std::uintptr_t>(p) % kStreamLine;
          return index_t((kStreamLine - misalign) % kStreamLine / sizeof(T));
        };
        if (ew >= kLine) {
          for (index_t h = 0; h < eh; ++h) {
            const T* const src = first_row + h * row_stride;
            T* const row = dst + h * ew;
            const index_t head = to_line(row);
            index_t x = 0;
            for (; x < head; ++x)
              row[x] = src[x];
            for (; x + kLine <= ew; x += kLine)
              streamLine(row + x, src + x);
            for (; x < ew; ++x)
              row[x] = src[x];
          }
          return;
        }
        const index_t n = eh * ew;
        const T* src = first_row;
        index_t h = 0, w = 0;
        const auto advance = [&](index_t k) {
          w += k;
          src += k;
          if (w == ew) {
            w = 0;
            if (++h < eh) src = first_row + h * row_stride;
          }
        };
        const index_t head = std::min(n, to_line(dst));
        index_t i = 0;
        for (; i < head; ++i, advance(1))
          dst[i] = *src;
        for (; i + kLine <= n; i += kLine) {
          alignas(kStreamLine) T line[kLine];
          for (index_t k = 0; k < kLine; ++k, advance(1))
            line[k] = *src;
          streamLine(dst + i, line);
        }
        for (; i < n; ++i, advance(1))
          dst[i] = *src;
      };
      Kokkos::parallel_for(
          "halo3d::haloPackStreaming",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, items),
          [=](const index_t item) {
            for (index_t p = planes * item / items; p < planes * (item + 1) / items; ++p)
              pack_plane(p);
            streamFence();
          });
      return;
    }
  }
  packRegion(exec, v, region, buf, offset, path);
}

// Writes buf[offset, offset + size) into `region` of `v`: assigns, or adds when `accumulate`.
template <class ExecSpace, class View5, class Buffer>
void unpackRegion(const ExecSpace& exec, const View5& v, const Box& region, const Buffer& buf,
                  std::size_t offset, bool accumulate, KernelPath path = KernelPath::Fastest) {
  const auto* in = buf.data() + offset;
  using T = typename View5::non_const_value_type;
  if (accumulate)
    forEachRegionCell(
        "halo3d::haloUnpackAdd", exec, v, region,
        KOKKOS_LAMBDA(T & cell, index_t i) { cell += in[i]; }, path);
  else
    forEachRegionCell(
        "halo3d::haloUnpack", exec, v, region, KOKKOS_LAMBDA(T & cell, index_t i) { cell = in[i]; },
        path);
}

// Sets `region` of `v` to zero.
template <class ExecSpace, class View5>
void zeroRegion(const ExecSpace& exec, const View5& v, const Box& region,
                KernelPath path = KernelPath::Fastest) {
  using T = typename View5::non_const_value_type;
  forEachRegionCell(
      "halo3d::haloZero", exec, v, region, KOKKOS_LAMBDA(T & cell, index_t) { cell = T(0); }, path);
}

}  // namespace halo3d::impl
