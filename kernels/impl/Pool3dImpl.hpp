#pragma once
// Definitions of the Pool3d.hpp kernels. Each kernel is a per-cell body (a functor,
// device-callable); in the host code (KernelPath::Fastest on a host execution space) one work item
// is a (sample, channel, d) plane (for the common windows the planes of Pool3dHostPlanes.hpp),
// otherwise walked row by row with loops over w (no index decoding per cell; for the common
// windows the loops of Pool3dHostRows.hpp, vectorised across cells), and in the
// device code one work item is one cell, neighbouring threads on neighbouring w.
// Included by kernels/Pool3d.cpp (the instantiations) and by tests.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/KernelPath.hpp"
#include "halo3d/kernels/ComputeType.hpp"
#include "halo3d/kernels/Pool3d.hpp"
#include "halo3d/kernels/impl/IndexMath.hpp"
#include "halo3d/kernels/impl/Pool3dChecks.hpp"
#include "halo3d/kernels/impl/Pool3dHostChannels.hpp"
#include "halo3d/kernels/impl/Pool3dHostPlanes.hpp"
#include "halo3d/kernels/impl/Pool3dHostRows.hpp"
#include "halo3d/kernels/impl/Pool3dHostSimd.hpp"
#include "halo3d/kernels/impl/Pool3dHostWholeRows.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels::impl {

// One dimension of a pooling window: output cell o pools input cells o s - p + k dil, k < taps, of
// which those in [0, extent) count.
struct PoolAxis {
  index_t stride = 1, padding = 0, dilation = 1, extent = 1;
  int taps = 1;

  // The taps [k0, k1) of output cell o that land inside the volume; `first` is the input cell of
  // tap 0.
  KOKKOS_INLINE_FUNCTION void tapsInVolume(index_t o, index_t& first, int& k0, int& k1) const {
    first = o * stride - padding;
    const index_t lo = first < 0 ? -floorDiv(first, dilation) : 0;  // ceil(-first / dil)
    const index_t hi = floorDiv(extent - 1 - first, dilation) + 1;
    k0 = int(lo);
    k1 = int(hi < taps ? hi : index_t(taps));
  }
  // The output cells [o0, o1) whose window spans input cell i (before the dilation test), clipped
  // to [lo, hi).
  KOKKOS_INLINE_FUNCTION void outputsOver(index_t i, index_t lo, index_t hi, index_t& o0,
                                          index_t& o1) const {
    const index_t span = dilation * (taps - 1) + 1;
    o0 = -floorDiv(-(i + padding - span + 1), stride);
    o1 = floorDiv(i + padding, stride) + 1;
    if (o0 < lo) o0 = lo;
    if (o1 > hi) o1 = hi;
  }
  // True if input cell i is a tap (not a gap of the dilation) of output cell o's window.
  KOKKOS_INLINE_FUNCTION bool isTap(index_t i, index_t o) const {
    return (i - o * stride + padding) % dilation == 0;
  }
};

inline Kokkos::Array<PoolAxis, 3> poolAxes(const WindowGeometry& g, const Extents3& input_extents) {
  Kokkos::Array<PoolAxis, 3> axes;
  for (int d = 0; d < 3; ++d)
    axes[d] = PoolAxis{g.stride[d], g.padding[d], g.dilation[d], input_extents[d], g.kernel[d]};
  return axes;
}

// The dx size (bytes of the call) from which the average backward's dense rows store around the
// caches (avgBackwardRowK3S2P1), which saves the read of each dx line before its write. Off by
// default: on the shared machine of 2026-12-02 streaming at 4 MiB and more measured 0.7-1.5x of
// the cached stores, no consistent gain (docs/PERFORMANCE.md, issue 12 item 3, fifth round). A
// variable so that tests take the streaming path and a quiet measurement can switch it on.
inline double& poolStreamMinBytes() {
  static double bytes = std::numeric_limits<double>::infinity();
  return bytes;
}

// The same for max pooling's dense backward planes (denseMaxPlane), on from 16 MiB of dx, the
// direct convolution's threshold: a dx that large does not stay in the caches for its reader
// anyway (half of the 32 MiB L3). On the U-Net's first pool (16 x 64^3, 16 MiB per sample) the
// streamed planes measured 1.05-1.38x the cached ones in four alternating rounds, and 1.8x with the
// earlier per-row loop (docs/PERFORMANCE.md, issue 12 item 3, seventh round). Set through
// kernels::setPoolStreamBytes.
inline double& maxPoolStreamMinBytes() {
  static double bytes = double(index_t(16) << 20);
  return bytes;
}

// Host calls that touch at most this many input cells (x or dx) run their planes on the calling
// thread: a Kokkos parallel_for costs about as much as the whole work of a 4^3 channel set
// (bench_pool3d's pool3d_floor rows), and host kernels are complete on return either way.
inline constexpr index_t kPoolSerialCells = 16384;

// Calls body(n, c, d, h, w) for every local sample n < N, channel c < C and global cell of `box`;
// in the host code, body.hostPlane(n, c, d, h0, h1, w0, w1) for every plane of cells instead,
// without a parallel_for when the call touches at most kPoolSerialCells input cells
// (`input_cells`).
template <class ExecSpace, class Body>
void forEachPoolCell(const char* label, const ExecSpace& exec, index_t N, index_t C, const Box& box,
                     const Body& body, KernelPath path, index_t input_cells) {
  if (box.empty() || N == 0) return;
  using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  const index_t ed = box.extent(0), eh = box.extent(1), ew = box.extent(2);
  const index_t d0 = box.min(0), h0 = box.min(1), w0 = box.min(2), w1 = box.max(2);
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest && input_cells <= kPoolSerialCells) {
      for (index_t n = 0; n < N; ++n)
        for (index_t c = 0; c < C; ++c)
          for (index_t d = d0; d < d0 + ed; ++d)
            body.hostPlane(n, c, d, h0, h0 + eh, w0, w1);
      return;
    }
    if (path == KernelPath::Fastest) {
      // One work item per (sample, channel, d) plane: the index decoding (divisions) once per
      // plane, not per row, which matters for short rows.
      Kokkos::parallel_for(label, Policy(exec, 0, N * C * ed), [=](const index_t plane) {
        const index_t d = d0 + plane % ed, nc = plane / ed, n = nc / C, c = nc % C;
        body.hostPlane(n, c, d, h0, h0 + eh, w0, w1);
      });
      return;
    }
  }
  Kokkos::parallel_for(
      label, Policy(exec, 0, N * C * ed * eh * ew), KOKKOS_LAMBDA(const index_t e) {
        const index_t w = w0 + e % ew, row = e / ew;
        const index_t h = h0 + row % eh, d = d0 + (row / eh) % ed, nc = row / (eh * ed);
        body(nc / C, nc % C, d, h, w);
      });
}

// The largest input plane (H W cells of the volume) whose average pooling forward runs 16 channels
// per register (Pool3dHostChannels.hpp) instead of plane by plane: larger planes measured slower
// (their channel strides, powers of two of 1 MiB and more, put 16 channel rows in the same cache
// sets). 0 turns the 16-channel forms off, the backward's too (which takes any plane otherwise). A
// variable so that the tests can move it.
inline index_t& poolChannelPlaneCells() {
  static index_t cells = 32 * 32;
  return cells;
}

// Whether a host call of average pooling over C channels takes the 16-channel forms
// (Pool3dHostChannels.hpp): on AVX-512 hosts, channels a multiple of 16 (the callers test the host
// execution space and float at compile time). The forward takes them only for planes of at most
// poolChannelPlaneCells() cells; the backward for any plane (its form for long rows runs the
// planes' row on each channel and needs no scratch).
inline bool poolChannelsApply(KernelPath path, index_t C) {
  return HALO3D_POOL3D_AVX512 && path == KernelPath::Fastest && C % kPoolLanes == 0 && C > 0;
}

// Calls f(n, c0, d) for every local sample n < N, group of 16 channels from c0 and d in [d0, d0 +
// ed), without a parallel_for when the call touches at most kPoolSerialCells input cells.
template <class ExecSpace, class F>
void forEachChannelPlane(const char* label, const ExecSpace& exec, index_t N, index_t C, index_t d0,
                         index_t ed, const F& f, index_t input_cells) {
  const index_t groups = C / kPoolLanes;
  if (input_cells <= kPoolSerialCells) {
    for (index_t n = 0; n < N; ++n)
      for (index_t g = 0; g < groups; ++g)
        for (index_t d = d0; d < d0 + ed; ++d)
          f(n, g * kPoolLanes, d);
    return;
  }
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, N * groups * ed),
      [=](const index_t item) {
        const index_t d = d0 + item % ed, ng = item / ed;
        f(ng / groups, (ng % groups) * kPoolLanes, d);
      });
}

