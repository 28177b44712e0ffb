// The deterministic reductions behind the partial sums of batch norm, the losses, sumOfSquares and
// the Dice counts (impl/ElementwiseReduce.hpp), on the host code and on the device code (one team
// per chunk of rows: what a CUDA build runs) at one thread per team and at as many as the host
// backend allows (up to four; the tests run with two): sums of known cell values over boxes with
// ghosts, several groups and rows of many lengths, against plain double loops; the same box always
// gives the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/impl/ElementwiseReduce.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {
namespace {

struct Variant {
  KernelPath path;
  int team_size;
};
std::vector<Variant> variants() {
  std::vector<Variant> all{{KernelPath::Fastest, 0}, {KernelPath::Device, 1}};
  const int most = std::min(4, Exec().concurrency());
  if (most > 1) all.push_back({KernelPath::Device, most});
  return all;
}

std::string name(const Variant& v) {
  return concat(kernelPathName(v.path), v.path == KernelPath::Device ? " team size " : "",
                v.path == KernelPath::Device ? std::to_string(v.team_size) : "");
}

// [sum x, sum x^2, count of x > 0] per channel of the cells of `box`, through reduceBox. (The
// reductions are free functions: nvcc refuses device lambdas inside a TEST body.)
template <class Cells>
std::vector<double> boxSums(const Cells& xc, index_t groups, index_t samples, const Box& box,
                            const Variant& v) {
  DeviceVector<double> out("out", 3 * groups);
  kernels::impl::reduceBox<3>(
      Exec(), "test::reduceBox", groups, samples, box,
      KOKKOS_LAMBDA(index_t c, index_t n, index_t d, index_t h, index_t w) {
        const double e = xc(n, c, d, h, w);
        return kernels::impl::sums(e, e * e, e > 0 ? 1.0 : 0.0);
      },
      out, false, v.path, kernels::impl::TeamTuning{v.team_size});
  return values(out);
}

// 2.5 + sum |x(k)| through reduceRows, with accumulate, in rows of 256.
double rowSums(const DeviceVector<double>& x, index_t n, const Variant& v) {
  const index_t row = 256;
  const auto out = makeVector<double>("out", {2.5});
  kernels::impl::reduceRows<1>(
      Exec(), "test::reduceRows", 1, (n + row - 1) / row, n < row ? n : row,
      KOKKOS_LAMBDA(index_t, index_t r, index_t i) {
        const index_t k = r * row + i;
        return kernels::impl::sums(k < n ? math::fabs(x(k)) : 0.0);
      },
      out, true, v.path, kernels::impl::TeamTuning{v.team_size});
  return values(out)[0];
}

// reduceBox over a tensor's channels (one group per channel): [sum x, sum x^2, count of x > 0],
// as batch norm's statistics and the Dice counts reduce.
TEST(ReducePaths, BoxSumsPerGroupMatchPlainLoops) {
  for (const ShapeCase& sc : shapeSweep()) {
    const TensorBlock block = TensorBlock::whole(sc.shape, sc.halo);
    const auto xh = hostRandom<double>("x", block, 3);
    const auto x = toDevice(xh);
    const Box box = block.owned();
    const index_t groups = block.channels();
    std::vector<double> expected(std::size_t(3 * groups), 0.0);
    const auto xo = xh.owned();
    for (index_t n = 0; n < block.localSamples(); ++n)
      for (index_t c = 0; c < groups; ++c)
        for (std::size_t d = 0; d < xo.extent(2); ++d)
          for (std::size_t h = 0; h < xo.extent(3); ++h)
            for (std::size_t w = 0; w < xo.extent(4); ++w) {
              const double v = xo(n, c, d, h, w);
              expected[std::size_t(c)] += v;
              expected[std::size_t(groups + c)] += v * v;
              expected[std::size_t(2 * groups + c)] += v > 0 ? 1.0 : 0.0;
            }
    const auto xc = kernels::impl::readCells(x);
    for (const Variant& v : variants()) {
      SCOPED_TRACE(name(v));
      std::vector<double> first;
      for (int repeat = 0; repeat < 2; ++repeat) {
        const std::vector<double> got = boxSums(xc, groups, block.localSamples(), box, v);
        EXPECT_LT(maxRelError(got, expected), 1e-13) << sc.shape[0] << "x" << sc.shape[1];
        if (repeat == 0)
          first = got;
        else
          EXPECT_EQ(got, first) << "a box must always give the same bits";
      }
    }
  }
}

// reduceRows over a flat View with accumulate: the shape of sumOfSquares and the flat MSE.
TEST(ReducePaths, RowSumsAccumulateAndMatchPlainLoops) {
  for (index_t n : {index_t(1), index_t(7), index_t(1023), index_t(5000)}) {
    const std::vector<double> xs = hashValues(std::size_t(n), 9);
    const auto x = makeVector<double>("x", xs);
    double expected = 2.5;
    for (double e : xs)
      expected += std::fabs(e);
    for (const Variant& v : variants()) {
      SCOPED_TRACE(name(v));
      EXPECT_NEAR(rowSums(x, n, v), expected, 1e-12 * expected) << "extent " << n;
    }
  }
}

}  // namespace
}  // namespace halo3d::testing
