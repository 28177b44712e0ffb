#pragma once
// The host bf16 conv3d backward-filter engine (AVX512-BF16, stride and dilation 1):
//   dw(o, i, tap) = sum over cells c of dy(o, c) x(i, c + tap - p)
// is a reduction over cells, so vdpbf16ps pairs two neighbouring W cells: the 16 lanes are 16
// input channels, and one step adds dy(o, c) x(i, c + s) + dy(o, c + 1) x(i, c + 1 + s) for a
// broadcast pair of dy. Per sample:
//   - x as cell pairs (x(c), x(c + 1)) for every cell of the allocation, channels innermost
//     ([D][H][W][I], I padded to whole vectors with zeros): any tap's shift reads one vector;
//   - dy over the box as cell pairs, channels innermost ([d][h][pair][O], O padded to the tile);
//   - a register tile is OB output channels (broadcasts) x IV vectors of 16 input channels of one
//     tap, 24 or 16 float accumulators, fed per cell pair by IV vector loads and OB broadcasts.
// x's pairs are packed plane by plane into a ring of kD planes, dy's for the current plane only.
// The box is walked in chunks of up to kFilterRows rows of one plane; after each chunk a tile adds
// its accumulators into a float partial ([tap][O][I]), which is added to dw at the end. Every order
// is fixed by the problem, not by the thread count. Float error per entry: at most
// kFilterRows (W + 1) products per chunk, then one addition per chunk and one into dw.

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

inline constexpr int kFilterRows = 16;  // rows of one plane per chunk

// Strides (in 32-bit pairs) of one tile's operands: dy per cell pair and per row, x per cell and
// per row; the partial per output channel.
struct Bf16FilterStrides {
  index_t dy_pair, dy_row, x_cell, x_row, part_o;
};

// One tile over one chunk of `rows` rows of `pairs` cell pairs: `dy` points at the chunk's first
// pair of the tile's first output channel, `x` at the x pair its first input channel reads, `part`
// at the tile's (o0, i0) partial.
template <int IV, int OB>
inline void bf16FilterTile(const std::uint32_t* dy, const std::uint32_t* x,
                           const Bf16FilterStrides& st, int rows, index_t pairs, float* part) {
  __m512 acc[OB][IV];
#pragma GCC unroll 24
  for (int j = 0; j < OB; ++j)
#pragma GCC unroll 4
    for (int k = 0; k < IV; ++k)
      acc[j][k] = _mm512_setzero_ps();
  // One flat loop over (row, pair) with running offsets, so that the accumulators stay in
  // registers (nested loops made GCC reload them from the stack at every row).
  const index_t steps = index_t(rows) * pairs;
  index_t q = 0, dro = 0, xro = 0;
  for (index_t step = 0; step < steps; ++step) {
    const std::uint32_t* dp = dy + dro + q * st.dy_pair;
    const std::uint32_t* xp = x + xro + 2 * q * st.x_cell;
    __m512i xv[IV];
#pragma GCC unroll 4
    for (int k = 0; k < IV; ++k)
      xv[k] = _mm512_loadu_si512(xp + k * kBf16Lanes);
#pragma GCC unroll 24
    for (int j = 0; j < OB; ++j) {
      const __m512i b = _mm512_set1_epi32(int(dp[j]));
#pragma GCC unroll 4
      for (int k = 0; k < IV; ++k)
        acc[j][k] = _mm512_dpbf16_ps(acc[j][k], (__m512bh)xv[k], (__m512bh)b);
    }
    if (++q == pairs) {
      q = 0;
      dro += st.dy_row;
      xro += st.x_row;
    }
  }
  for (int j = 0; j < OB; ++j)
    for (int k = 0; k < IV; ++k) {
      float* p = part + j * st.part_o + k * kBf16Lanes;
      _mm512_storeu_ps(p, _mm512_add_ps(_mm512_loadu_ps(p), acc[j][k]));
    }
}