template <class T, class MemorySpace>
struct PoolViews {
  using tensor = Kokkos::View<T*****, Kokkos::LayoutRight, MemorySpace>;
  using const_tensor = Kokkos::View<const T*****, Kokkos::LayoutRight, MemorySpace>;
  using index_tensor = Kokkos::View<index_t*****, Kokkos::LayoutRight, MemorySpace>;
  using const_index_tensor = Kokkos::View<const index_t*****, Kokkos::LayoutRight, MemorySpace>;
};

// Per-coordinate window ranges, worked out once per call on the host so that no kernel divides per
// cell: row row0[a] + x of `ranges` holds, for coordinate x of `box` along axis a, either the
// forward range {first input cell, k0, k1} (forward) or the backward range {o0, o1, -} (backward).
// Host execution spaces keep them in a per-thread buffer reused by every call (a View allocation
// costs more than the kernel of a 4^3 volume; host kernels are done when parallel_for returns, so
// the next call on the thread finds the buffer free); others in a View of the call.
template <class MemorySpace>
struct PoolRanges {
  Kokkos::View<const index_t* [3], Kokkos::LayoutRight, MemorySpace> owner;  // not on the host
  const index_t* ranges = nullptr;                                           // 3 per row
  Kokkos::Array<index_t, 3> row0;

  // rangeOf(axis, coordinate, index_t* row) fills the row of every coordinate of `box`.
  template <class ExecSpace, class F>
  static PoolRanges make(const Box& box, const F& rangeOf) {
    const index_t rows = box.extent(0) + box.extent(1) + box.extent(2);
    PoolRanges made;
    const auto fill = [&](index_t* host) {
      index_t row = 0;
      for (int a = 0; a < 3; ++a) {
        made.row0[a] = row - box.min(a);
        for (index_t x = box.min(a); x < box.max(a); ++x, ++row)
          rangeOf(a, x, host + 3 * row);
      }
    };
    if constexpr (kRunsOnHost<ExecSpace>) {
      static thread_local std::vector<index_t> buffer;
      if (buffer.size() < std::size_t(3 * rows)) buffer.resize(std::size_t(3 * rows));
      fill(buffer.data());
      made.ranges = buffer.data();
    } else {
      Kokkos::View<index_t* [3], Kokkos::LayoutRight, MemorySpace> r(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "halo3d::poolRanges"), rows);
      auto host = Kokkos::create_mirror_view(r);
      fill(host.data());
      Kokkos::deep_copy(r, host);
      made.owner = r;
      made.ranges = r.data();
    }
    return made;
  }
  KOKKOS_INLINE_FUNCTION const index_t& at(int a, index_t x, int k) const {
    return ranges[3 * (row0[a] + x) + k];
  }
};

// Calls f(std::integral_constant<index_t, n>()) and returns true for n in 1..3, false otherwise:
// the average-pooling rows take a cell's taps with a compile-time trip count, which the compiler
// vectorises across cells.
template <class F>
inline bool withFixedTaps(index_t n, const F& f) {
  switch (n) {
    case 1:
      f(std::integral_constant<index_t, 1>());
      return true;
    case 2:
      f(std::integral_constant<index_t, 2>());
      return true;
    case 3:
      f(std::integral_constant<index_t, 3>());
      return true;
  }
  return false;
}

template <class MemorySpace>
const HaloTensor<index_t, MemorySpace>* noArgmax() {
  return nullptr;
}

inline Kokkos::Array<index_t, 3> deviceArray(const Extents3& e) {
  return {e[0], e[1], e[2]};
}

template <class T>
T windowScale(const WindowGeometry& g) {
  return T(1) / T(index_t(g.kernel[0]) * g.kernel[1] * g.kernel[2]);
}

// What the forward and backward bodies share: the index shifts of the input side (x, dx), the
// output side (y, dy) and argmax (max only), the window axes and the average's scale.
template <class T>
struct PoolBodyCommon {
  // The arithmetic type: float for bf16 storage, T itself otherwise. bf16 takes the same host row
  // loops as float, with float accumulators and buffers and one rounding per output, so that each
  // path gives the float result of that path rounded to bf16.
  using Acc = ComputeType<T>;
  // local = global + shift (Kokkos::Array: std::array is host-only under CUDA)
  Kokkos::Array<index_t, 3> xs, ys, as;
  Kokkos::Array<PoolAxis, 3> ax;
  Acc scale;  // avg: 1 / (kD kH kW)

  // Fills the above from the tensors, after checking that argmax (if any) is laid out like `out`
  // and holds `argmax_box`.
  template <class In, class Out, class Argmax>
  void bind(const char* kernel, const WindowGeometry& g, const In& in, const Out& out,
            const Argmax* argmax, const Box& argmax_box) {
    if (argmax) {
      requireArgmax(kernel, *argmax, out, argmax_box);
      as = deviceArray(localShift(*argmax));
    }
    xs = deviceArray(localShift(in));
    ys = deviceArray(localShift(out));
    ax = poolAxes(g, in.block().globalExtents());
    scale = windowScale<Acc>(g);
  }
};

template <class T, class MemorySpace, bool kMax>
struct PoolForwardBody : PoolBodyCommon<T> {
  using Common = PoolBodyCommon<T>;
  using Common::ax, Common::as, Common::scale, Common::xs, Common::ys;
  using typename Common::Acc;
  typename PoolViews<T, MemorySpace>::const_tensor x;
  typename PoolViews<T, MemorySpace>::tensor y;
  typename PoolViews<T, MemorySpace>::index_tensor argmax;  // max only
  PoolRanges<MemorySpace> taps;  // {first input cell, k0, k1} per output coordinate
  Acc no_cell;                   // max of an empty window: -inf, as PyTorch
  // The output cells [wfull0, wfull1) along W whose taps all lie in the volume (host rows).
  index_t wfull0 = 0, wfull1 = 0;
  bool index32 = false;  // the volume's linear indices fit 32 bits
  bool planes = false;   // average pooling through avgForwardPlane (Pool3dHostPlanes.hpp); max
                         // pooling through maxPlaneK2S2 (window 2x2x2, stride 2, float)
  bool whole = false;    // average, float: whole rows through avgForwardWholeRowsK3S2P1
  bool plane8 = false;   // average, float: 8 x 8 planes through avgForwardPlane8x8K3S2P1
  KOKKOS_INLINE_FUNCTION void operator()(index_t n, index_t c, index_t od, index_t oh,
                                         index_t ow) const {
    const index_t fd = taps.at(0, od, 0), kd0 = taps.at(0, od, 1), kd1 = taps.at(0, od, 2);
    const index_t fh = taps.at(1, oh, 0), kh0 = taps.at(1, oh, 1), kh1 = taps.at(1, oh, 2);
    const index_t fw = taps.at(2, ow, 0), kw0 = taps.at(2, ow, 1), kw1 = taps.at(2, ow, 2);
    Acc acc = kMax ? no_cell : Acc(0);
    index_t best = -1;
    for (index_t kd = kd0; kd < kd1; ++kd) {
      const index_t id = fd + kd * ax[0].dilation;
      for (index_t kh = kh0; kh < kh1; ++kh) {
        const index_t ih = fh + kh * ax[1].dilation;
        for (index_t kw = kw0; kw < kw1; ++kw) {
          const index_t iw = fw + kw * ax[2].dilation;
          const Acc v = Acc(x(n, c, id + xs[0], ih + xs[1], iw + xs[2]));
          if constexpr (kMax) {
            // PyTorch's test: a strictly greater value or a NaN takes over, so the first maximum
            // wins.
            if (best < 0 || v > acc || v != v) {
              acc = v;
              best = (id * ax[1].extent + ih) * ax[2].extent + iw;
            }
          } else {
            acc += v;
          }
        }
      }
    }
    if constexpr (kMax) {
      y(n, c, od + ys[0], oh + ys[1], ow + ys[2]) = T(acc);
      argmax(n, c, od + as[0], oh + as[1], ow + as[2]) = best;
    } else {
      y(n, c, od + ys[0], oh + ys[1], ow + ys[2]) = T(acc * scale);
    }
  }

