// Dropout; see Dropout.hpp for the contracts.
#include "halo3d/kernels/Dropout.hpp"

#include <cmath>

#include "halo3d/kernels/impl/ElementwiseChecks.hpp"
#include "halo3d/kernels/impl/ElementwiseLoops.hpp"

namespace halo3d::kernels {

namespace impl {

// Forward and backward are the same masked scaling; `kernel` names the caller in errors and
// profiles.
template <class ExecSpace, class T>
void applyMask(const char* kernel, const ExecSpace& exec, const Tensor<T, ExecSpace>& x, double p,
               const RandomStream& stream, const Tensor<T, ExecSpace>& y, const Box& box) {
  require<InputError>(p >= 0.0 && p < 1.0, kernel, ": drop probability ", p, " is not in [0, 1)");
  requireCellwise(kernel, y, box, x);
  const Shape5& g = y.block().globalShape();
  const index_t channels = g[1], depth = g[2], height = g[3], width = g[4];
  const index_t n0 = y.block().sampleBegin();
  const std::uint64_t threshold = std::uint64_t(std::llround(std::ldexp(p, 32)));
  const T keep_scale = T(1.0 / (1.0 - p));
  const auto xc = readCells(x);
  const auto yc = writeCells(y);
  forEachRow(
      exec, std::string("halo3d::") + kernel, y.block().localSamples(), channels, box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w0, index_t w1) {
        const std::uint64_t row =
            std::uint64_t((((n0 + n) * channels + c) * depth + d) * height + h) * width;
        // x times a 0 or 1/(1-p) factor, as PyTorch does: no load hides behind the coin flip, so
        // the loop has no unpredictable branch and vectorises.
        const T* x_row = xc.row(n, c, d, h, w0);
        T* y_row = yc.row(n, c, d, h, w0);
        const T scale = keep_scale;
        const std::uint64_t cut = threshold;
        // Captured before the `if constexpr`, as nvcc requires of extended lambdas.
        const RandomStream keys = stream;
        auto apply = [&](index_t w, std::uint32_t bits) {
          y_row[w - w0] = x_row[w - w0] * (T(bits >= cut) * scale);
        };
        if constexpr (kRunsOnHost<ExecSpace>) {
          // A tile's Philox blocks first, in a loop the compiler vectorises, then the cells: six
          // times faster than drawing inside the cell loop.
          constexpr index_t kTile = 64;
          std::uint32_t bits[kTile + 4];
          for (index_t t0 = w0; t0 < w1; t0 += kTile) {
            const index_t t1 = t0 + kTile < w1 ? t0 + kTile : w1;
            const std::uint64_t b0 = (row + std::uint64_t(t0)) >> 2;
            const std::uint64_t blocks = ((row + std::uint64_t(t1) - 1) >> 2) - b0 + 1;
            for (std::uint64_t j = 0; j < blocks; ++j) {
              const Philox4x32::Counter block = randomBlock(keys, b0 + j);
              for (int k = 0; k < 4; ++k)
                bits[4 * j + k] = block.v[k];
            }
            const index_t skip = index_t(row + std::uint64_t(t0) - 4 * b0);
            for (index_t w = t0; w < t1; ++w)
              apply(w, bits[skip + w - t0]);
          }
        } else {
          for (index_t w = w0; w < w1; ++w)
            apply(w, randomBits(keys, row + std::uint64_t(w)));
        }
      });
}

}  // namespace impl

template <class ExecSpace, class T>
void dropoutForward(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, double p,
                    const RandomStream& stream, const Tensor<T, ExecSpace>& y, const Box& box) {
  impl::applyMask("dropoutForward", exec, x, p, stream, y, box);
}

template <class ExecSpace, class T>
void dropoutBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy, double p,
                     const RandomStream& stream, const Tensor<T, ExecSpace>& dx, const Box& box) {
  impl::applyMask("dropoutBackward", exec, dy, p, stream, dx, box);
}

HALO3D_KERNELS_DROPOUT(, Kokkos::DefaultExecutionSpace, float)
HALO3D_KERNELS_DROPOUT(, Kokkos::DefaultExecutionSpace, double)

}  // namespace halo3d::kernels