// dw (+)= the weight gradient over out_box, with IV vectors of input channels and OB output
// channels per tile (the bias gradient is the caller's). Callers have run the shape checks.
template <int IV, int OB, class ExecSpace, class DwView>
void conv3dBackwardFilterBf16HostTiles(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x,
                                       const Tensor<bf16, ExecSpace>& dy, const WindowGeometry& g,
                                       const DwView& dw, const Box& out_box, bool accumulate) {
  const Conv3dIndexing ix = makeIndexing(g, x, dy);
  const auto xv = x.view();
  const auto dyv = dy.view();
  const index_t N = index_t(dyv.extent(0)), O = index_t(dyv.extent(1)), I = index_t(xv.extent(1));
  const index_t Ha = index_t(xv.extent(3)), Wa = index_t(xv.extent(4));
  const int kd = g.kernel[0], kh = g.kernel[1], kw = g.kernel[2];
  const index_t taps = index_t(kd) * kh * kw;
  constexpr index_t kIn = IV * kBf16Lanes;
  const index_t Op = (O + OB - 1) / OB * OB, Ip = (I + kIn - 1) / kIn * kIn;
  const index_t oblocks = Op / OB, iblocks = Ip / kIn;
  const index_t items = taps * oblocks * iblocks;
  ScratchpadLease scratch(exec);
  float* const part = scratch.take<float>(std::size_t(taps * Op * Ip));
  std::fill(part, part + taps * Op * Ip, 0.0f);
  if (!out_box.empty() && N > 0) {
    const index_t ed = out_box.extent(0), eh = out_box.extent(1), ew = out_box.extent(2);
    const index_t d0 = out_box.min(0), h0 = out_box.min(1), w0 = out_box.min(2);
    const index_t P = (ew + 1) / 2;
    const Bf16FilterStrides st{Op, P * Op, Ip, Wa * Ip, Ip};
    // One plane of dy's pairs and a ring of kd planes of x's, so that the buffers stay small and
    // warm (whole-sample buffers of tens of MB cost more in page faults than the tiles).
    const index_t dy_plane = eh * P * Op, x_plane = Ha * Wa * Ip;
    std::uint32_t* dypd = scratch.take<std::uint32_t>(std::size_t(dy_plane));
    std::uint32_t* xpd = scratch.take<std::uint32_t>(std::size_t(kd * x_plane));
    float* partd = part;
    const index_t h_chunks = (eh + kFilterRows - 1) / kFilterRows;
    using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>;
    // The x plane of allocation index xd, as pairs, into its ring slot (every entry, padding too).
    const auto packX = [&](index_t n, index_t xd) {
      std::uint32_t* slot = xpd + (xd % kd) * x_plane;
      Kokkos::parallel_for(
          "halo3d::conv3dBf16FilterPairsX", Policy(exec, 0, Ha), KOKKOS_LAMBDA(const index_t h) {
            std::uint32_t* out = slot + h * Wa * Ip;
            for (index_t i = 0; i < Ip; ++i) {
              if (i >= I) {
                for (index_t c = 0; c < Wa; ++c)
                  out[c * Ip + i] = 0u;
                continue;
              }
              const std::uint16_t* src = &xv(n, i, xd, h, 0).bits;
              for (index_t c = 0; c < Wa; ++c)
                out[c * Ip + i] =
                    std::uint32_t(src[c]) | (c + 1 < Wa ? std::uint32_t(src[c + 1]) << 16 : 0u);
            }
          });
    };
    for (index_t n = 0; n < N; ++n)
      for (index_t d = 0; d < ed; ++d) {
        const index_t xd0 = ix.inputOf(0, d0 + d, 0) + ix.in_shift[0];
        if (d == 0)
          for (int a = 0; a < kd; ++a)
            packX(n, xd0 + a);
        else
          packX(n, xd0 + kd - 1);
        Kokkos::parallel_for(
            "halo3d::conv3dBf16FilterPairsDy", Policy(exec, 0, eh), KOKKOS_LAMBDA(const index_t h) {
              std::uint32_t* out = dypd + h * P * Op;
              for (index_t o = 0; o < Op; ++o) {
                if (o >= O) {
                  for (index_t q = 0; q < P; ++q)
                    out[q * Op + o] = 0u;
                  continue;
                }
                const std::uint16_t* src = &dyv(n, o, d0 + d + ix.out_shift[0],
                                                h0 + h + ix.out_shift[1], w0 + ix.out_shift[2])
                                                .bits;
                for (index_t q = 0; q < P; ++q)
                  out[q * Op + o] = std::uint32_t(src[2 * q]) |
                                    (2 * q + 1 < ew ? std::uint32_t(src[2 * q + 1]) << 16 : 0u);
              }
            });
        for (index_t hc = 0; hc < h_chunks; ++hc) {
          const index_t hb = hc * kFilterRows;
          const int rows = int(std::min<index_t>(kFilterRows, eh - hb));
          // Input blocks vary fastest: the tiles of one tap and output block share dy's rows.
          Kokkos::parallel_for(
              "halo3d::conv3dBf16FilterTiles", Policy(exec, 0, items),
              KOKKOS_LAMBDA(const index_t item) {
                const index_t ib = item % iblocks, ob = (item / iblocks) % oblocks;
                const index_t t = item / (iblocks * oblocks);
                const int a = int(t / (kh * kw)), b = int((t / kw) % kh), c = int(t % kw);
                const index_t xh = ix.inputOf(1, h0 + hb, b) + ix.in_shift[1];
                const index_t xc = ix.inputOf(2, w0, c) + ix.in_shift[2];
                const std::uint32_t* xs =
                    xpd + ((xd0 + a) % kd) * x_plane + (xh * Wa + xc) * Ip + ib * kIn;
                const std::uint32_t* ds = dypd + hb * P * Op + ob * OB;
                float* pt = partd + (t * Op + ob * OB) * Ip + ib * kIn;
                bf16FilterTile<IV, OB>(ds, xs, st, rows, P, pt);
              });
        }
        fence(exec, "bf16 filter tiles done");  // the pair buffers are refilled next
      }
  }
  for (index_t o = 0; o < O; ++o)
    for (index_t i = 0; i < I; ++i)
      for (index_t t = 0; t < taps; ++t) {
        const int a = int(t / (kh * kw)), b = int((t / kw) % kh), c = int(t % kw);
        dw(o, i, a, b, c) = (accumulate ? dw(o, i, a, b, c) : 0.0f) + part[(t * Op + o) * Ip + i];
      }
}