  // Output rows [h0, h1), cells [w0, w1) of plane (n, c, od): average pooling through
  // avgForwardPlane (Pool3dHostPlanes.hpp) and max k2s2 through maxPlaneK2S2 where they apply,
  // otherwise row by row.
  void hostPlane(index_t n, index_t c, index_t od, index_t h0, index_t h1, index_t w0,
                 index_t w1) const {
    if constexpr (kMax)
      if (planes && maxPlaneK2S2(n, c, od, h0, h1, w0, w1)) return;
#if HALO3D_POOL3D_AVX512
    if constexpr (!kMax && std::is_same_v<T, float>)
      if (plane8 && h0 == 0 && h1 == 4 && w0 == 0 && w1 == 4) {
        switch (taps.at(0, od, 2) - taps.at(0, od, 1)) {
          case 1:
            return avgForwardPlane8x8K3S2P1<1>(*this, n, c, od);
          case 2:
            return avgForwardPlane8x8K3S2P1<2>(*this, n, c, od);
          case 3:
            return avgForwardPlane8x8K3S2P1<3>(*this, n, c, od);
          default:
            break;
        }
      }
    if constexpr (!kMax && std::is_same_v<T, float>)
      if (whole && w0 == 0 && 2 * w1 == ax[2].extent) {
        switch (taps.at(0, od, 2) - taps.at(0, od, 1)) {
          case 1:
            return avgForwardWholeRowsK3S2P1<1>(*this, n, c, od, h0, h1);
          case 2:
            return avgForwardWholeRowsK3S2P1<2>(*this, n, c, od, h0, h1);
          case 3:
            return avgForwardWholeRowsK3S2P1<3>(*this, n, c, od, h0, h1);
          default:
            break;
        }
      }
#endif
    if constexpr (!kMax)
      if (planes && withRowShape(ax[2].stride, ax[2].taps, ax[2].dilation, [&](auto s, auto k) {
            avgForwardPlane<decltype(s)::value, decltype(k)::value, T>(*this, n, c, od, h0, h1, w0,
                                                                       w1);
          }))
        return;
    for (index_t oh = h0; oh < h1; ++oh)
      hostRow(n, c, od, oh, w0, w1);
  }

  // Output cells [w0, w1) of row (n, c, od, oh) through row pointers. Average pooling sums the
  // window's (kd, kh) input rows into one row buffer first (contiguous, vectorised), then each
  // cell's W taps from it: (sum over kw of (sum over kd, kh)), a different order from operator()
  // but the same for a cell whatever box it is computed in. Max pooling (and windows wider than
  // the buffer) keep operator()'s order: window rows outside, cells inside, in chunks of
  // accumulators on the stack, each cell seeing its taps in window order so that the first maximum
  // wins.
  void hostRow(index_t n, index_t c, index_t od, index_t oh, index_t w0, index_t w1) const {
    if constexpr (kMax) {
      if (maxRow(n, c, od, oh, w0, w1)) return;
    } else {
      if (avgRow(n, c, od, oh, w0, w1)) return;
    }
    cellRow(n, c, od, oh, w0, w1);
  }

  // The interior cells of a max-pooling row (every W tap in the volume) through
  // maxPoolRowInterior, the cells at the ends through cellRow; false (nothing written) for windows
  // it does not cover.
  bool maxRow(index_t n, index_t c, index_t od, index_t oh, index_t w0, index_t w1) const {
    constexpr int kMaxRows = 64;
    const index_t ia = std::min(std::max(wfull0, w0), w1), ib = std::min(std::max(wfull1, ia), w1);
    const index_t fd = taps.at(0, od, 0), kd0 = taps.at(0, od, 1), kd1 = taps.at(0, od, 2);
    const index_t fh = taps.at(1, oh, 0), kh0 = taps.at(1, oh, 1), kh1 = taps.at(1, oh, 2);
    const index_t nrows = (kd1 - kd0) * (kh1 - kh0);
    if (!index32 || ib <= ia || kd1 <= kd0 || kh1 <= kh0 || nrows > kMaxRows) return false;
    const index_t H = ax[1].extent, W = ax[2].extent;
    const T* rows[kMaxRows];
    std::int32_t bases[kMaxRows];
    int r = 0;
    for (index_t kd = kd0; kd < kd1; ++kd) {
      const index_t id = fd + kd * ax[0].dilation;
      for (index_t kh = kh0; kh < kh1; ++kh, ++r) {
        const index_t ih = fh + kh * ax[1].dilation;
        rows[r] = &x(n, c, id + xs[0], ih + xs[1], 0) + xs[2];
        bases[r] = std::int32_t((id * H + ih) * W);
      }
    }
    T* yrow = &y(n, c, od + ys[0], oh + ys[1], 0) + ys[2];
    index_t* arow = &argmax(n, c, od + as[0], oh + as[1], 0) + as[2];
    const index_t first = ia * ax[2].stride - ax[2].padding;
    if (!withRowShape(ax[2].stride, ax[2].taps, ax[2].dilation, [&](auto s, auto k) {
          maxPoolRowInterior<decltype(s)::value, decltype(k)::value>(rows, bases, int(nrows), first,
                                                                     ib - ia, yrow + ia, arow + ia);
        }))
      return false;
    cellRow(n, c, od, oh, w0, ia);
    cellRow(n, c, od, oh, ib, w1);
    return true;
  }

  // Max pooling with window 2 and stride 2 along D, H and W and no padding, float rows: each output
  // row through maxPoolForwardRowK2S2 (its 4 window rows found once per plane, not per row through
  // the ranges), the rows and cells whose window leaves the volume through hostRow and cellRow;
  // false (nothing written) where the row kernel does not exist (no AVX-512, other types) or the
  // plane's window along D leaves the volume.
  bool maxPlaneK2S2(index_t n, index_t c, index_t od, index_t h0, index_t h1, index_t w0,
                    index_t w1) const {
#if HALO3D_POOL3D_AVX512
    if constexpr (std::is_same_v<T, float>) {
      const index_t fd = taps.at(0, od, 0), kd0 = taps.at(0, od, 1), kd1 = taps.at(0, od, 2);
      const index_t ia = std::min(std::max(wfull0, w0), w1),
                    ib = std::min(std::max(wfull1, ia), w1);
      if (kd0 != 0 || kd1 != 2 || ib <= ia) return false;
      const index_t H = ax[1].extent, W = ax[2].extent;
      const std::int32_t off[4] = {0, std::int32_t(W), std::int32_t(H * W),
                                   std::int32_t(H * W + W)};
      const index_t first = 2 * ia;
      const auto inside = [&](index_t oh) {
        return oh < h1 && taps.at(1, oh, 1) == 0 && taps.at(1, oh, 2) == 2;
      };
      const auto windowRows = [&](index_t oh, const float** rows) {
        const index_t fh = taps.at(1, oh, 0);
        rows[0] = &x(n, c, fd + xs[0], fh + xs[1], 0) + xs[2] + first;
        rows[1] = &x(n, c, fd + xs[0], fh + 1 + xs[1], 0) + xs[2] + first;
        rows[2] = &x(n, c, fd + 1 + xs[0], fh + xs[1], 0) + xs[2] + first;
        rows[3] = &x(n, c, fd + 1 + xs[0], fh + 1 + xs[1], 0) + xs[2] + first;
      };
      const auto edges = [&](index_t oh) {
        if (w0 < ia) cellRow(n, c, od, oh, w0, ia);
        if (ib < w1) cellRow(n, c, od, oh, ib, w1);
      };
      // The common case, every output row's window inside the volume and no edge cells: one loop
      // whose row pointers step by the views' strides instead of the look-ups and tests below,
      // which cost the 8-output rows of 16^3 volumes most of their time.
      if (ia == w0 && ib == w1 && h1 > h0 && inside(h0) && inside(h1 - 1) &&
          taps.at(1, h1 - 1, 0) - taps.at(1, h0, 0) == 2 * (h1 - 1 - h0)) {
        const index_t xs2 = index_t(x.stride_2()), xs3 = index_t(x.stride_3()),
                      ys3 = index_t(y.stride_3()), as3 = index_t(argmax.stride_3());
        const float* x0 = &x(n, c, fd + xs[0], taps.at(1, h0, 0) + xs[1], 0) + xs[2] + first;
        float* y0 = &y(n, c, od + ys[0], h0 + ys[1], 0) + ys[2] + ia;
        index_t* a0 = &argmax(n, c, od + as[0], h0 + as[1], 0) + as[2] + ia;
        const std::int32_t base0 = std::int32_t((fd * H + taps.at(1, h0, 0)) * W + first);
        // Output row h0 + k: window rows from x0 + 2 k xs3, global index base0 + 2 k W.
        const auto rowsOf = [&](index_t k, const float** rows) {
          rows[0] = x0 + 2 * k * xs3;
          rows[1] = rows[0] + xs3;
          rows[2] = rows[0] + xs2;
          rows[3] = rows[2] + xs3;
        };
        const index_t count = h1 - h0, cells = ib - ia;
        index_t k = 0;
        if (cells <= 8)
          for (; k + 1 < count; k += 2) {
            const float* rows[4];
            const float* next[4];
            rowsOf(k, rows);
            rowsOf(k + 1, next);
            maxPoolForwardRowPairK2S2(rows, next, off, base0 + std::int32_t(2 * k * W),
                                      base0 + std::int32_t(2 * (k + 1) * W), cells, y0 + k * ys3,
                                      y0 + (k + 1) * ys3, a0 + k * as3, a0 + (k + 1) * as3);
          }
        for (; k < count; ++k) {
          const float* rows[4];
          rowsOf(k, rows);
          if (k + 1 < count)  // the next output row's window rows, as below
            for (int r = 0; r < 4; ++r)
              for (index_t i = 0; i < 2 * cells; i += 16)
                _mm_prefetch(reinterpret_cast<const char*>(rows[r] + 2 * xs3 + i), _MM_HINT_T0);
          maxPoolForwardRowK2S2(rows, off, base0 + std::int32_t(2 * k * W), cells, y0 + k * ys3,
                                a0 + k * as3);
        }
        return true;
      }
      for (index_t oh = h0; oh < h1; ++oh) {
        const index_t fh = taps.at(1, oh, 0);
        if (!inside(oh)) {
          hostRow(n, c, od, oh, w0, w1);
          continue;
        }
        const float* rows[4];
        windowRows(oh, rows);
        // Rows of at most 8 outputs (16^3 inputs) two at a time, one per half register.
        if (ib - ia <= 8 && inside(oh + 1)) {
          const float* next[4];
          windowRows(oh + 1, next);
          const index_t fh1 = taps.at(1, oh + 1, 0);
          maxPoolForwardRowPairK2S2(rows, next, off, std::int32_t((fd * H + fh) * W + first),
                                    std::int32_t((fd * H + fh1) * W + first), ib - ia,
                                    &y(n, c, od + ys[0], oh + ys[1], 0) + ys[2] + ia,
                                    &y(n, c, od + ys[0], oh + 1 + ys[1], 0) + ys[2] + ia,
                                    &argmax(n, c, od + as[0], oh + as[1], 0) + as[2] + ia,
                                    &argmax(n, c, od + as[0], oh + 1 + as[1], 0) + as[2] + ia);
          edges(oh);
          edges(++oh);
          continue;
        }
        const float* row0 = rows[0];
        const float* row1 = rows[1];
        // The next output row's window rows, requested ahead: without this the row kernel was
        // slower than maxPoolRowInterior on 64^3 volumes (x well beyond L2), with it faster.
        if (oh + 1 < h1)
          for (int r = 0; r < 4; ++r)
            for (index_t i = 0; i < 2 * (ib - ia); i += 16)
              _mm_prefetch(reinterpret_cast<const char*>(rows[r] + 2 * (row1 - row0) + i),
                           _MM_HINT_T0);
        float* yrow = &y(n, c, od + ys[0], oh + ys[1], 0) + ys[2];
        index_t* arow = &argmax(n, c, od + as[0], oh + as[1], 0) + as[2];
        maxPoolForwardRowK2S2(rows, off, std::int32_t((fd * H + fh) * W + first), ib - ia,
                              yrow + ia, arow + ia);
        edges(oh);
      }
      return true;
    }
#endif
    (void)n, (void)c, (void)od, (void)h0, (void)h1, (void)w0, (void)w1;
    return false;
  }

