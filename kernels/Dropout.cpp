// Dropout; see Dropout.hpp for the contracts.
#include "kernels/Dropout.hpp"

#include <cmath>

#include "kernels/impl/ElementwiseChecks.hpp"
#include "kernels/impl/ElementwiseLoops.hpp"

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
        for (index_t w = w0; w < w1; ++w) {
          const bool keep = randomBits(stream, row + std::uint64_t(w)) >= threshold;
          yc(n, c, d, h, w) = keep ? xc(n, c, d, h, w) * keep_scale : T(0);
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
