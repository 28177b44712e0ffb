#pragma once
// Pack and unpack kernels of the halo exchange: a box of a (samples, C, D, H, W) view to or from a linear
// buffer in (n, c, d, h, w) order, straight from an MDRangePolicy (no per-element steering table).

#include <Kokkos_Core.hpp>

#include "core/IndexSpace.hpp"

namespace halo3d::impl {

// Copies `region` (all samples and channels) of `v` into buf[offset, offset + size).
template <class ExecSpace, class View5, class Buffer>
void packRegion(const ExecSpace& exec, const View5& v, const Box& region, const Buffer& buf,
                std::size_t offset) {
  if (region.empty()) return;
  const index_t C = index_t(v.extent(1)), NC = index_t(v.extent(0)) * C;
  const index_t d0 = region.min(0), h0 = region.min(1), w0 = region.min(2);
  const index_t ed = region.extent(0), eh = region.extent(1), ew = region.extent(2);
  auto* out = buf.data() + offset;
  Kokkos::parallel_for(
      "halo3d::haloPack",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>, Kokkos::IndexType<index_t>>(
          exec, {0, 0, 0, 0}, {NC, ed, eh, ew}),
      KOKKOS_LAMBDA(const index_t nc, const index_t d, const index_t h, const index_t w) {
        out[((nc * ed + d) * eh + h) * ew + w] = v(nc / C, nc % C, d0 + d, h0 + h, w0 + w);
      });
}

// Writes buf[offset, offset + size) into `region` of `v`: assigns, or adds when `accumulate`.
template <class ExecSpace, class View5, class Buffer>
void unpackRegion(const ExecSpace& exec, const View5& v, const Box& region, const Buffer& buf,
                  std::size_t offset, bool accumulate) {
  if (region.empty()) return;
  const index_t C = index_t(v.extent(1)), NC = index_t(v.extent(0)) * C;
  const index_t d0 = region.min(0), h0 = region.min(1), w0 = region.min(2);
  const index_t ed = region.extent(0), eh = region.extent(1), ew = region.extent(2);
  const auto* in = buf.data() + offset;
  using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>, Kokkos::IndexType<index_t>>;
  const Policy policy(exec, {0, 0, 0, 0}, {NC, ed, eh, ew});
  if (accumulate) {
    Kokkos::parallel_for(
        "halo3d::haloUnpackAdd", policy,
        KOKKOS_LAMBDA(const index_t nc, const index_t d, const index_t h, const index_t w) {
          v(nc / C, nc % C, d0 + d, h0 + h, w0 + w) += in[((nc * ed + d) * eh + h) * ew + w];
        });
  } else {
    Kokkos::parallel_for(
        "halo3d::haloUnpack", policy,
        KOKKOS_LAMBDA(const index_t nc, const index_t d, const index_t h, const index_t w) {
          v(nc / C, nc % C, d0 + d, h0 + h, w0 + w) = in[((nc * ed + d) * eh + h) * ew + w];
        });
  }
}

// Sets `region` of `v` to zero.
template <class ExecSpace, class View5>
void zeroRegion(const ExecSpace& exec, const View5& v, const Box& region) {
  if (region.empty()) return;
  const index_t C = index_t(v.extent(1)), NC = index_t(v.extent(0)) * C;
  const index_t d0 = region.min(0), h0 = region.min(1), w0 = region.min(2);
  using value_type = typename View5::non_const_value_type;
  Kokkos::parallel_for(
      "halo3d::haloZero",
      Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<4>, Kokkos::IndexType<index_t>>(
          exec, {0, 0, 0, 0}, {NC, region.extent(0), region.extent(1), region.extent(2)}),
      KOKKOS_LAMBDA(const index_t nc, const index_t d, const index_t h, const index_t w) {
        v(nc / C, nc % C, d0 + d, h0 + h, w0 + w) = value_type(0);
      });
}

}  // namespace halo3d::impl
