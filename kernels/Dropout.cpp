// Dropout; see Dropout.hpp for the contracts.
#include "halo3d/kernels/Dropout.hpp"

#include <cmath>

#include "halo3d/kernels/impl/ElementwiseLoops.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels {

namespace impl {

// y = x * (0 or 1 / (1 - p)) on the cells [w0, w1) of row (n, c, d, h), x times the factor as
// PyTorch does: no load hides behind the coin flip, so the loop has no unpredictable branch and
// vectorises. kTiled: draw the row's Philox blocks first, in a loop the compiler vectorises, then
// apply them (the host code, six times faster than drawing inside the cell loop); otherwise draw
// each cell's bits on its own (the device code, one cell per thread).
template <class T, class MemorySpace, bool kTiled>
struct DropoutRows {
  GlobalCells<const T, MemorySpace> x;
  GlobalCells<T, MemorySpace> y;
  RandomStream stream;
  index_t n0, channels, depth, height, width;  // the global tensor
  std::uint64_t threshold;
  ComputeType<T> keep_scale;

  KOKKOS_INLINE_FUNCTION void operator()(index_t n, index_t c, index_t d, index_t h, index_t w0,
                                         index_t w1) const {
    const std::uint64_t row =
        std::uint64_t((((n0 + n) * channels + c) * depth + d) * height + h) * width;
    const T* x_row = x.row(n, c, d, h, w0);
    T* y_row = y.row(n, c, d, h, w0);
    using C = ComputeType<T>;
    const C scale = keep_scale;
    const std::uint64_t cut = threshold;
    auto apply = [&](index_t w, std::uint32_t bits) {
      y_row[w - w0] = T(C(x_row[w - w0]) * (C(bits >= cut) * scale));
    };
    if constexpr (kTiled) {
      constexpr index_t kTile = 64;
      std::uint32_t bits[kTile + 4];
      for (index_t t0 = w0; t0 < w1; t0 += kTile) {
        const index_t t1 = t0 + kTile < w1 ? t0 + kTile : w1;
        const std::uint64_t b0 = (row + std::uint64_t(t0)) >> 2;
        const std::uint64_t blocks = ((row + std::uint64_t(t1) - 1) >> 2) - b0 + 1;
        for (std::uint64_t j = 0; j < blocks; ++j) {
          const Philox4x32::Counter block = randomBlock(stream, b0 + j);
          for (int k = 0; k < 4; ++k)
            bits[4 * j + k] = block.v[k];
        }
        const index_t skip = index_t(row + std::uint64_t(t0) - 4 * b0);
        for (index_t w = t0; w < t1; ++w)
          apply(w, bits[skip + w - t0]);
      }
    } else {
      for (index_t w = w0; w < w1; ++w)
        apply(w, randomBits(stream, row + std::uint64_t(w)));
    }
  }
};

// Forward and backward are the same masked scaling; `kernel` names the caller in errors and
// profiles.
template <class ExecSpace, class T>
void applyMask(const char* kernel, const ExecSpace& exec, const Tensor<T, ExecSpace>& x, double p,
               const RandomStream& stream, const Tensor<T, ExecSpace>& y, const Box& box,
               KernelPath path) {
  using Memory = typename ExecSpace::memory_space;
  require<InputError>(p >= 0.0 && p < 1.0, kernel, ": drop probability ", p, " is not in [0, 1)");
  requireCellwise(kernel, y, box, x);
  const Shape5& g = y.block().globalShape();
  const std::string label = std::string("halo3d::") + kernel;
  const auto make = [&](auto rows) {
    rows.x = readCells(x);
    rows.y = writeCells(y);
    rows.stream = stream;
    rows.n0 = y.block().sampleBegin();
    rows.channels = g[1];
    rows.depth = g[2];
    rows.height = g[3];
    rows.width = g[4];
    rows.threshold = std::uint64_t(std::llround(std::ldexp(p, 32)));
    rows.keep_scale = ComputeType<T>(1.0 / (1.0 - p));
    return rows;
  };
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
      forEachRow(exec, label, y.block().localSamples(), g[1], box,
                 make(DropoutRows<T, Memory, true>()), path);
      return;
    }
  }
  forEachRow(exec, label, y.block().localSamples(), g[1], box,
             make(DropoutRows<T, Memory, false>()), KernelPath::Device);
}

}  // namespace impl

template <class ExecSpace, class T>
void dropoutForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, double p,
                    const RandomStream& stream, const Tensor<T, ExecSpace>& y, const Box& box,
                    KernelPath path) {
  impl::applyMask("dropoutForward", exec, x, p, stream, y, box, path);
}

template <class ExecSpace, class T>
void dropoutBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy, double p,
                     const RandomStream& stream, const Tensor<T, ExecSpace>& dx, const Box& box,
                     KernelPath path) {
  impl::applyMask("dropoutBackward", exec, dy, p, stream, dx, box, path);
}

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_DROPOUT, )
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_DROPOUT, )

}  // namespace halo3d::kernels
