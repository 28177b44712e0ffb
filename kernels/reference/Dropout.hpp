#pragma once
// Naive reference of dropout (Dropout.hpp): plain host loops, same signatures. A cell's global
// index is spelled out from its global coordinates, the definition the optimized kernel must agree
// with.

#include <cmath>

#include "halo3d/kernels/Random.hpp"
#include "halo3d/kernels/reference/Elementwise.hpp"

namespace halo3d::kernels::reference {

template <class ExecSpace, class T>
void dropoutForward(const ExecSpace&, const Tensor<T, ExecSpace>& x, double p,
                    const RandomStream& stream, const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const Shape5& g = y.block().globalShape();
  const index_t n0 = y.block().sampleBegin();
  const double threshold = std::ldexp(p, 32);
  const auto xc = impl::readCells(x);
  const auto yc = impl::writeCells(y);
  detail::forEachCell(y, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    const index_t global_index = (((((n0 + n) * g[1] + c) * g[2] + d) * g[3] + h) * g[4]) + w;
    const bool dropped =
        double(randomBits(stream, std::uint64_t(global_index))) < std::round(threshold);
    yc(n, c, d, h, w) = dropped ? T(0) : T(xc(n, c, d, h, w) * T(1.0 / (1.0 - p)));
  });
}

template <class ExecSpace, class T>
void dropoutBackward(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy, double p,
                     const RandomStream& stream, const Tensor<T, ExecSpace>& dx, const Box& box) {
  reference::dropoutForward(exec, dy, p, stream, dx, box);
}

}  // namespace halo3d::kernels::reference
