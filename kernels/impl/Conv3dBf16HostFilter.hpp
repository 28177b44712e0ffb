#pragma once
// The host bf16 conv3d backward-filter engine (AVX512-BF16, stride and dilation 1):
//   dw(o, i, tap) = sum over cells c of dy(o, c) x(i, c + tap - p)
// is a reduction over cells, so vdpbf16ps pairs two neighbouring W cells and the 16 lanes hold 16
// cell pairs: lane l of the accumulator for (o, i) sums dy(o, 2l) x(i, 2l + s) + dy(o, 2l + 1)
// x(i, 2l + 1 + s). Per sample:
//   - dy over the box as cell pairs, [o][d][h][pair] ("dyp", channels padded to the tile);
//   - x as cell pairs twice, starting at even cells and at odd cells ([i][D][H][pair] of the
//     allocation), so that any tap's shift s reads aligned pairs from one of them;
//   - a register tile is 4 output x 6 input channels of one tap (24 float accumulators); per 16
//     pairs it loads 4 dy and 6 x vectors for 24 vdpbf16ps, no broadcasts, so any channel count
//     fills the tile (channels are padded with zero rows).
// The box is walked in chunks of up to kFilterRows rows of one plane; after each chunk a tile adds
// its accumulators into its own float partial (in memory), and at the end each dw entry is the
// sum of its 16 lanes, in lane order, added to dw. Every order is fixed by the problem, not by the
// thread count. Float error per entry: at most 2 kFilterRows ceil(W / 32) 16 products per lane
// and chunk, then one addition per chunk, then 15 for the lanes.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/KernelTypes.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Host.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"

