#pragma once
// The tap map shared by the transposed-convolution kernels. Forward and backward-data are both
// gathers: destination cell c and tap k read source cell (c * scale + offset + k * step) / divisor
// when the division is exact and the source cell lies in [lo, hi). With the geometry (k, s, p, dil)
// of one dimension:
//   forward (dst = output, src = input):        scale 1, offset p, step -dil, divisor s,
//                                                [lo, hi) = the input volume
//   backward-data (dst = input, src = output):  scale s, offset -p, step dil, divisor 1,
//                                                [lo, hi) = dy_box
// Destination cells `divisor` apart read the same taps from source cells `scale` apart (a "phase"),
// which the host kernels use to block cells that share their weights.

#include <Kokkos_Core.hpp>

#include "halo3d/core/Types.hpp"
#include "halo3d/kernels/ConvTranspose3dGeometry.hpp"
#include "halo3d/kernels/impl/IndexMath.hpp"

namespace halo3d::kernels::impl {

struct TapAxis {
  index_t scale = 1, offset = 0, step = 1, divisor = 1;
  index_t lo = 0, hi = 0;
  int taps = 1;

  // True, with `src` set, if destination cell c reads a source cell through tap k.
  KOKKOS_INLINE_FUNCTION bool source(index_t c, int k, index_t& src) const {
    const index_t num = c * scale + offset + k * step;
    if (num % divisor != 0) return false;
    src = num / divisor;
    return src >= lo && src < hi;
  }
  // Forward axes only (scale 1): the source cells [s0, s1) that destination cells [c0, c1) read
  // through tap k, and the destination cell that source cell `src` feeds through tap k.
  KOKKOS_INLINE_FUNCTION void sources(index_t c0, index_t c1, int k, index_t& s0,
                                      index_t& s1) const {
    const index_t shift = offset + k * step;
    const index_t first = ceilDiv(c0 + shift, divisor),
                  last = floorDiv(c1 - 1 + shift, divisor) + 1;
    s0 = first > lo ? first : lo;
    s1 = last < hi ? last : hi;
    if (s1 < s0) s1 = s0;
  }
  KOKKOS_INLINE_FUNCTION index_t destination(index_t src, int k) const {
    return src * divisor - offset - k * step;
  }
};

inline TapAxis forwardAxis(const ConvTranspose3dGeometry& g, int dim, index_t input_extent) {
  const WindowGeometry& w = g.window;
  return TapAxis{
      1, w.padding[dim], -index_t(w.dilation[dim]), w.stride[dim], 0, input_extent, w.kernel[dim]};
}

inline TapAxis backwardDataAxis(const ConvTranspose3dGeometry& g, int dim, const Box& dy_box) {
  const WindowGeometry& w = g.window;
  return TapAxis{w.stride[dim],   -index_t(w.padding[dim]), w.dilation[dim], 1,
                 dy_box.min(dim), dy_box.max(dim),          w.kernel[dim]};
}

// Item e of the row-major range (samples, [d0, d0 + nd), [h0, h0 + nh), [w0, w0 + nw)): its sample
// n and its cell (d, h, w).
KOKKOS_INLINE_FUNCTION void unflattenCell(index_t e, index_t d0, index_t nd, index_t h0, index_t nh,
                                          index_t w0, index_t nw, index_t& n, index_t& d,
                                          index_t& h, index_t& w) {
  w = w0 + e % nw;
  e /= nw;
  h = h0 + e % nh;
  e /= nh;
  d = d0 + e % nd;
  n = e / nd;
}

// The three axes of a pass: forward's for an input of global extents `e`, backward-data's for dy's
// cells `dy_box`.
inline Kokkos::Array<TapAxis, 3> forwardAxes(const ConvTranspose3dGeometry& g, const Extents3& e) {
  return {forwardAxis(g, 0, e[0]), forwardAxis(g, 1, e[1]), forwardAxis(g, 2, e[2])};
}
inline Kokkos::Array<TapAxis, 3> backwardDataAxes(const ConvTranspose3dGeometry& g,
                                                  const Box& dy_box) {
  return {backwardDataAxis(g, 0, dy_box), backwardDataAxis(g, 1, dy_box),
          backwardDataAxis(g, 2, dy_box)};
}

// Vectorises the loop that follows over its contiguous run of channels. Without it GCC unrolls the
// small register tiles of the host kernels completely and interleaves them with permutes, 25x
// slower (3 instead of 80 GFLOP/s on one core). A no-op where OpenMP is off.
#if defined(_OPENMP)
#define HALO3D_CONV_TRANSPOSE3D_SIMD _Pragma("omp simd")
#else
#define HALO3D_CONV_TRANSPOSE3D_SIMD
#endif

// Host blocking: one destination block is `cells` cells of one phase times `channels` channels (64
// bytes of T, one cache line of packed weights), held in registers across the whole reduction.
template <class T>
struct HostBlocking {
  static constexpr int channels = int(64 / sizeof(T));
  static constexpr int cells = 8;
  static index_t paddedChannels(index_t q) { return (q + channels - 1) / channels * channels; }
};

}  // namespace halo3d::kernels::impl