// The tile shape for the input channel count I: one vector x 16 output channels up to 16 input
// channels; otherwise the most vectors (2, 3 or 4, x 12, 8 or 6 output channels) that pad I least.
struct Bf16FilterTileShape {
  int vectors, out_channels;
};
inline Bf16FilterTileShape bf16FilterTileShape(index_t I) {
  if (I <= kBf16Lanes) return {1, 16};
  const auto padded = [&](index_t iv) {
    const index_t block = iv * kBf16Lanes;
    return (I + block - 1) / block * block;
  };
  index_t best = 4;
  for (index_t iv = 3; iv >= 2; --iv)
    if (padded(iv) < padded(best)) best = iv;
  return best == 4   ? Bf16FilterTileShape{4, 6}
         : best == 3 ? Bf16FilterTileShape{3, 8}
                     : Bf16FilterTileShape{2, 12};
}

template <class ExecSpace, class DwView>
void conv3dBackwardFilterBf16Host(const ExecSpace& exec, const Tensor<bf16, ExecSpace>& x,
                                  const Tensor<bf16, ExecSpace>& dy, const WindowGeometry& g,
                                  const DwView& dw, const Box& out_box, bool accumulate) {
  const Bf16FilterTileShape t = bf16FilterTileShape(x.block().channels());
  if (t.vectors == 1)
    conv3dBackwardFilterBf16HostTiles<1, 16>(exec, x, dy, g, dw, out_box, accumulate);
  else if (t.vectors == 4)
    conv3dBackwardFilterBf16HostTiles<4, 6>(exec, x, dy, g, dw, out_box, accumulate);
  else if (t.vectors == 3)
    conv3dBackwardFilterBf16HostTiles<3, 8>(exec, x, dy, g, dw, out_box, accumulate);
  else
    conv3dBackwardFilterBf16HostTiles<2, 12>(exec, x, dy, g, dw, out_box, accumulate);
}

// What the largest of the three engine passes takes from the host scratchpad for one call on an x
// block of `x_owned` cells and a y block of `y_owned` (N, C, D, H, W), x's allocation reaching
// kernel - 1 cells beyond its owned cells along each dimension (a stride-1 window's ghosts and
// padding): the pieces conv3dForwardBf16Host, conv3dBackwardDataBf16Host and
// conv3dBackwardFilterBf16HostTiles take, each rounded up to 64 bytes as the lease does (weights
// whose taps are contiguous, as a Parameter's are, need no copy).
inline std::size_t bf16EngineScratchBytes(const Shape5& x_owned, const Shape5& y_owned,
                                          const WindowGeometry& g) {
  const auto piece = [](index_t bytes) { return std::size_t((bytes + 63) / 64 * 64); };
  const index_t I = x_owned[1], O = y_owned[1];
  const index_t kd = g.kernel[0], taps = kd * g.kernel[1] * g.kernel[2];
  const index_t Ha = x_owned[3] + g.kernel[1] - 1, Wa = x_owned[4] + g.kernel[2] - 1;
  const index_t u32 = index_t(sizeof(std::uint32_t)), f32 = index_t(sizeof(float));
  // An engine pass with `out` output and `in` input channels on planes of (h, w) cells: weight
  // pairs, bias, a ring of kd planes of pairs.
  const auto engine = [&](index_t out, index_t in, index_t h, index_t w) {
    const index_t blocks = (out + kBf16Block - 1) / kBf16Block, pairs = (in + 1) / 2;
    return piece(blocks * pairs * taps * kBf16Block * u32) + piece(blocks * kBf16Block * f32) +
           piece(kd * h * pairs * w * u32);
  };
  const std::size_t forward = engine(O, I, Ha, Wa);
  // Backward-data's buffer planes cover dx's owned cells and the kernel's reach.
  const std::size_t backward_data = engine(I, O, Ha, Wa);
  const Bf16FilterTileShape t = bf16FilterTileShape(I);
  const index_t k_in = index_t(t.vectors) * kBf16Lanes;
  const index_t Ip = (I + k_in - 1) / k_in * k_in;
  const index_t Op = (O + t.out_channels - 1) / t.out_channels * t.out_channels;
  const std::size_t filter = piece(taps * Op * Ip * f32) +
                             piece(y_owned[3] * ((y_owned[4] + 1) / 2) * Op * u32) +
                             piece(kd * Ha * Wa * Ip * u32);
  return std::max({forward, backward_data, filter});
}

#endif

}  // namespace halo3d::kernels::impl