namespace halo3d::kernels::impl {

#if HALO3D_CONV3D_AVX512BF16

inline constexpr int kFilterOut = 4;    // output channels per tile
inline constexpr int kFilterIn = 6;     // input channels per tile
inline constexpr int kFilterRows = 16;  // rows of one plane per chunk

// One tile over one chunk: `rows` rows of `pairs` cell pairs. dy rows of the tile's 4 output
// channels start at `dy` (channel stride dy_c, row stride dy_r), x rows of its 6 input channels at
// `x` (channel stride x_c, row stride x_r); acc is the tile's partial, 24 x 16 floats.
inline void bf16FilterTile(const std::uint32_t* dy, index_t dy_c, index_t dy_r,
                           const std::uint32_t* x, index_t x_c, index_t x_r, int rows,
                           index_t pairs, float* part) {
  __m512 acc[kFilterOut][kFilterIn];
#pragma GCC unroll 4
  for (int j = 0; j < kFilterOut; ++j)
#pragma GCC unroll 6
    for (int k = 0; k < kFilterIn; ++k)
      acc[j][k] = _mm512_setzero_ps();
  for (int r = 0; r < rows; ++r) {
    const std::uint32_t* dr = dy + r * dy_r;
    const std::uint32_t* xr = x + r * x_r;
    for (index_t v = 0; v < pairs; v += kBf16Lanes) {
      const index_t left = pairs - v;
      const __mmask16 m =
          left >= kBf16Lanes ? __mmask16(0xffff) : __mmask16((1u << unsigned(left)) - 1u);
      __m512i g[kFilterOut];
#pragma GCC unroll 4
      for (int j = 0; j < kFilterOut; ++j)
        g[j] = _mm512_maskz_loadu_epi32(m, dr + j * dy_c + v);
#pragma GCC unroll 6
      for (int k = 0; k < kFilterIn; ++k) {
        const __m512i xv = _mm512_maskz_loadu_epi32(m, xr + k * x_c + v);
#pragma GCC unroll 4
        for (int j = 0; j < kFilterOut; ++j)
          acc[j][k] = _mm512_dpbf16_ps(acc[j][k], (__m512bh)xv, (__m512bh)g[j]);
      }
    }
  }
  for (int j = 0; j < kFilterOut; ++j)
    for (int k = 0; k < kFilterIn; ++k) {
      float* p = part + (j * kFilterIn + k) * kBf16Lanes;
      _mm512_storeu_ps(p, _mm512_add_ps(_mm512_loadu_ps(p), acc[j][k]));
    }
}

// dw (+)= the weight gradient over out_box (bias gradient: the caller's). Callers have run the
// shape checks.
template <class ExecSpace, class DwView>
void conv3dBackwardFilterBf16Host(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x,
                                  const Tensor<bf16, ExecSpace>& dy, const WindowGeometry& g,
                                  const DwView& dw, const Box& out_box, bool accumulate) {
  const Conv3dIndexing ix = makeIndexing(g, x, dy);
  const auto xv = x.view();
  const auto dyv = dy.view();
  const index_t N = index_t(dyv.extent(0)), O = index_t(dyv.extent(1)), I = index_t(xv.extent(1));
  const index_t Da = index_t(xv.extent(2)), Ha = index_t(xv.extent(3)), Wa = index_t(xv.extent(4));
  const int kd = g.kernel[0], kh = g.kernel[1], kw = g.kernel[2];
  const index_t taps = index_t(kd) * kh * kw;
  const index_t Op = (O + kFilterOut - 1) / kFilterOut * kFilterOut;
  const index_t Ip = (I + kFilterIn - 1) / kFilterIn * kFilterIn;
  const index_t otiles = Op / kFilterOut, itiles = Ip / kFilterIn;
  const index_t items = taps * otiles * itiles;
  constexpr index_t kPart = kFilterOut * kFilterIn * kBf16Lanes;
  std::vector<float> part(std::size_t(items * kPart), 0.0f);
  const bool empty = out_box.empty() || N == 0;
  if (!empty) {
    const index_t ed = out_box.extent(0), eh = out_box.extent(1), ew = out_box.extent(2);
    const index_t d0 = out_box.min(0), h0 = out_box.min(1), w0 = out_box.min(2);
    const index_t P = (ew + 1) / 2, M = (Wa + 1) / 2;
    // Zero-initialised: the padding channels stay zero.
    std::vector<std::uint32_t> dyp(std::size_t(Op * ed * eh * P), 0u);
    std::vector<std::uint32_t> xe(std::size_t(Ip * Da * Ha * M), 0u), xo(xe.size(), 0u);
    std::uint32_t* dypd = dyp.data();
    std::uint32_t* xed = xe.data();
    std::uint32_t* xod = xo.data();
    float* partd = part.data();
    const index_t dy_c = ed * eh * P, x_c = Da * Ha * M;
    const index_t h_chunks = (eh + kFilterRows - 1) / kFilterRows;
    using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>;
    for (index_t n = 0; n < N; ++n) {
      Kokkos::parallel_for(
          "halo3d::conv3dBf16FilterPairsDy", Policy(exec, 0, O * ed * eh),
          KOKKOS_LAMBDA(const index_t e) {
            const index_t h = e % eh, d = (e / eh) % ed, o = e / (eh * ed);
            const std::uint16_t* src =
                &dyv(n, o, d0 + d + ix.out_shift[0], h0 + h + ix.out_shift[1], w0 + ix.out_shift[2])
                     .bits;
            std::uint32_t* out = dypd + e * P;
            for (index_t j = 0; j < P; ++j)
              out[j] = std::uint32_t(src[2 * j]) |
                       (2 * j + 1 < ew ? std::uint32_t(src[2 * j + 1]) << 16 : 0u);
          });
      Kokkos::parallel_for(
          "halo3d::conv3dBf16FilterPairsX", Policy(exec, 0, I * Da * Ha),
          KOKKOS_LAMBDA(const index_t e) {
            const index_t h = e % Ha, d = (e / Ha) % Da, i = e / (Ha * Da);
            const std::uint16_t* src = &xv(n, i, d, h, 0).bits;
            const auto at = [&](index_t c) { return c < Wa ? std::uint32_t(src[c]) : 0u; };
            std::uint32_t* even = xed + e * M;
            std::uint32_t* odd = xod + e * M;
            for (index_t m = 0; m < M; ++m) {
              even[m] = at(2 * m) | (at(2 * m + 1) << 16);
              odd[m] = at(2 * m + 1) | (at(2 * m + 2) << 16);
            }
          });
      for (index_t d = 0; d < ed; ++d)
        for (index_t hc = 0; hc < h_chunks; ++hc) {
          const index_t hb = hc * kFilterRows;
          const int rows = int(std::min<index_t>(kFilterRows, eh - hb));
          Kokkos::parallel_for(
              "halo3d::conv3dBf16FilterTiles", Policy(exec, 0, items),
              KOKKOS_LAMBDA(const index_t item) {
                const index_t it = item % itiles, ot = (item / itiles) % otiles;
                const index_t t = item / (itiles * otiles);
                const int a = int(t / (kh * kw)), b = int((t / kw) % kh), c = int(t % kw);
                const index_t xd = ix.inputOf(0, d0 + d, a) + ix.in_shift[0];
                const index_t xh = ix.inputOf(1, h0 + hb, b) + ix.in_shift[1];
                const index_t s = ix.inputOf(2, w0, c) + ix.in_shift[2];
                const std::uint32_t* xs =
                    ((s & 1) ? xod : xed) + ((it * kFilterIn * Da + xd) * Ha + xh) * M + (s >> 1);
                const std::uint32_t* ds = dypd + ot * kFilterOut * dy_c + (d * eh + hb) * P;
                bf16FilterTile(ds, dy_c, P, xs, x_c, M, rows, P, partd + item * kPart);
              });
        }
      fence(exec, "bf16 filter tiles done");  // the pair buffers are refilled for the next sample
    }
  }
  // Each entry: its 16 lanes in order, added to dw.
  for (index_t o = 0; o < O; ++o)
    for (index_t i = 0; i < I; ++i)
      for (index_t t = 0; t < taps; ++t) {
        const index_t item = (t * otiles + o / kFilterOut) * itiles + i / kFilterIn;
        const float* p = part.data() + item * kPart +
                         ((o % kFilterOut) * kFilterIn + i % kFilterIn) * kBf16Lanes;
        float sum = 0.0f;
        for (int l = 0; l < kBf16Lanes; ++l)
          sum += p[l];
        const int a = int(t / (kh * kw)), b = int((t / kw) % kh), c = int(t % kw);
        dw(o, i, a, b, c) = (accumulate ? dw(o, i, a, b, c) : 0.0f) + sum;
      }
}

#endif

}  // namespace halo3d::kernels::impl