  // Any window, cell by cell (see hostRow).
  void cellRow(index_t n, index_t c, index_t od, index_t oh, index_t w0, index_t w1) const {
    constexpr index_t kChunk = 64;
    const index_t fd = taps.at(0, od, 0), kd0 = taps.at(0, od, 1), kd1 = taps.at(0, od, 2);
    const index_t fh = taps.at(1, oh, 0), kh0 = taps.at(1, oh, 1), kh1 = taps.at(1, oh, 2);
    const index_t dil = ax[2].dilation, H = ax[1].extent, W = ax[2].extent;
    T* yrow = &y(n, c, od + ys[0], oh + ys[1], 0) + ys[2];
    index_t* arow = kMax ? &argmax(n, c, od + as[0], oh + as[1], 0) + as[2] : nullptr;
    for (index_t c0 = w0; c0 < w1; c0 += kChunk) {
      const index_t cn = w1 - c0 < kChunk ? w1 - c0 : kChunk;
      Acc acc[kChunk];
      index_t best[kChunk], first[kChunk], k0[kChunk], k1[kChunk];
      for (index_t j = 0; j < cn; ++j) {
        acc[j] = kMax ? no_cell : Acc(0);
        best[j] = -1;
        first[j] = taps.at(2, c0 + j, 0);
        k0[j] = taps.at(2, c0 + j, 1);
        k1[j] = taps.at(2, c0 + j, 2);
      }
      for (index_t kd = kd0; kd < kd1; ++kd) {
        const index_t id = fd + kd * ax[0].dilation;
        for (index_t kh = kh0; kh < kh1; ++kh) {
          const index_t ih = fh + kh * ax[1].dilation;
          const T* xrow = &x(n, c, id + xs[0], ih + xs[1], 0) + xs[2];
          const index_t base = (id * H + ih) * W;
          for (index_t j = 0; j < cn; ++j) {
            for (index_t kw = k0[j]; kw < k1[j]; ++kw) {
              const index_t iw = first[j] + kw * dil;
              const Acc v = Acc(xrow[iw]);
              if constexpr (kMax) {
                if (best[j] < 0 || v > acc[j] || v != v) {
                  acc[j] = v;
                  best[j] = base + iw;
                }
              } else {
                acc[j] += v;
              }
            }
          }
        }
      }
      for (index_t j = 0; j < cn; ++j) {
        if constexpr (kMax) {
          yrow[c0 + j] = T(acc[j]);
          arow[c0 + j] = best[j];
        } else {
          yrow[c0 + j] = T(acc[j] * scale);
        }
      }
    }
  }

  // The average-pooling row through a buffer of summed input rows; false (nothing written) when
  // one cell's window is wider than the buffer.
  bool avgRow(index_t n, index_t c, index_t od, index_t oh, index_t w0, index_t w1) const {
    constexpr index_t kBuf = 512;
    const index_t dil = ax[2].dilation, stride = ax[2].stride;
    const index_t span = dil * (ax[2].taps - 1) + 1;
    if (span + stride + 1 > kBuf) return false;
    const index_t per = (kBuf - 1 - span) / stride + 1;  // cells whose input cells fit the buffer
    const index_t fd = taps.at(0, od, 0), kd0 = taps.at(0, od, 1), kd1 = taps.at(0, od, 2);
    const index_t fh = taps.at(1, oh, 0), kh0 = taps.at(1, oh, 1), kh1 = taps.at(1, oh, 2);
    T* yrow = &y(n, c, od + ys[0], oh + ys[1], 0) + ys[2];
    for (index_t c0 = w0; c0 < w1; c0 += per) {
      const index_t c1 = w1 - c0 < per ? w1 : c0 + per;
      // Input cells [lo, hi): every tap of the cells [c0, c1), at most (per - 1) stride + span.
      index_t lo = std::numeric_limits<index_t>::max(), hi = 0;
      for (index_t o = c0; o < c1; ++o) {
        const index_t f = taps.at(2, o, 0), k0 = taps.at(2, o, 1), k1 = taps.at(2, o, 2);
        if (k0 >= k1) continue;
        lo = std::min(lo, f + k0 * dil);
        hi = std::max(hi, f + (k1 - 1) * dil + 1);
      }
      const index_t len = hi > lo ? hi - lo : 0;
      if (len + 1 > kBuf) return false;
      Acc buf[kBuf];
      for (index_t i = 0; i <= len; ++i)  // one zero past the end, for clamped outside taps
        buf[i] = Acc(0);
      for (index_t kd = kd0; kd < kd1; ++kd) {
        const index_t id = fd + kd * ax[0].dilation;
        for (index_t kh = kh0; kh < kh1; ++kh) {
          const index_t ih = fh + kh * ax[1].dilation;
          const T* xrow = &x(n, c, id + xs[0], ih + xs[1], 0) + xs[2] + lo;
          for (index_t i = 0; i < len; ++i)
            buf[i] += Acc(xrow[i]);
        }
      }
      // Every tap of the window, those outside the volume adding +0 (which changes no sum): a
      // fixed trip count the compiler vectorises over the cells. An outside tap's index is
      // clamped into the buffer, which is read but not used.
      const index_t* r = &taps.at(2, c0, 0);
      const index_t cells = c1 - c0;
      const Acc* b = buf;
      T* out = yrow + c0;
      const Acc sc = scale;
      // Cells [ja, jb) of the chunk, clamped taps.
      const auto sum = [&](auto window, index_t ja, index_t jb) {
        for (index_t j = ja; j < jb; ++j) {
          const index_t f = r[3 * j] - lo, k0 = r[3 * j + 1], k1 = r[3 * j + 2];
          Acc acc = Acc(0);
          for (index_t kw = 0; kw < decltype(window)::value; ++kw) {
            const index_t i = std::min(std::max<index_t>(f + kw * dil, 0), len);
            acc += kw >= k0 && kw < k1 ? b[i] : Acc(0);
          }
          out[j] = T(acc * sc);
        }
      };
      // The interior cells (every tap in the volume) with constant-stride taps, the others with
      // clamped ones: the same terms in the same order.
      const index_t ia = std::min(std::max(wfull0, c0), c1),
                    ib = std::min(std::max(wfull1, ia), c1);
      const bool interior = ib > ia && withRowShape(stride, ax[2].taps, dil, [&](auto s, auto k) {
                              avgPoolRowInterior<decltype(s)::value, decltype(k)::value>(
                                  b + (ia * stride - ax[2].padding - lo), ib - ia, sc, yrow + ia);
                            });
      const bool fixed = withFixedTaps(ax[2].taps, [&](auto window) {
        if (interior) {
          sum(window, 0, ia - c0);
          sum(window, ib - c0, cells);
        } else {
          sum(window, 0, cells);
        }
      });
      if (!fixed)
        for (index_t j = 0; j < cells; ++j) {
          const index_t f = r[3 * j] - lo;
          Acc acc = Acc(0);
          for (index_t kw = r[3 * j + 1]; kw < r[3 * j + 2]; ++kw)
            acc += buf[f + kw * dil];
          out[j] = T(acc * sc);
        }
    }
    return true;
  }
};

