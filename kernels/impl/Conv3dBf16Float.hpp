#pragma once
// The host route of the bf16 convolutions where no bf16 engine applies (strides, dilations,
// transposed convolutions): the bf16 operands widened to float scratch tensors (exact), the weights
// rounded to bf16 and widened back, the float host kernels run, and the destination box rounded to
// bf16. The same products (bf16 activation x bf16 weight, exact in float) summed in float as the
// generic kernels, in the float kernels' order, at the float kernels' speed (the generic
// one-thread-per-value kernels read channels a plane apart and ran 30-100x slower on the host);
// the price is a float copy of the operands for the duration of the call.

#include <Kokkos_Core.hpp>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/Types.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels::impl {

template <class MemorySpace>
using FloatTensorView = Kokkos::View<float*****, Kokkos::LayoutRight, MemorySpace>;

// t's values (the whole allocation) as float, in a View of t's allocation extents. Not
// value-initialised first: zeroing and then overwriting a fresh scratch cost more than the float
// kernels themselves on 64^3 volumes.
template <class ExecSpace, class MemorySpace>
FloatTensorView<MemorySpace> widenToFloatView(const ExecSpace& exec,
                                              const HaloTensor<bf16, MemorySpace>& t) {
  const auto& v = t.view();
  FloatTensorView<MemorySpace> f(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, t.label() + "(float)"), v.extent(0),
      v.extent(1), v.extent(2), v.extent(3), v.extent(4));
  const bf16* src = v.data();
  float* dst = f.data();
  Kokkos::parallel_for(
      "halo3d::widenToFloat",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, index_t(v.span())),
      KOKKOS_LAMBDA(const index_t i) { dst[i] = float(src[i]); });
  return f;
}

// An uninitialised float View of t's allocation extents: a destination whose box the float kernel
// assigns and narrowBoxToBf16 reads.
template <class MemorySpace>
FloatTensorView<MemorySpace> floatScratchLike(const HaloTensor<bf16, MemorySpace>& t) {
  const auto& v = t.view();
  return FloatTensorView<MemorySpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, t.label() + "(float)"), v.extent(0),
      v.extent(1), v.extent(2), v.extent(3), v.extent(4));
}

// A float tensor on t's block holding t's values (the whole allocation), for the kernels that take
// tensors.
template <class ExecSpace, class MemorySpace>
HaloTensor<float, MemorySpace> widenToFloat(const ExecSpace& exec,
                                            const HaloTensor<bf16, MemorySpace>& t) {
  HaloTensor<float, MemorySpace> f(t.label() + "(float)", t.block());
  const bf16* src = t.view().data();
  float* dst = f.view().data();
  Kokkos::parallel_for(
      "halo3d::widenToFloat",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, index_t(t.view().span())),
      KOKKOS_LAMBDA(const index_t i) { dst[i] = float(src[i]); });
  return f;
}

// float(bf16(w)) for every weight: the weights the bf16 products use, as float.
template <class ExecSpace, class WView>
Kokkos::View<float*****, Kokkos::LayoutRight, typename ExecSpace::memory_space> bf16RoundedWeights(
    const ExecSpace& exec, const WView& w) {
  Kokkos::View<float*****, Kokkos::LayoutRight, typename ExecSpace::memory_space> r(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "halo3d::bf16 rounded weights"), w.extent(0),
      w.extent(1), w.extent(2), w.extent(3), w.extent(4));
  const float* src = w.data();
  float* dst = r.data();
  Kokkos::parallel_for(
      "halo3d::bf16RoundedWeights",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, index_t(w.size())),
      KOKKOS_LAMBDA(const index_t i) { dst[i] = roundToBf16(src[i]); });
  return r;
}

// dst = bf16(src) on the global cells `box`, every sample and channel; `src` is a float View laid
// out as dst's allocation.
template <class ExecSpace, class SrcView, class MemorySpace>
void narrowBoxToBf16(const ExecSpace& exec, const SrcView& src,
                     const HaloTensor<bf16, MemorySpace>& dst, const Box& box) {
  if (box.empty()) return;
  const auto sv = src;
  const auto dv = dst.view();
  const auto shift = localShift(dst);
  const index_t d0 = box.min(0) + shift[0], h0 = box.min(1) + shift[1], w0 = box.min(2) + shift[2];
  const index_t ed = box.extent(0), eh = box.extent(1), ew = box.extent(2);
  const index_t C = index_t(dv.extent(1));
  Kokkos::parallel_for(
      "halo3d::narrowBoxToBf16",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(
          exec, 0, index_t(dv.extent(0)) * C * ed * eh),
      KOKKOS_LAMBDA(const index_t e) {
        const index_t h = h0 + e % eh, d = d0 + (e / eh) % ed, c = (e / (eh * ed)) % C,
                      n = e / (eh * ed * C);
        for (index_t w = w0; w < w0 + ew; ++w)
          dv(n, c, d, h, w) = bf16(sv(n, c, d, h, w));
      });
}

}  // namespace halo3d::kernels::impl
