#pragma once
// The generic bf16 conv3d forward: one thread per output value, bf16 read and converted in
// registers, float sums in (channel, kd, kh, kw) order. The host fallback and the device code.

#include <Kokkos_Core.hpp>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/kernels/KernelTypes.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"

namespace halo3d::kernels::impl {

// `wb`: the weights already rounded to bf16, (O, I, kD, kH, kW).
template <class ExecSpace, class WView, class BView>
void conv3dForwardBf16Generic(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x,
                              const WView& wb, const BView& b, const WindowGeometry& g,
                              const Tensor<bf16, ExecSpace>& y, const Box& out_box) {
  if (out_box.empty()) return;
  const Conv3dIndexing ix = makeIndexing(g, x, y);
  const auto xv = x.view();
  const auto yv = y.view();
  const index_t N = index_t(yv.extent(0)), O = index_t(yv.extent(1));
  const index_t C = index_t(xv.extent(1));
  const index_t d0 = out_box.min(0), h0 = out_box.min(1), w0 = out_box.min(2);
  const index_t ed = out_box.extent(0), eh = out_box.extent(1), ew = out_box.extent(2);
  const bool has_bias = b.extent(0) > 0;
  Kokkos::parallel_for(
      "halo3d::conv3dForwardBf16Generic",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, N * O * ed * eh * ew),
      KOKKOS_LAMBDA(const index_t i) {
        const index_t w = w0 + i % ew, h = h0 + (i / ew) % eh, d = d0 + (i / (ew * eh)) % ed;
        const index_t o = (i / (ew * eh * ed)) % O, n = i / (ew * eh * ed * O);
        float acc = 0.0f;
        for (index_t c = 0; c < C; ++c)
          for (int kd = 0; kd < ix.kernel[0]; ++kd) {
            const index_t xd = ix.inputOf(0, d, kd) + ix.in_shift[0];
            for (int kh = 0; kh < ix.kernel[1]; ++kh) {
              const index_t xh = ix.inputOf(1, h, kh) + ix.in_shift[1];
              for (int kw = 0; kw < ix.kernel[2]; ++kw)
                acc += float(xv(n, c, xd, xh, ix.inputOf(2, w, kw) + ix.in_shift[2])) *
                       float(wb(o, c, kd, kh, kw));
            }
          }
        if (has_bias) acc += b(o);
        yv(n, o, d + ix.out_shift[0], h + ix.out_shift[1], w + ix.out_shift[2]) = bf16(acc);
      });
}

}  // namespace halo3d::kernels::impl