template <class T, class MemorySpace, bool kMax>
struct PoolBackwardBody : PoolBodyCommon<T> {
  using Common = PoolBodyCommon<T>;
  using Common::ax, Common::as, Common::scale, Common::xs, Common::ys;
  using typename Common::Acc;
  typename PoolViews<T, MemorySpace>::const_tensor dy;
  typename PoolViews<T, MemorySpace>::const_index_tensor argmax;  // max only
  typename PoolViews<T, MemorySpace>::tensor dx;
  PoolRanges<MemorySpace> outputs;  // {o0, o1} per input coordinate, clipped to dy_box
  bool dilated;                     // some dilation > 1: average pooling tests for window gaps
  bool planes = false;              // average: avgBackwardPlaneK3S2P1; max: denseMaxRow
  index_t dyw0 = 0, dyw1 = 0;       // dy_box along W
  bool stream = false;  // dx stored around the caches (avgBackwardPlaneK3S2P1, denseMaxPlane)
  bool whole = false;   // average, float: whole rows through avgBackwardWholeRowsK3S2P1
  bool plane8 = false;  // average, float: 8 x 8 planes through avgBackwardPlane8x8K3S2P1
  // k3s2p1 along H over every row of an even H, dy_box too: the whole rows go in pairs
  bool pairs_h = false;
  KOKKOS_INLINE_FUNCTION void operator()(index_t n, index_t c, index_t id, index_t ih,
                                         index_t iw) const {
    const index_t od0 = outputs.at(0, id, 0), od1 = outputs.at(0, id, 1);
    const index_t oh0 = outputs.at(1, ih, 0), oh1 = outputs.at(1, ih, 1);
    const index_t ow0 = outputs.at(2, iw, 0), ow1 = outputs.at(2, iw, 1);
    const index_t self = (id * ax[1].extent + ih) * ax[2].extent + iw;
    Acc sum = Acc(0);
    for (index_t od = od0; od < od1; ++od)
      for (index_t oh = oh0; oh < oh1; ++oh)
        for (index_t ow = ow0; ow < ow1; ++ow) {
          if constexpr (kMax) {
            if (argmax(n, c, od + as[0], oh + as[1], ow + as[2]) == self)
              sum += Acc(dy(n, c, od + ys[0], oh + ys[1], ow + ys[2]));
          } else {
            if (!dilated || (ax[0].isTap(id, od) && ax[1].isTap(ih, oh) && ax[2].isTap(iw, ow)))
              sum += Acc(dy(n, c, od + ys[0], oh + ys[1], ow + ys[2]));
          }
        }
    dx(n, c, id + xs[0], ih + xs[1], iw + xs[2]) = T(kMax ? sum : sum * scale);
  }

  // Input rows [h0, h1), cells [w0, w1) of plane (n, c, id): average k3s2p1 along W through
  // avgBackwardPlaneK3S2P1 (Pool3dHostPlanes.hpp), max k2s2 along W through denseMaxRow where it
  // applies, otherwise row by row.
  void hostPlane(index_t n, index_t c, index_t id, index_t h0, index_t h1, index_t w0,
                 index_t w1) const {
#if HALO3D_POOL3D_AVX512
    if constexpr (!kMax && std::is_same_v<T, float>)
      if (plane8 && h0 == 0 && h1 == 8 && w0 == 0 && w1 == 8) {
        const index_t od0 = outputs.at(0, id, 0), od1 = outputs.at(0, id, 1);
        if (od1 - od0 == 1) return avgBackwardPlane8x8K3S2P1<1>(*this, n, c, id, od0);
        if (od1 - od0 == 2) return avgBackwardPlane8x8K3S2P1<2>(*this, n, c, id, od0);
        if (od1 <= od0) return avgBackwardPlane8x8K3S2P1<0>(*this, n, c, id, od0);
      }
    if constexpr (!kMax && std::is_same_v<T, float>)
      if (whole && w0 == 0 && w1 == ax[2].extent)
        return stream ? avgBackwardWholeRowsK3S2P1<true>(*this, n, c, id, h0, h1)
                      : avgBackwardWholeRowsK3S2P1<false>(*this, n, c, id, h0, h1);
#endif
    if constexpr (!kMax)
      if (planes) return avgBackwardPlaneK3S2P1<T>(*this, n, c, id, h0, h1, w0, w1, dyw0, dyw1);
    if constexpr (kMax)
      if (planes && denseMaxPlane(n, c, id, h0, h1, w0, w1)) return;
    for (index_t ih = h0; ih < h1; ++ih)
      if (!(planes && denseMaxRow(n, c, id, ih, w0, w1))) hostRow(n, c, id, ih, w0, w1);
  }

  // denseMaxRow over a whole plane of rows in pairs (k2s2 along H as well, the box starting on an
  // even row and cell, every row's output in dy_box): one loop over the output rows, the row
  // pointers stepped by the views' strides, and the two input rows of an output row (ih and
  // ih + 1) from one load of its dy and argmax (maxPoolBackwardRowsK2S2). On 16^3 volumes (rows of
  // 16 cells) the per-row set-up of denseMaxRow was most of the time. The only rows that stream.
  // False (nothing written) for other planes, which take the rows, or without the AVX-512 rows.
  bool denseMaxPlane(index_t n, index_t c, index_t id, index_t h0, index_t h1, index_t w0,
                     index_t w1) const {
#if HALO3D_POOL3D_AVX512
    if constexpr (std::is_same_v<T, float>) {
      const index_t od0 = outputs.at(0, id, 0), od1 = outputs.at(0, id, 1);
      const PoolAxis& ah = ax[1];
      if (!(od1 - od0 == 1 && ah.stride == 2 && ah.taps == 2 && ah.padding == 0 &&
            ah.dilation == 1 && 2 * dyw0 <= w0 && w1 <= 2 * dyw1 && w0 % 2 == 0 &&
            (w1 - w0) % 2 == 0 && h1 > h0 && h0 % 2 == 0 && (h1 - h0) % 2 == 0 &&
            outputs.at(1, h0, 0) == h0 / 2 && outputs.at(1, h0, 1) == h0 / 2 + 1 &&
            outputs.at(1, h1 - 1, 0) == (h1 - 1) / 2 &&
            outputs.at(1, h1 - 1, 1) == (h1 - 1) / 2 + 1))
        return false;
      const index_t W = ax[2].extent;
      const index_t dxs = index_t(dx.stride_3()), dys = index_t(dy.stride_3()),
                    ars = index_t(argmax.stride_3());
      const float* dyrow = &dy(n, c, od0 + ys[0], h0 / 2 + ys[1], 0) + ys[2] + w0 / 2;
      const index_t* arow = &argmax(n, c, od0 + as[0], h0 / 2 + as[1], 0) + as[2] + w0 / 2;
      float* dxrow = &dx(n, c, id + xs[0], h0 + xs[1], 0) + xs[2] + w0;
      index_t rowbase = (id * ah.extent + h0) * W + w0;
      const auto rows = [&](auto streamed) {
        for (index_t ih = h0; ih < h1; ih += 2) {
          maxPoolBackwardRowsK2S2<2, decltype(streamed)::value>(dyrow, arow, rowbase, W, w1 - w0,
                                                                dxrow, dxrow + dxs);
          dyrow += dys;
          arow += ars;
          rowbase += 2 * W;
          dxrow += 2 * dxs;
        }
      };
      if (stream) {
        rows(std::true_type());
        _mm_sfence();  // the streamed dx lines, visible before the kernel returns
      } else {
        rows(std::false_type());
      }
      return true;
    }
#endif
    (void)n, (void)c, (void)id, (void)h0, (void)h1, (void)w0, (void)w1;
    return false;
  }

  // Max pooling with window 2, stride 2 and no padding along W, where input cells [w0, w1) of row
  // (n, c, id, ih) have at most one output along D and H: dx written densely in one pass
  // (maxPoolBackwardRowK2S2); false (nothing written) otherwise.
  bool denseMaxRow(index_t n, index_t c, index_t id, index_t ih, index_t w0, index_t w1) const {
    const index_t od0 = outputs.at(0, id, 0), od1 = outputs.at(0, id, 1);
    const index_t oh0 = outputs.at(1, ih, 0), oh1 = outputs.at(1, ih, 1);
    if (od1 - od0 > 1 || oh1 - oh0 > 1) return false;
    T* dxrow = &dx(n, c, id + xs[0], ih + xs[1], 0) + xs[2];
    // Cells [lo, hi) have their output in dy_box; the others get 0.
    index_t lo = std::max(w0, 2 * dyw0), hi = std::min(w1, 2 * dyw1);
    if (od1 <= od0 || oh1 <= oh0 || hi <= lo) lo = hi = w1;
    for (index_t iw = w0; iw < lo; ++iw)
      dxrow[iw] = T(0);
    for (index_t iw = hi; iw < w1; ++iw)
      dxrow[iw] = T(0);
    if (lo >= hi) return true;
    const T* dyrow = &dy(n, c, od0 + ys[0], oh0 + ys[1], 0) + ys[2];
    const index_t* arow = &argmax(n, c, od0 + as[0], oh0 + as[1], 0) + as[2];
    const index_t rowbase = (id * ax[1].extent + ih) * ax[2].extent;
    const auto cell = [&](index_t iw) {
      const index_t o = iw / 2;
      dxrow[iw] = T((arow[o] == rowbase + iw ? Acc(dyrow[o]) : Acc(0)) + Acc(0));
    };
    index_t iw = lo;
    if (iw & 1) cell(iw++);
    const index_t pairs = (hi - iw) / 2;
#if HALO3D_POOL3D_AVX512
    if constexpr (std::is_same<T, float>::value) {
      maxPoolBackwardRowK2S2(dyrow + iw / 2, arow + iw / 2, rowbase + iw, 2 * pairs, dxrow + iw);
      iw += 2 * pairs;
    }
#endif
    for (; iw < hi; ++iw)
      cell(iw);
    return true;
  }

  // Input cells [w0, w1) of row (n, c, id, ih) through row pointers of dy and argmax. Average
  // pooling sums the covering (od, oh) rows of dy into one row buffer first, then each cell's
  // outputs from it (see PoolForwardBody::hostRow); max pooling keeps operator()'s order.
  void hostRow(index_t n, index_t c, index_t id, index_t ih, index_t w0, index_t w1) const {
    if (withRowShape(ax[2].stride, ax[2].taps, ax[2].dilation, [&](auto s, auto k) {
          spreadRow<decltype(s)::value, decltype(k)::value>(n, c, id, ih, w0, w1);
        }))
      return;
    if constexpr (!kMax)
      if (avgRow(n, c, id, ih, w0, w1)) return;
    cellRow(n, c, id, ih, w0, w1);
  }

  // Input cells [w0, w1) of row (n, c, id, ih) for S and KW known at compile time (SpreadRow):
  // each candidate dy row (max: the dy values whose argmax is the cell; average: the candidate
  // rows' sum) spread over its outputs' W taps, in chunks of input cells.
  template <int S, int KW>
  void spreadRow(index_t n, index_t c, index_t id, index_t ih, index_t w0, index_t w1) const {
    constexpr index_t kPer = 256;          // input cells per chunk
    constexpr index_t kSlots = kPer + 32;  // at most kPer + KW + 2 S + 1 positions (below)
    const index_t od0 = outputs.at(0, id, 0), od1 = outputs.at(0, id, 1);
    const index_t oh0 = outputs.at(1, ih, 0), oh1 = outputs.at(1, ih, 1);
    const index_t p = ax[2].padding;
    const index_t rowbase = (id * ax[1].extent + ih) * ax[2].extent;
    T* dxrow = &dx(n, c, id + xs[0], ih + xs[1], 0) + xs[2];
    for (index_t c0 = w0; c0 < w1; c0 += kPer) {
      const index_t c1 = w1 - c0 < kPer ? w1 : c0 + kPer;
      // The outputs over [c0, c1): [o0(c0), o1(c1 - 1)), both ends growing with the cell.
      const index_t oa = outputs.at(2, c0, 0), ob = outputs.at(2, c1 - 1, 1);
      const index_t count = ob - oa;
      if (count <= 0) {
        for (index_t iw = c0; iw < c1; ++iw)
          dxrow[iw] = T(0);
        continue;
      }
      // Positions from `base` = tap 0 of output oa, moved down by whole strides to at most c0
      // (oa can lie past c0's outputs when dy_box cuts them off), up to the last input cell or
      // the last output's last tap: c0 - base < max(S, KW), so at most kPer + KW + 2 S positions.
      const index_t p0 = oa * S - p;
      const index_t lead = p0 > c0 ? (p0 - c0 + S - 1) / S : 0;
      const index_t base = p0 - lead * S;
      const index_t last = std::max(c1 - 1, (ob - 1) * S - p + KW - 1) - base;
      const index_t len = last / S + 1;
      if (S * len > kSlots || count > kSlots) {  // not reached (bounds above); cells instead
        if constexpr (!kMax)
          if (avgRow(n, c, id, ih, c0, c1)) continue;
        cellRow(n, c, id, ih, c0, c1);
        continue;
      }
      Acc slots[kSlots], scratch[kSlots];
      for (index_t i = 0; i < S * len; ++i)
        slots[i] = Acc(0);
      const SpreadRow<S, KW, Acc> spread{slots, len, lead};
      if constexpr (kMax) {
        for (index_t od = od0; od < od1; ++od)
          for (index_t oh = oh0; oh < oh1; ++oh) {
            const T* dyrow = &dy(n, c, od + ys[0], oh + ys[1], 0) + ys[2] + oa;
            const index_t* arow = &argmax(n, c, od + as[0], oh + as[1], 0) + as[2] + oa;
            // Tap kw of output oa + o is cell rowbase + t0 + S o + kw of this row; a position
            // outside [0, W) can match a cell of another row, but is never written out.
            const index_t t0 = rowbase + p0;
            spread.add(count, [&](index_t o, int kw) {
              return arow[o] == t0 + S * o + kw ? Acc(dyrow[o]) : Acc(0);
            });
          }
      } else {
        Acc sum[kSlots];
        for (index_t o = 0; o < count; ++o)
          sum[o] = Acc(0);
        for (index_t od = od0; od < od1; ++od)
          for (index_t oh = oh0; oh < oh1; ++oh) {
            if (dilated && !(ax[0].isTap(id, od) && ax[1].isTap(ih, oh))) continue;
            const T* dyrow = &dy(n, c, od + ys[0], oh + ys[1], 0) + ys[2] + oa;
            for (index_t o = 0; o < count; ++o)
              sum[o] += Acc(dyrow[o]);
          }
        spread.add(count, [&](index_t o, int) { return sum[o]; });
      }
      spread.write(c0 - base, c1 - c0, kMax ? Acc(1) : scale, dxrow + c0, scratch);
    }
  }

  // Any window, cell by cell (see hostRow).
  void cellRow(index_t n, index_t c, index_t id, index_t ih, index_t w0, index_t w1) const {
    constexpr index_t kChunk = 64;
    const index_t od0 = outputs.at(0, id, 0), od1 = outputs.at(0, id, 1);
    const index_t oh0 = outputs.at(1, ih, 0), oh1 = outputs.at(1, ih, 1);
    const index_t self = (id * ax[1].extent + ih) * ax[2].extent;
    T* dxrow = &dx(n, c, id + xs[0], ih + xs[1], 0) + xs[2];
    for (index_t c0 = w0; c0 < w1; c0 += kChunk) {
      const index_t cn = w1 - c0 < kChunk ? w1 - c0 : kChunk;
      Acc acc[kChunk];
      index_t o0[kChunk], o1[kChunk];
      for (index_t j = 0; j < cn; ++j) {
        acc[j] = Acc(0);
        o0[j] = outputs.at(2, c0 + j, 0);
        o1[j] = outputs.at(2, c0 + j, 1);
      }
      for (index_t od = od0; od < od1; ++od)
        for (index_t oh = oh0; oh < oh1; ++oh) {
          const T* dyrow = &dy(n, c, od + ys[0], oh + ys[1], 0) + ys[2];
          const index_t* arow = kMax ? &argmax(n, c, od + as[0], oh + as[1], 0) + as[2] : nullptr;
          const bool row_taps = !dilated || (ax[0].isTap(id, od) && ax[1].isTap(ih, oh));
          for (index_t j = 0; j < cn; ++j) {
            const index_t iw = c0 + j;
            for (index_t ow = o0[j]; ow < o1[j]; ++ow) {
              if constexpr (kMax) {
                if (arow[ow] == self + iw) acc[j] += Acc(dyrow[ow]);
              } else {
                if (row_taps && (!dilated || ax[2].isTap(iw, ow))) acc[j] += Acc(dyrow[ow]);
              }
            }
          }
        }
      for (index_t j = 0; j < cn; ++j)
        dxrow[c0 + j] = T(kMax ? acc[j] : acc[j] * scale);
    }
  }

  // The average-pooling row through a buffer of summed dy rows; false (nothing written) when the
  // window is wider than the buffer.
  bool avgRow(index_t n, index_t c, index_t id, index_t ih, index_t w0, index_t w1) const {
    constexpr index_t kBuf = 512;
    const index_t span = ax[2].dilation * (ax[2].taps - 1) + 1;
    if (2 * span + 8 > kBuf) return false;
    // The outputs over cells [c0, c1) lie in [o0(c0), o1(c1 - 1)), at most c1 - c0 + span + 1 of
    // them (both ends grow with the cell).
    const index_t per = kBuf - span - 4;
    const index_t od0 = outputs.at(0, id, 0), od1 = outputs.at(0, id, 1);
    const index_t oh0 = outputs.at(1, ih, 0), oh1 = outputs.at(1, ih, 1);
    T* dxrow = &dx(n, c, id + xs[0], ih + xs[1], 0) + xs[2];
    for (index_t c0 = w0; c0 < w1; c0 += per) {
      const index_t c1 = w1 - c0 < per ? w1 : c0 + per;
      const index_t lo = outputs.at(2, c0, 0);
      const index_t len = std::max<index_t>(0, outputs.at(2, c1 - 1, 1) - lo);
      // Three zeros past the end: the candidate outputs below read up to two cells past a cell's
      // last output (and discard them).
      if (len + 3 > kBuf) return false;
      Acc buf[kBuf];
      for (index_t i = 0; i < len + 3; ++i)
        buf[i] = Acc(0);
      for (index_t od = od0; od < od1; ++od)
        for (index_t oh = oh0; oh < oh1; ++oh) {
          if (dilated && !(ax[0].isTap(id, od) && ax[1].isTap(ih, oh))) continue;
          const T* dyrow = &dy(n, c, od + ys[0], oh + ys[1], 0) + ys[2] + lo;
          for (index_t i = 0; i < len; ++i)
            buf[i] += Acc(dyrow[i]);
        }
      if (dilated) {
        for (index_t iw = c0; iw < c1; ++iw) {
          const index_t o0 = outputs.at(2, iw, 0), o1 = outputs.at(2, iw, 1);
          Acc acc = Acc(0);
          for (index_t ow = o0; ow < o1; ++ow)
            if (ax[2].isTap(iw, ow)) acc += buf[ow - lo];
          dxrow[iw] = T(acc * scale);
        }
      } else {
        // A fixed number of candidate outputs per cell (absent ones add +0, which changes no sum):
        // a loop the compiler vectorises over the cells.
        const index_t* r = &outputs.at(2, c0, 0);
        const index_t cells = c1 - c0;
        const Acc* b = buf;
        T* out = dxrow + c0;
        const Acc sc = scale;
        const auto sum = [&](auto most) {
          for (index_t j = 0; j < cells; ++j) {
            // o0 <= o1 <= len: a cell without outputs reads only the zeros.
            const index_t o1 = r[3 * j + 1] - lo, o0 = std::min(r[3 * j] - lo, o1);
            Acc acc = Acc(0);
            for (index_t t = 0; t < decltype(most)::value; ++t)
              acc += o0 + t < o1 ? b[o0 + t] : Acc(0);
            out[j] = T(acc * sc);
          }
        };
        if (!withFixedTaps((span - 1) / ax[2].stride + 1, sum))
          for (index_t j = 0; j < cells; ++j) {
            Acc acc = Acc(0);
            for (index_t ow = r[3 * j]; ow < r[3 * j + 1]; ++ow)
              acc += buf[ow - lo];
            out[j] = T(acc * sc);
          }
      }
    }
    return true;
  }
};

template <bool kMax, class ExecSpace, class T, class MemorySpace>
void pool3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                   const WindowGeometry& g, const HaloTensor<T, MemorySpace>& y,
                   const HaloTensor<index_t, MemorySpace>* argmax, const Box& out_box,
                   KernelPath path) {
  const char* kernel = kMax ? "maxPool3dForward" : "avgPool3dForward";
  requirePoolShapes(kernel, g, x, y);
  requireOwned(kernel, y, out_box);
  requireClippedWindow(kernel, g, x, out_box);
  PoolForwardBody<T, MemorySpace, kMax> body;
  body.bind(kernel, g, x, y, argmax, out_box);
  if (argmax) body.argmax = argmax->view();
  body.x = x.view();
  body.y = y.view();
#if HALO3D_POOL3D_AVX512
  // Whole dense 4^3 volumes, 16 channels per work item, before the tables that they do not use (a
  // call is a few hundred nanoseconds); the body by address, not copied with its views' counts.
  if constexpr (!kMax && kRunsOnHost<ExecSpace> && std::is_same_v<T, float>) {
    if (poolVolume4(g, x.block().globalExtents()) &&
        poolChannelsApply(path, y.block().channels()) && x.view().stride_2() == 16 &&
        x.view().stride_3() == 4 && y.view().stride_2() == 4 && y.view().stride_3() == 2 &&
        out_box == Box::fromExtents({2, 2, 2})) {
      const auto* b = &body;
      forEachChannelPlane(
          "halo3d::avgPool3dForward", exec, y.block().localSamples(), y.block().channels(), 0, 1,
          [=](index_t n, index_t c0, index_t) { avgForwardVolume4K3S2P1(*b, n, c0); },
          y.block().localSamples() * y.block().channels() * 64);
      return;
    }
  }
#endif
  body.taps = PoolRanges<MemorySpace>::template make<ExecSpace>(
      out_box, [&](int a, index_t o, index_t* row) {
        index_t first;
        int k0, k1;
        body.ax[a].tapsInVolume(o, first, k0, k1);
        row[0] = first;
        row[1] = k0;
        row[2] = k1;
      });
  body.no_cell = -std::numeric_limits<ComputeType<T>>::infinity();
  {
    const PoolAxis& w = body.ax[2];
    const index_t last = w.extent - 1 - w.dilation * (w.taps - 1);  // the last full window's first
    body.wfull0 = (w.padding + w.stride - 1) / w.stride;
    body.wfull1 = last + w.padding >= 0 ? (last + w.padding) / w.stride + 1 : 0;
    const Extents3 e = x.block().globalExtents();
    body.index32 = e[0] * e[1] * e[2] <= index_t(std::numeric_limits<std::int32_t>::max());
  }
  body.planes =
      kMax ? g.kernel == std::array<int, 3>{2, 2, 2} && g.stride == std::array<int, 3>{2, 2, 2} &&
                 g.padding == std::array<int, 3>{0, 0, 0} &&
                 g.dilation == std::array<int, 3>{1, 1, 1} && body.index32
           : g.dilation == std::array<int, 3>{1, 1, 1} && g.kernel[0] <= 3 && g.kernel[1] <= 3;
  if constexpr (!kMax && kRunsOnHost<ExecSpace> && std::is_same_v<T, float>) {
    const index_t W = x.block().globalExtents()[2];
    body.whole =
        body.planes &&
        poolWholeRowsAlongW(g.kernel[2], g.stride[2], g.padding[2], g.dilation[2], W, false) &&
        W <= kPoolWholeRowMax && out_box.min(2) == 0 && 2 * out_box.max(2) == W;
    body.plane8 = body.planes && poolPlane8x8(g, x.block().globalExtents()) &&
                  x.view().stride_3() == 8 && y.view().stride_3() == 4 && out_box.min(1) == 0 &&
                  out_box.max(1) == 4 && out_box.min(2) == 0 && out_box.max(2) == 4;
  }
  // The input cells read: about the window's span over the stride per output cell and axis.
  index_t input_cells = y.block().localSamples() * y.block().channels();
  for (int a = 0; a < 3; ++a)
    input_cells *= std::max<index_t>(out_box.extent(a) * g.stride[a], index_t(g.kernel[a]));
#if HALO3D_POOL3D_AVX512
  if constexpr (!kMax && kRunsOnHost<ExecSpace> && std::is_same_v<T, float>) {
    const Extents3 e = x.block().globalExtents();
    // Output cells along W per chunk and output rows per band such that a band's window
    // rectangle fits avgForwardChannels' scratch (kPoolChannelRow cells of kPoolChannelRect).
    const index_t ow0 = out_box.min(2), ow1 = out_box.max(2), oh0 = out_box.min(1),
                  oh1 = out_box.max(1);
    const index_t wc = std::min(ow1 - ow0, (kPoolChannelRow - g.kernel[2]) / g.stride[2] + 1);
    const index_t rw = std::min((wc - 1) * g.stride[2] + g.kernel[2], e[2]);
    const index_t rh = kPoolChannelRect / std::max<index_t>(rw, 1);
    const index_t hb = rh >= g.kernel[1] ? (rh - g.kernel[1]) / g.stride[1] + 1 : 0;
    if (!out_box.empty() && body.planes && !body.whole && !body.plane8 && wc >= 1 && hb >= 1 &&
        withRowShape(g.stride[2], g.kernel[2], g.dilation[2], [](auto, auto) {}) &&
        poolChannelsApply(path, y.block().channels()) && e[1] * e[2] <= poolChannelPlaneCells()) {
      forEachChannelPlane(
          "halo3d::avgPool3dForward", exec, y.block().localSamples(), y.block().channels(),
          out_box.min(0), out_box.extent(0),
          [=](index_t n, index_t c0, index_t od) {
            for (index_t h = oh0; h < oh1; h += hb)
              for (index_t w = ow0; w < ow1; w += wc)
                avgForwardChannels(body, n, c0, od, h, std::min(h + hb, oh1), w,
                                   std::min(w + wc, ow1));
          },
          input_cells);
      return;
    }
  }
#endif
  forEachPoolCell(kMax ? "halo3d::maxPool3dForward" : "halo3d::avgPool3dForward", exec,
                  y.block().localSamples(), y.block().channels(), out_box, body, path, input_cells);
}

template <bool kMax, class ExecSpace, class T, class MemorySpace>
void pool3dBackward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
                    const HaloTensor<index_t, MemorySpace>* argmax, const WindowGeometry& g,
                    const HaloTensor<T, MemorySpace>& dx, const Box& dx_box, const Box& dy_box,
                    KernelPath path) {
  const char* kernel = kMax ? "maxPool3dBackward" : "avgPool3dBackward";
  requirePoolShapes(kernel, g, dx, dy);
  requireInVolume(kernel, dx, dx_box, "input-gradient box");
  requireInVolume(kernel, dy, dy_box, "output-gradient box dy_box");
  PoolBackwardBody<T, MemorySpace, kMax> body;
  body.bind(kernel, g, dx, dy, argmax, dy_box);
  if (argmax) body.argmax = argmax->view();
  body.dy = dy.view();
  body.dx = dx.view();
#if HALO3D_POOL3D_AVX512
  // Whole dense 4^3 volumes, 16 channels per work item, before the tables that they do not use (a
  // call is a few hundred nanoseconds); the body by address, not copied with its views' counts.
  if constexpr (!kMax && kRunsOnHost<ExecSpace> && std::is_same_v<T, float>) {
    if (poolVolume4(g, dx.block().globalExtents()) &&
        poolChannelsApply(path, dx.block().channels()) && dx.view().stride_2() == 16 &&
        dx.view().stride_3() == 4 && dy.view().stride_2() == 4 && dy.view().stride_3() == 2 &&
        dx_box == Box::fromExtents({4, 4, 4}) && dy_box == Box::fromExtents({2, 2, 2})) {
      static const PoolVolume4Terms terms = avgBackwardVolume4Terms();
      const auto* b = &body;
      forEachChannelPlane(
          "halo3d::avgPool3dBackward", exec, dx.block().localSamples(), dx.block().channels(), 0, 1,
          [=](index_t n, index_t c0, index_t) { avgBackwardVolume4K3S2P1(*b, terms, n, c0); },
          dx.block().localSamples() * dx.block().channels() * dx_box.size());
      return;
    }
  }
#endif
  body.outputs = PoolRanges<MemorySpace>::template make<ExecSpace>(
      dx_box, [&](int a, index_t i, index_t* row) {
        body.ax[a].outputsOver(i, dy_box.min(a), dy_box.max(a), row[0], row[1]);
        row[2] = 0;
      });
  body.dilated = g.dilation != std::array<int, 3>{1, 1, 1};
  // Average: the gathering planes; max: the dense rows (32-bit indices, see
  // maxPoolBackwardRowK2S2).
  const Extents3 e = dx.block().globalExtents();
  body.planes = kMax ? !body.dilated && g.kernel[2] == 2 && g.stride[2] == 2 && g.padding[2] == 0 &&
                           e[0] * e[1] * e[2] <= index_t(std::numeric_limits<std::int32_t>::max())
                     : !body.dilated && g.kernel[2] == 3 && g.stride[2] == 2 && g.padding[2] == 1;
  body.dyw0 = dy_box.min(2);
  body.dyw1 = dy_box.max(2);
  if constexpr (!kMax && kRunsOnHost<ExecSpace> && std::is_same_v<T, float>) {
    // At most 2 covering outputs along D and H: ceil(taps / stride) per axis.
    const auto covering = [&](int a) { return (g.kernel[a] + g.stride[a] - 1) / g.stride[a]; };
    body.whole =
        body.planes &&
        poolWholeRowsAlongW(g.kernel[2], g.stride[2], g.padding[2], g.dilation[2], e[2], true) &&
        covering(0) <= 2 && covering(1) <= 2 && dx_box.min(2) == 0 && dx_box.max(2) == e[2] &&
        dy_box.min(2) == 0 && 2 * dy_box.max(2) == e[2];
    body.pairs_h = g.kernel[1] == 3 && g.stride[1] == 2 && g.padding[1] == 1 &&
                   g.dilation[1] == 1 && e[1] % 2 == 0 && dx_box.min(1) == 0 &&
                   dx_box.max(1) == e[1] && dy_box.min(1) == 0 && 2 * dy_box.max(1) == e[1];
    body.plane8 = body.planes && !body.dilated && poolPlane8x8(g, e) && covering(0) <= 2 &&
                  dx.view().stride_3() == 8 && dy.view().stride_3() == 4 && dx_box.min(1) == 0 &&
                  dx_box.max(1) == 8 && dx_box.min(2) == 0 && dx_box.max(2) == 8 &&
                  dy_box.min(1) == 0 && dy_box.max(1) == 4 && dy_box.min(2) == 0 &&
                  dy_box.max(2) == 4;
  }
  body.stream =
      kRunsOnHost<ExecSpace> && double(dx.block().localSamples()) * double(dx.block().channels()) *
                                        double(dx_box.size()) * sizeof(T) >=
                                    (kMax ? maxPoolStreamMinBytes() : poolStreamMinBytes());
#if HALO3D_POOL3D_AVX512
  if constexpr (!kMax && kRunsOnHost<ExecSpace> && std::is_same_v<T, float>) {
    if (!dx_box.empty() && body.planes && !body.whole && !body.plane8 &&
        poolChannelsApply(path, dx.block().channels()) && poolChannelPlaneCells() > 0) {
      const index_t w0 = dx_box.min(2), w1 = dx_box.max(2);
      forEachChannelPlane(
          "halo3d::avgPool3dBackward", exec, dx.block().localSamples(), dx.block().channels(),
          dx_box.min(0), dx_box.extent(0),
          [=](index_t n, index_t c0, index_t id) {
            avgBackwardChannelsK3S2P1(body, n, c0, id, dx_box.min(1), dx_box.max(1), w0, w1);
          },
          dx.block().localSamples() * dx.block().channels() * dx_box.size());
      return;
    }
  }
#endif
  forEachPoolCell(kMax ? "halo3d::maxPool3dBackward" : "halo3d::avgPool3dBackward", exec,
                  dx.block().localSamples(), dx.block().channels(), dx_box, body, path,
                  dx.block().localSamples() * dx.block().channels() * dx_box.size());
}

}  // namespace halo3d::kernels::impl

namespace halo3d::kernels {

template <class ExecSpace, class T, class MemorySpace>
void maxPool3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                      const WindowGeometry& g, const HaloTensor<T, MemorySpace>& y,
                      const HaloTensor<index_t, MemorySpace>& argmax, const Box& out_box,
                      KernelPath path) {
  impl::pool3dForward<true>(exec, x, g, y, &argmax, out_box, path);
}

template <class ExecSpace, class T, class MemorySpace>
void maxPool3dBackward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
                       const HaloTensor<index_t, MemorySpace>& argmax, const WindowGeometry& g,
                       const HaloTensor<T, MemorySpace>& dx, const Box& dx_box, const Box& dy_box,
                       KernelPath path) {
  impl::pool3dBackward<true>(exec, dy, &argmax, g, dx, dx_box, dy_box, path);
}

template <class ExecSpace, class T, class MemorySpace>
void avgPool3dForward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& x,
                      const WindowGeometry& g, const HaloTensor<T, MemorySpace>& y,
                      const Box& out_box, KernelPath path) {
  impl::pool3dForward<false>(exec, x, g, y, impl::noArgmax<MemorySpace>(), out_box, path);
}

template <class ExecSpace, class T, class MemorySpace>
void avgPool3dBackward(const ExecSpace& exec, const HaloTensor<T, MemorySpace>& dy,
                       const WindowGeometry& g, const HaloTensor<T, MemorySpace>& dx,
                       const Box& dx_box, const Box& dy_box, KernelPath path) {
  impl::pool3dBackward<false>(exec, dy, impl::noArgmax<MemorySpace>(), g, dx, dx_box, dy_box, path);
}

}  // namespace halo3d::kernels
