// 3D pooling: the host and the device code (KernelPath::Device: what a CUDA build runs) against the
// naive reference over a sweep of windows (stride below,
// equal to and above the window, padding, dilation, unit and odd extents, ghosts on every side),
// finite-difference gradients, the sub-box property, a 2x2x2 block split without MPI on negative
// data (where zero padding would win a max), and shape errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "KernelTestSupport.hpp"
#include "halo3d/core/GridShape.hpp"
#include "halo3d/kernels/Pool3d.hpp"
#include "halo3d/kernels/impl/Pool3dImpl.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"
#include "halo3d/kernels/reference/Pool3d.hpp"

namespace halo3d::kernels {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using Host = Kokkos::DefaultHostExecutionSpace;
using Argmax = HaloTensor<index_t, Memory>;

template <class T>
constexpr double tolerance() {
  return std::is_same<T, float>::value ? 1e-6 : 1e-14;
}

using testing::addOnto;
using testing::cornerBlock;
using testing::errorMessage;
using testing::expectContains;
using testing::expectContainsAll;
using testing::fillGlobal;
using testing::flatDot;
using testing::forEachCellPair;
using testing::hostCopy;
using testing::inputWindowOf;
using testing::interiorAndSlabs;
using testing::maxRelError;
using testing::randomValues;
using testing::valueAt;

// Distinct values (a permutation of a regular grid in [-1, 1)), so that max pooling has no ties and
// its gradient is locally linear.
auto distinctValues(const Shape5& shape, unsigned seed) {
  const index_t size = shape[0] * shape[1] * shape[2] * shape[3] * shape[4];
  std::vector<index_t> order(std::size_t(size), 0);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](index_t a, index_t b) {
    return valueAt(seed, 0, 0, 0, 0, a) < valueAt(seed, 0, 0, 0, 0, b);
  });
  std::vector<double> values(static_cast<std::size_t>(size));
  for (index_t i = 0; i < size; ++i)
    values[std::size_t(order[std::size_t(i)])] = 2.0 * (double(i) + 0.5) / double(size) - 1.0;
  return [=](index_t n, index_t c, const Extents3& g) {
    return values[std::size_t(
        (((n * shape[1] + c) * shape[2] + g[0]) * shape[3] + g[1]) * shape[4] + g[2])];
  };
}

struct Window {
  std::string name;
  Shape5 x_shape;
  WindowGeometry g;
  friend void PrintTo(const Window& s, std::ostream* os) { *os << s.name; }
};

WindowGeometry general(std::array<int, 3> k, std::array<int, 3> s, std::array<int, 3> p,
                       std::array<int, 3> dil) {
  return WindowGeometry{k, s, dil, p};
}

std::vector<Window> sweep() {
  return {
      {"k2s2", {2, 3, 4, 6, 8}, WindowGeometry::cubic(2, 2)},
      {"k2s2_odd", {1, 2, 5, 7, 3}, WindowGeometry::cubic(2, 2)},
      {"k3s2p1", {1, 3, 7, 6, 9}, WindowGeometry::cubic(3, 2, 1)},
      {"k3s1p1", {2, 2, 5, 1, 6}, WindowGeometry::cubic(3, 1, 1)},
      {"k2s1", {1, 2, 3, 4, 5}, WindowGeometry::cubic(2, 1)},
      {"k3s3", {1, 1, 6, 7, 9}, WindowGeometry::cubic(3, 3)},
      {"k1s2", {1, 2, 5, 4, 3}, WindowGeometry::cubic(1, 2)},
      {"k4s3p2", {1, 2, 7, 8, 5}, WindowGeometry::cubic(4, 3, 2)},
      {"k3s2p2dil2", {1, 2, 9, 7, 8}, WindowGeometry::cubic(3, 2, 2, 2)},
      {"unit_extent_k2s1p1", {1, 3, 1, 1, 1}, WindowGeometry::cubic(2, 1, 1)},
      {"non_cubic", {1, 2, 4, 9, 7}, general({2, 3, 1}, {1, 2, 3}, {1, 1, 0}, {1, 1, 2})},
      {"long_rows_k3s2p1", {1, 1, 2, 3, 41}, WindowGeometry::cubic(3, 2, 1)},
      // k2s2 along W only (the dense max rows) with overlapping windows along H (rows with up to
      // three outputs) or along D (planes with several).
      {"w_k2s2_h_k3s1p1", {1, 2, 4, 6, 10}, general({2, 3, 2}, {2, 1, 2}, {0, 1, 0}, {1, 1, 1})},
      {"w_k2s2_d_k3s1p1", {1, 2, 5, 4, 12}, general({3, 2, 2}, {1, 2, 2}, {1, 0, 0}, {1, 1, 1})},
  };
}

Shape5 outputShape(const Window& s) {
  const Extents3 e = s.g.outputExtents({s.x_shape[2], s.x_shape[3], s.x_shape[4]});
  return {s.x_shape[0], s.x_shape[1], e[0], e[1], e[2]};
}

const HaloWidths kHaloX{{1, 2, 0}, {0, 1, 3}};
const HaloWidths kHaloY{{2, 0, 1}, {1, 1, 0}};

// Forward on `out_box` and backward on `dx_box` (from dy_box) for either kind, on either path.
template <class T>
void runPool(bool is_max, const WindowGeometry& g, const HaloTensor<T, Memory>& x,
             const HaloTensor<T, Memory>& y, const Argmax& argmax, const Box& out_box,
             KernelPath path) {
  const Exec exec;
  if (is_max)
    maxPool3dForward(exec, x, g, y, argmax, out_box, path);
  else
    avgPool3dForward(exec, x, g, y, out_box, path);
}

template <class T>
void runPoolBackward(bool is_max, const WindowGeometry& g, const HaloTensor<T, Memory>& dy,
                     const Argmax& argmax, const HaloTensor<T, Memory>& dx, const Box& dx_box,
                     const Box& dy_box, KernelPath path) {
  const Exec exec;
  if (is_max)
    maxPool3dBackward(exec, dy, argmax, g, dx, dx_box, dy_box, path);
  else
    avgPool3dBackward(exec, dy, g, dx, dx_box, dy_box, path);
}

struct SweepCase {
  Window window;
  bool is_max;
  friend void PrintTo(const SweepCase& c, std::ostream* os) {
    *os << (c.is_max ? "max " : "avg ") << c.window.name;
  }
};

std::vector<SweepCase> sweepCases() {
  std::vector<SweepCase> all;
  for (const Window& w : sweep())
    for (bool is_max : {true, false})
      all.push_back({w, is_max});
  return all;
}

std::string caseName(const ::testing::TestParamInfo<SweepCase>& info) {
  return std::string(info.param.is_max ? "max_" : "avg_") + info.param.window.name;
}

template <class T>
void checkAgainstReference(const SweepCase& sc, KernelPath path) {
  const Window& s = sc.window;
  const Exec exec;
  const Host host;
  HaloTensor<T, Memory> x("x", TensorBlock::whole(s.x_shape, kHaloX));
  HaloTensor<T, Memory> dy("dy", TensorBlock::whole(outputShape(s), kHaloY));
  // Negative data, and a huge value past the volume: reading there, or padding a max with zeros,
  // shows.
  fillGlobal(x, randomValues(1, -1.5), T(1e6));
  fillGlobal(dy, randomValues(2), T(1e6));
  HaloTensor<T, Memory> y("y", dy.block()), dx("dx", x.block());
  Argmax argmax("argmax", TensorBlock::whole(outputShape(s), kHaloX));
  runPool(sc.is_max, s.g, x, y, argmax, y.block().owned(), path);

  auto hx = hostCopy(x), hdy = hostCopy(dy);
  HaloTensor<T, Kokkos::HostSpace> y_ref("y_ref", dy.block()), dx_ref("dx_ref", x.block());
  HaloTensor<index_t, Kokkos::HostSpace> argmax_ref("argmax_ref", argmax.block());
  if (sc.is_max)
    reference::maxPool3dForward(host, hx, s.g, y_ref, argmax_ref, y_ref.block().owned());
  else
    reference::avgPool3dForward(host, hx, s.g, y_ref, y_ref.block().owned());

  // dx on every cell of x's allocation inside the volume, from all of dy and from a strict part of
  // it. Max backward reads the reference argmax, so that the two backward passes see the same
  // winners.
  Argmax argmax_for_dy("argmax_for_dy", argmax.block());
  Kokkos::deep_copy(argmax_for_dy.view(), argmax_ref.view());
  const Box dx_box = intersect(impl::allocatedBox(x), Box::fromExtents(x.block().globalExtents()));
  const Box owned = dy.block().owned();
  for (const Box& dy_box : {owned, owned.grown({-1, 0, -1}, {0, -1, -2})}) {
    runPoolBackward(sc.is_max, s.g, dy, argmax_for_dy, dx, dx_box, dy_box, path);
    if (sc.is_max)
      reference::maxPool3dBackward(host, hdy, argmax_ref, s.g, dx_ref, dx_box, dy_box);
    else
      reference::avgPool3dBackward(host, hdy, s.g, dx_ref, dx_box, dy_box);
    exec.fence();
    EXPECT_LE(maxRelError(hostCopy(dx), dx_ref, dx_box), tolerance<T>())
        << s.name << " dx from " << dy_box;
  }
  exec.fence();
  EXPECT_LE(maxRelError(hostCopy(y), y_ref, owned), tolerance<T>()) << s.name << " y";
  if (sc.is_max) {
    EXPECT_EQ(maxRelError(hostCopy(argmax), argmax_ref, owned), 0.0) << s.name << " argmax";
  }
}

class Pool3dSweep : public ::testing::TestWithParam<SweepCase> {};

HALO3D_PATH_SWEEP_TESTS(Pool3dSweep)

// The whole box against the interior and slabs computed separately, bit for bit, and against the
// reference (so that a kernel that wrote nothing fails).
TEST_P(Pool3dSweep, SubBoxesEqualWholeBox) {
  const SweepCase& sc = GetParam();
  const Window& s = sc.window;
  for (KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
    SCOPED_TRACE(kernelPathName(path));
    HaloTensor<double, Memory> x("x", TensorBlock::whole(s.x_shape, kHaloX));
    HaloTensor<double, Memory> dy("dy", TensorBlock::whole(outputShape(s), kHaloY));
    fillGlobal(x, randomValues(1, -1.5));
    fillGlobal(dy, randomValues(2));
    const Box out = dy.block().owned(), in = x.block().owned();
    HaloTensor<double, Memory> y_whole("y_whole", dy.block()), y_parts("y_parts", dy.block());
    Argmax a_whole("a_whole", dy.block()), a_parts("a_parts", dy.block());
    runPool(sc.is_max, s.g, x, y_whole, a_whole, out, path);
    for (const Box& part : interiorAndSlabs(out, 1))
      runPool(sc.is_max, s.g, x, y_parts, a_parts, part, path);
    HaloTensor<double, Memory> dx_whole("dx_whole", x.block()), dx_parts("dx_parts", x.block());
    runPoolBackward(sc.is_max, s.g, dy, a_whole, dx_whole, in, out, path);
    for (const Box& part : interiorAndSlabs(in, 1))
      runPoolBackward(sc.is_max, s.g, dy, a_whole, dx_parts, part, out, path);
    Exec().fence();
    EXPECT_EQ(maxRelError(hostCopy(y_parts), hostCopy(y_whole), out), 0.0) << s.name;
    EXPECT_EQ(maxRelError(hostCopy(a_parts), hostCopy(a_whole), out), 0.0) << s.name;
    EXPECT_EQ(maxRelError(hostCopy(dx_parts), hostCopy(dx_whole), in), 0.0) << s.name;

    const Host host;
    const auto hx = hostCopy(x), hdy = hostCopy(dy);
    const auto ha = hostCopy(a_whole);
    HaloTensor<double, Kokkos::HostSpace> y_ref("y_ref", dy.block()), dx_ref("dx_ref", x.block());
    HaloTensor<index_t, Kokkos::HostSpace> a_ref("a_ref", dy.block());
    if (sc.is_max) {
      reference::maxPool3dForward(host, hx, s.g, y_ref, a_ref, out);
      reference::maxPool3dBackward(host, hdy, ha, s.g, dx_ref, in, out);
      EXPECT_EQ(maxRelError(ha, a_ref, out), 0.0) << s.name;
    } else {
      reference::avgPool3dForward(host, hx, s.g, y_ref, out);
      reference::avgPool3dBackward(host, hdy, s.g, dx_ref, in, out);
    }
    EXPECT_LE(maxRelError(hostCopy(y_whole), y_ref, out), tolerance<double>()) << s.name;
    EXPECT_LE(maxRelError(hostCopy(dx_whole), dx_ref, in), tolerance<double>()) << s.name;
  }
}

// Finite differences in double of L = sum(y * dy) against the backward pass. L is linear in x for
// average pooling, and for max pooling locally linear on inputs without ties, so central
// differences with a step below half the smallest gap between inputs are exact up to rounding.
TEST_P(Pool3dSweep, GradientMatchesFiniteDifferences) {
  const SweepCase& sc = GetParam();
  const Window& s = sc.window;
  const Exec exec;
  HaloTensor<double, Memory> x("x", TensorBlock::whole(s.x_shape));
  HaloTensor<double, Memory> dy("dy", TensorBlock::whole(outputShape(s)));
  fillGlobal(x, distinctValues(s.x_shape, 5));
  fillGlobal(dy, randomValues(6));
  HaloTensor<double, Memory> y("y", dy.block()), dx("dx", x.block());
  Argmax argmax("argmax", dy.block());
  runPool(sc.is_max, s.g, x, y, argmax, y.block().owned(), KernelPath::Fastest);
  runPoolBackward(sc.is_max, s.g, dy, argmax, dx, dx.block().owned(), dy.block().owned(),
                  KernelPath::Fastest);
  exec.fence();
  // The loss is evaluated through the reference forward on a host copy (checked against the kernels
  // by the sweep), so that the evaluations launch no kernel: fast on a busy machine.
  const auto hdy = hostCopy(dy), hdx = hostCopy(dx);
  auto hx = hostCopy(x);
  HaloTensor<double, Kokkos::HostSpace> hy("hy", dy.block());
  HaloTensor<index_t, Kokkos::HostSpace> ha("ha", dy.block());
  auto loss = [&]() {
    if (sc.is_max)
      reference::maxPool3dForward(Host(), hx, s.g, hy, ha, hy.block().owned());
    else
      reference::avgPool3dForward(Host(), hx, s.g, hy, hy.block().owned());
    return flatDot(hy, hdy);
  };
  const index_t size = index_t(hx.view().size());
  const double step = 0.25 / double(size);  // the inputs are 2 / size apart
  for (index_t i = 0; i < size; i += std::max<index_t>(1, size / 60)) {
    const double fd = testing::centralDifference(hx.view().data()[i], step, loss);
    EXPECT_NEAR(hdx.view().data()[i], fd, 1e-7 * std::max(1.0, std::abs(fd)))
        << s.name << " dx[" << i << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(Windows, Pool3dSweep, ::testing::ValuesIn(sweepCases()), caseName);

// A 2x2x2 split without MPI on all-negative data: each block's ghosts are filled from the global
// tensor (neighbour data inside the volume, zeros past it, as a halo exchange leaves them), forward
// runs on its owned outputs and must equal the one-block run exactly (values and argmax). Backward
// in scatter-sum form: each block computes dx on the window of its owned dy, ghosts included, and
// the sums into the owners must equal the one-block dx up to rounding.
TEST(Pool3dBlocks, TwoByTwoByTwoSplitOfNegativeDataEqualsOneBlock) {
  const Exec exec;
  const GridShape grid(1, 2, 2, 2);
  for (const Window& s : {Window{"k3s2p1", {2, 3, 8, 7, 9}, WindowGeometry::cubic(3, 2, 1)},
                          Window{"k2s2", {1, 2, 6, 8, 4}, WindowGeometry::cubic(2, 2)},
                          Window{"k3s1p1", {1, 2, 5, 6, 4}, WindowGeometry::cubic(3, 1, 1)},
                          Window{"k2s1p1", {1, 1, 4, 5, 6}, WindowGeometry::cubic(2, 1, 1)}}) {
    for (bool is_max : {true, false}) {
      const Extents3 in_extents{s.x_shape[2], s.x_shape[3], s.x_shape[4]};
      const HaloWidths halo = haloWidthsForGrid(s.g, in_extents, grid.spatial());
      const auto negative = randomValues(1, -2.0);
      HaloTensor<double, Memory> x_whole("x_whole", TensorBlock::whole(s.x_shape));
      HaloTensor<double, Memory> dy_whole("dy_whole", TensorBlock::whole(outputShape(s)));
      fillGlobal(x_whole, negative);
      fillGlobal(dy_whole, randomValues(2));
      HaloTensor<double, Memory> y_whole("y_whole", dy_whole.block()),
          dx_whole("dx_whole", x_whole.block());
      Argmax a_whole("a_whole", dy_whole.block());
      runPool(is_max, s.g, x_whole, y_whole, a_whole, y_whole.block().owned(), KernelPath::Fastest);
      runPoolBackward(is_max, s.g, dy_whole, a_whole, dx_whole, dx_whole.block().owned(),
                      dy_whole.block().owned(), KernelPath::Fastest);
      exec.fence();
      const auto hy_whole = hostCopy(y_whole);
      const auto ha_whole = hostCopy(a_whole);
      HaloTensor<double, Kokkos::HostSpace> dx_sum("dx_sum", x_whole.block());
      for (int r = 0; r < grid.size(); ++r) {
        const GridCoords c = grid.coordsOf(r);
        HaloTensor<double, Memory> x("x", TensorBlock::forGrid(s.x_shape, grid, c, halo));
        HaloTensor<double, Memory> dy("dy",
                                      TensorBlock::forGrid(outputShape(s), grid, c, HaloWidths{}));
        fillGlobal(x, negative);
        fillGlobal(dy, randomValues(2));
        HaloTensor<double, Memory> y("y", dy.block()), dx("dx", x.block());
        Argmax a("a", dy.block());
        runPool(is_max, s.g, x, y, a, y.block().owned(), KernelPath::Fastest);
        const Box dx_box = inputWindowOf(s.g, dy.block().owned(), in_extents);
        runPoolBackward(is_max, s.g, dy, a, dx, dx_box, dy.block().owned(), KernelPath::Fastest);
        exec.fence();
        EXPECT_EQ(maxRelError(hostCopy(y), hy_whole, y.block().owned()), 0.0)
            << s.name << " block " << r;
        EXPECT_EQ(maxRelError(hostCopy(a), ha_whole, y.block().owned()), 0.0)
            << s.name << " block " << r;
        addOnto(dx_sum, hostCopy(dx), dx_box);
      }
      EXPECT_LE(maxRelError(dx_sum, hostCopy(dx_whole), dx_whole.block().owned()), 1e-14)
          << (is_max ? "max " : "avg ") << s.name;
    }
  }
}

TEST(Pool3dBlocks, MaxOfNegativeWindowsIgnoresZeroGhostsPastTheVolume) {
  // Every input is -1 except one cell of -0.5: a window over the boundary must return -1 or -0.5,
  // never the zero of the ghost cells past the volume, and its argmax must be inside the volume.
  HaloTensor<double, Memory> x("x", TensorBlock::whole({1, 1, 3, 3, 3}, HaloWidths::uniform(1)));
  fillGlobal(x, [](index_t, index_t, const Extents3& g) {
    return g == Extents3{2, 2, 2} ? -0.5 : -1.0;
  });
  const WindowGeometry g = WindowGeometry::cubic(3, 2, 1);
  HaloTensor<double, Memory> y("y", TensorBlock::whole({1, 1, 2, 2, 2}));
  Argmax a("a", y.block());
  maxPool3dForward(x, g, y, a, y.block().owned());
  Exec().fence();
  const auto hy = hostCopy(y);
  const auto ha = hostCopy(a);
  EXPECT_EQ(hy.view()(0, 0, 0, 0, 0), -1.0);
  EXPECT_EQ(ha.view()(0, 0, 0, 0, 0), 0);  // the first cell of the window inside the volume
  EXPECT_EQ(hy.view()(0, 0, 1, 1, 1), -0.5);
  EXPECT_EQ(ha.view()(0, 0, 1, 1, 1), 26);
}

// Long rows (several chunks of the host rows, interior and end cells), and short ones, with many
// ties and infinities: max pooling's first maximum and both kinds' sums against the reference on
// both paths, and the whole box against its interior and slabs bit for bit on the host path.
TEST(Pool3dLongRows, TiesAndInfinitiesFollowTheReference) {
  const Host host;
  const float inf = std::numeric_limits<float>::infinity();
  // Average pooling of -inf is -inf whatever the order, which would hide a wrong sum: -3 instead.
  const auto ties = [&](bool with_inf) {
    return [=](index_t n, index_t c, const Extents3& g) {
      const float levels[] = {with_inf ? -inf : -3.0f, -1.0f, 0.0f, 1.0f, -2.0f};
      const index_t k = (((n * 3 + c) * 7 + g[0]) * 5 + g[1]) * 3 + g[2] * (g[2] % 3 + 1);
      return levels[k % 5];
    };
  };
  // k2s2 rows of 8 and 6 outputs: two output rows per register (maxPoolForwardRowPairK2S2), an odd
  // number of output rows (a row left single).
  for (const Window& s : {Window{"k2s2", {1, 2, 3, 4, 300}, WindowGeometry::cubic(2, 2)},
                          Window{"k2s2_rows_of_8", {1, 3, 4, 7, 16}, WindowGeometry::cubic(2, 2)},
                          Window{"k2s2_rows_of_6", {2, 1, 5, 9, 13}, WindowGeometry::cubic(2, 2)},
                          Window{"k3s2p1", {1, 2, 5, 3, 301}, WindowGeometry::cubic(3, 2, 1)},
                          Window{"k3s1p1", {1, 1, 3, 4, 150}, WindowGeometry::cubic(3, 1, 1)},
                          Window{"k2s1", {1, 1, 2, 3, 140}, WindowGeometry::cubic(2, 1)},
                          Window{"k3s3p1", {1, 1, 4, 4, 200}, WindowGeometry::cubic(3, 3, 1)}}) {
    for (bool is_max : {true, false})
      for (KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
        SCOPED_TRACE(std::string(is_max ? "max " : "avg ") + s.name + " " + kernelPathName(path));
        HaloTensor<float, Memory> x("x", TensorBlock::whole(s.x_shape, kHaloX));
        HaloTensor<float, Memory> dy("dy", TensorBlock::whole(outputShape(s), kHaloY));
        fillGlobal(x, ties(is_max), 1e6f);
        fillGlobal(dy, randomValues(2));
        const Box out = dy.block().owned(), in = x.block().owned();
        HaloTensor<float, Memory> y("y", dy.block()), dx("dx", x.block());
        Argmax a("a", dy.block());
        runPool(is_max, s.g, x, y, a, out, path);
        runPoolBackward(is_max, s.g, dy, a, dx, in, out, path);
        HaloTensor<float, Kokkos::HostSpace> y_ref("y_ref", dy.block()),
            dx_ref("dx_ref", x.block());
        HaloTensor<index_t, Kokkos::HostSpace> a_ref("a_ref", dy.block());
        const auto hx = hostCopy(x), hdy = hostCopy(dy);
        if (is_max) {
          reference::maxPool3dForward(host, hx, s.g, y_ref, a_ref, out);
          reference::maxPool3dBackward(host, hdy, a_ref, s.g, dx_ref, in, out);
        } else {
          reference::avgPool3dForward(host, hx, s.g, y_ref, out);
          reference::avgPool3dBackward(host, hdy, s.g, dx_ref, in, out);
        }
        Exec().fence();
        const auto hy = hostCopy(y);
        if (is_max) {
          EXPECT_EQ(maxRelError(hostCopy(a), a_ref, out), 0.0);
          // Infinite maxima: compare the values themselves, not their difference.
          forEachCellPair(hy, y_ref, out, [&](float v, float r) { ASSERT_EQ(v, r); });
        } else {
          EXPECT_LE(maxRelError(hy, y_ref, out), 1e-6);
        }
        EXPECT_LE(maxRelError(hostCopy(dx), dx_ref, in), 1e-6);
        if (path != KernelPath::Fastest) continue;
        HaloTensor<float, Memory> y_parts("y_parts", dy.block()), dx_parts("dx_parts", x.block());
        Argmax a_parts("a_parts", dy.block());
        for (const Box& part : interiorAndSlabs(out, 1))
          runPool(is_max, s.g, x, y_parts, a_parts, part, path);
        for (const Box& part : interiorAndSlabs(in, 1))
          runPoolBackward(is_max, s.g, dy, a, dx_parts, part, out, path);
        Exec().fence();
        EXPECT_TRUE(testing::identical(hostCopy(y_parts), hy));
        EXPECT_TRUE(testing::identical(hostCopy(a_parts), hostCopy(a)));
        EXPECT_TRUE(testing::identical(hostCopy(dx_parts), hostCopy(dx)));
      }
  }
}

// The number of dx cells of `dx_box` (every sample and channel) whose bits differ from the
// documented order of the average backward k3s2p1 (window 3, stride 2, padding 1 on every axis):
// R(o) = ((+0 + dy(od0, oh0, o)) + dy(od0, oh0 + 1, o)) + ... over the covering (od, oh) of dy_box,
// od outer, dx(2m) = R(m) / 27 and dx(2m + 1) = (R(m) + R(m + 1)) / 27 with R = 0 outside dy_box.
// The first few differences are reported.
int avgBackwardK3S2P1OrderMisses(const HaloTensor<float, Kokkos::HostSpace>& hdy, const Box& dy_box,
                                 const HaloTensor<float, Kokkos::HostSpace>& hdx,
                                 const Box& dx_box) {
  const float sc = 1.0f / 27.0f;
  const auto dyAt = [&](index_t n, index_t c, index_t od, index_t oh, index_t ow) {
    const Extents3 l = hdy.toLocal({od, oh, ow});
    return hdy.view()(n, c, l[0], l[1], l[2]);
  };
  // The covering outputs of input cell i along one axis, clipped to [lo, hi).
  const auto covering = [](index_t i, index_t lo, index_t hi) {
    return std::pair<index_t, index_t>{std::max(i / 2, lo), std::min((i + 1) / 2 + 1, hi)};
  };
  int differ = 0;
  for (index_t n = 0; n < hdx.block().localSamples(); ++n)
    for (index_t c = 0; c < hdx.block().channels(); ++c)
      for (index_t id = dx_box.min(0); id < dx_box.max(0); ++id)
        for (index_t ih = dx_box.min(1); ih < dx_box.max(1); ++ih) {
          // Plain variables, not structured bindings, which a C++17 lambda cannot capture.
          const index_t od0 = covering(id, dy_box.min(0), dy_box.max(0)).first,
                        od1 = covering(id, dy_box.min(0), dy_box.max(0)).second;
          const index_t oh0 = covering(ih, dy_box.min(1), dy_box.max(1)).first,
                        oh1 = covering(ih, dy_box.min(1), dy_box.max(1)).second;
          const auto R = [&](index_t o) {
            float r = 0.0f;
            if (o < dy_box.min(2) || o >= dy_box.max(2)) return r;
            for (index_t od = od0; od < od1; ++od)
              for (index_t oh = oh0; oh < oh1; ++oh)
                r += dyAt(n, c, od, oh, o);
            return r;
          };
          for (index_t iw = dx_box.min(2); iw < dx_box.max(2); ++iw) {
            const index_t m = iw / 2;
            const float expected = (iw & 1) ? (R(m) + R(m + 1)) * sc : R(m) * sc;
            const Extents3 l = hdx.toLocal({id, ih, iw});
            const float got = hdx.view()(n, c, l[0], l[1], l[2]);
            if (std::memcmp(&got, &expected, sizeof(float)) != 0 && differ++ < 5)
              ADD_FAILURE() << "dx(" << n << ", " << c << ", " << id << ", " << ih << ", " << iw
                            << ") = " << got << ", expected " << expected;
          }
        }
  return differ;
}

// Average backward k3s2p1 on the host path (the dense rows, AVX-512 where built): every dx cell
// bit for bit the documented order (avgBackwardK3S2P1OrderMisses), on long rows with ghosts, a
// dy_box cut on every side, dx boxes with odd and even starts along W, with dx stored through the
// caches and around them (streaming).
TEST(Pool3dLongRows, AverageBackwardK3S2P1FollowsItsOrder) {
  // The order pinned here is the host code's; the device code (one thread per cell, its own order)
  // is held to the reference and to box-independence by the other cases (on an H100 its sums
  // differed from this order in the last bit).
  if (!kRunsOnHost<Exec>) GTEST_SKIP() << "the documented order is the host code's";
  const WindowGeometry g = WindowGeometry::cubic(3, 2, 1);
  const Window s{"k3s2p1", {2, 2, 5, 6, 77}, g};
  HaloTensor<float, Memory> dy("dy", TensorBlock::whole(outputShape(s), kHaloY));
  fillGlobal(dy, randomValues(3));
  const Box dy_owned = dy.block().owned();
  const Box dy_box({dy_owned.min(0), 1, 2}, {dy_owned.max(0) - 1, dy_owned.max(1), 36});
  const auto hdy = hostCopy(dy);
  const double saved = impl::poolStreamMinBytes();
  for (double stream_min : {1e30, 0.0})
    for (const Box& dx_box :
         {Box({0, 0, 0}, {5, 6, 77}), Box({1, 1, 3}, {4, 5, 70}), Box({0, 2, 10}, {5, 3, 43})}) {
      SCOPED_TRACE(std::string(stream_min > 0 ? "cached" : "streamed") + " box " +
                   std::to_string(dx_box.min(2)));
      impl::poolStreamMinBytes() = stream_min;
      HaloTensor<float, Memory> dx("dx", TensorBlock::whole(s.x_shape, kHaloX));
      avgPool3dBackward(Exec(), dy, g, dx, dx_box, dy_box, KernelPath::Fastest);
      Exec().fence();
      EXPECT_EQ(avgBackwardK3S2P1OrderMisses(hdy, dy_box, hostCopy(dx), dx_box), 0);
    }
  impl::poolStreamMinBytes() = saved;
}

// Average pooling k3s2p1 on rows a multiple of 32 cells long, the box spanning them along W (the
// host's whole-row planes, impl/Pool3dHostWholeRows.hpp, where built; the other host forms
// elsewhere; rows of 16 cells backward only), on planes of 8 x 8 cells and volumes of 4^3 stored
// densely (its register planes and volumes there): every cell bit for bit its documented order.
// Forward: y = (((+0 + h(2j - 1)) +
// h(2j)) + h(2j + 1)) / 27, h(-1) = 0, h the sum over the window's H rows (from the first present
// one) of the sums over its D planes (likewise); backward as avgBackwardK3S2P1OrderMisses. Rows of
// 16, 32, 64 and 96 cells, with and without ghosts along W (rows off and on 64-byte boundaries, so
// that the streamed dx stores run and are skipped), boxes cut along D and H, dy_box cut along D and
// H, 1, 4, 16 and 32 channels (the 16-channel forms' multiples), dx streamed and cached, and signed
// zeros in the data; the 8 x 8 planes with ghosts along D and H and without, whole boxes (their
// only boxes) and others, dy_box cut along D alone; the dense 4^3 volumes (16 and 32 channels,
// their whole boxes, ghosts along D only), and one with ghosts along H, which the other forms take.
TEST(Pool3dLongRows, AverageK3S2P1WholeRowsFollowTheirOrder) {
  // The host code's order, as in AverageBackwardK3S2P1FollowsItsOrder.
  if (!kRunsOnHost<Exec>) GTEST_SKIP() << "the documented order is the host code's";
  const WindowGeometry g = WindowGeometry::cubic(3, 2, 1);
  const float sc = 1.0f / 27.0f;
  const auto signedZeros = [](index_t n, index_t c, const Extents3& gc) {
    const index_t k = (((n * 7 + c) * 5 + gc[0]) * 3 + gc[1]) * 11 + gc[2];
    return k % 5 == 0 ? -0.0 : (k % 7 == 0 ? 0.0 : valueAt(6, n, c, gc[0], gc[1], gc[2]));
  };
  const HaloWidths no_w_ghosts{{1, 2, 0}, {0, 1, 0}};
  const double saved = impl::poolStreamMinBytes();
  const HaloWidths y_no_w_ghosts{{1, 1, 0}, {0, 2, 0}};
  struct Case {
    Shape5 shape;
    HaloWidths halo, y_halo;
  };
  for (const Case& k :
       {Case{{2, 1, 5, 6, 64}, kHaloX, kHaloY}, Case{{1, 4, 4, 5, 32}, no_w_ghosts, kHaloY},
        Case{{1, 16, 3, 4, 64}, no_w_ghosts, kHaloY}, Case{{1, 32, 2, 3, 96}, kHaloX, kHaloY},
        Case{{2, 3, 5, 4, 16}, kHaloX, kHaloY}, Case{{1, 16, 4, 6, 16}, no_w_ghosts, kHaloY},
        Case{{2, 3, 8, 8, 8}, no_w_ghosts, y_no_w_ghosts},
        Case{{1, 16, 5, 8, 8}, no_w_ghosts, y_no_w_ghosts},
        Case{{1, 2, 3, 8, 8}, kHaloX, y_no_w_ghosts},
        Case{{2, 16, 4, 4, 4}, HaloWidths{}, HaloWidths{}},
        Case{{1, 32, 4, 4, 4}, HaloWidths{}, HaloWidths{}},
        Case{{1, 16, 4, 4, 4}, no_w_ghosts, HaloWidths{}},
        Case{{1, 16, 4, 4, 4},
             HaloWidths{{1, 0, 0}, {1, 0, 0}},
             HaloWidths{{2, 0, 0}, {0, 0, 0}}}}) {
    const Window s{"whole_rows", k.shape, g};
    SCOPED_TRACE("x " + std::to_string(k.shape[1]) + "x" + std::to_string(k.shape[2]) + "x" +
                 std::to_string(k.shape[3]) + "x" + std::to_string(k.shape[4]));
    HaloTensor<float, Memory> x("x", TensorBlock::whole(s.x_shape, k.halo));
    HaloTensor<float, Memory> dy("dy", TensorBlock::whole(outputShape(s), k.y_halo));
    fillGlobal(x, signedZeros);
    fillGlobal(dy, randomValues(7));
    const auto hx = hostCopy(x), hdy = hostCopy(dy);
    const Box y_owned = dy.block().owned(), x_owned = x.block().owned();
    const Extents3 e = x.block().globalExtents();
    const auto xAt = [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
      const Extents3 l = hx.toLocal({d, h, w});
      return hx.view()(n, c, l[0], l[1], l[2]);
    };
    // Taps [lo, hi) of output o along an axis of extent ext.
    const auto taps = [](index_t o, index_t ext) {
      return std::pair<index_t, index_t>{std::max<index_t>(2 * o - 1, 0),
                                         std::min<index_t>(2 * o + 2, ext)};
    };
    const Box cut_y({std::min<index_t>(1, y_owned.max(0) - 1), 1, 0},
                    {y_owned.max(0), y_owned.max(1), y_owned.max(2)});
    for (const Box& out_box : {y_owned, cut_y}) {
      HaloTensor<float, Memory> y("y", dy.block());
      avgPool3dForward(Exec(), x, g, y, out_box, KernelPath::Fastest);
      Exec().fence();
      const auto hy = hostCopy(y);
      int differ = 0;
      for (index_t n = 0; n < k.shape[0]; ++n)
        for (index_t c = 0; c < k.shape[1]; ++c)
          for (index_t od = out_box.min(0); od < out_box.max(0); ++od)
            for (index_t oh = out_box.min(1); oh < out_box.max(1); ++oh) {
              const index_t d0 = taps(od, e[0]).first, d1 = taps(od, e[0]).second;
              const index_t h0 = taps(oh, e[1]).first, h1 = taps(oh, e[1]).second;
              const auto hsum = [&](index_t iw) {
                float hs = 0.0f;
                for (index_t ih = h0; ih < h1; ++ih) {
                  float ds = xAt(n, c, d0, ih, iw);
                  for (index_t id = d0 + 1; id < d1; ++id)
                    ds += xAt(n, c, id, ih, iw);
                  hs = ih == h0 ? ds : hs + ds;
                }
                return hs;
              };
              for (index_t ow = 0; ow < out_box.max(2); ++ow) {
                float acc = 0.0f;
                for (index_t iw = std::max<index_t>(2 * ow - 1, 0); iw <= 2 * ow + 1; ++iw)
                  acc += hsum(iw);
                const float expected = acc * sc;
                const Extents3 l = hy.toLocal({od, oh, ow});
                const float got = hy.view()(n, c, l[0], l[1], l[2]);
                if (std::memcmp(&got, &expected, sizeof(float)) != 0 && differ++ < 5)
                  ADD_FAILURE() << "y(" << n << ", " << c << ", " << od << ", " << oh << ", " << ow
                                << ") = " << got << ", expected " << expected;
              }
            }
      EXPECT_EQ(differ, 0) << "forward, out_box from " << out_box.min(0) << ", " << out_box.min(1);
    }
    const Box cut_x({1, 1, 0}, {x_owned.max(0), x_owned.max(1) - 1, x_owned.max(2)});
    const Box cut_dy({0, 1, 0},
                     {std::max<index_t>(1, y_owned.max(0) - 1), y_owned.max(1), y_owned.max(2)});
    const Box cut_dy_d({std::min<index_t>(1, y_owned.max(0) - 1), 0, 0},
                       {y_owned.max(0), y_owned.max(1), y_owned.max(2)});
    for (double stream_min : {1e30, 0.0})
      for (const Box& dx_box : {x_owned, cut_x})
        for (const Box& dy_box : {y_owned, cut_dy, cut_dy_d}) {
          SCOPED_TRACE(std::string(stream_min > 0 ? "cached" : "streamed") + ", dx_box from " +
                       std::to_string(dx_box.min(0)) + ", dy_box from " +
                       std::to_string(dy_box.min(1)));
          impl::poolStreamMinBytes() = stream_min;
          HaloTensor<float, Memory> dx("dx", x.block());
          avgPool3dBackward(Exec(), dy, g, dx, dx_box, dy_box, KernelPath::Fastest);
          Exec().fence();
          EXPECT_EQ(avgBackwardK3S2P1OrderMisses(hdy, dy_box, hostCopy(dx), dx_box), 0);
        }
  }
  impl::poolStreamMinBytes() = saved;
}

// Max backward k2s2 on the host planes (denseMaxPlane: the two input rows of an output row from
// one load, AVX-512 where built) against the reference, with dx stored through the caches and
// around them (streaming, whole aligned 16-cell steps: rows of 64 cells without W ghosts): the
// planes' loop over whole rows in pairs (the whole box, and a box of even rows), and its general
// rows (odd starts along D, H and W, so unpaired rows and odd first cells; dy_box cut on every
// side), with ghosts along D and H, ties and signed zeros in dy. Streamed and cached dx must be
// identical.
TEST(Pool3dLongRows, MaxBackwardK2S2PlanesStreamedAndCached) {
  const WindowGeometry g = WindowGeometry::cubic(2, 2);
  const Window s{"k2s2", {2, 3, 6, 8, 64}, g};
  const HaloWidths halo_x{{1, 2, 0}, {0, 1, 0}};
  HaloTensor<float, Memory> x("x", TensorBlock::whole(s.x_shape, halo_x));
  HaloTensor<float, Memory> dy("dy", TensorBlock::whole(outputShape(s), kHaloY));
  // Few levels: many ties, whose first maximum the argmax keeps.
  fillGlobal(x, [](index_t n, index_t c, const Extents3& gc) {
    return double((((n * 3 + c) * 7 + gc[0]) * 5 + gc[1] * 3 + gc[2]) % 4);
  });
  fillGlobal(dy, [](index_t n, index_t c, const Extents3& gc) {
    const index_t k = ((n * 3 + c) * 11 + gc[0] * 5 + gc[1]) * 13 + gc[2];
    return k % 6 == 0 ? -0.0 : valueAt(4, n, c, gc[0], gc[1], gc[2]);
  });
  HaloTensor<float, Memory> y("y", dy.block());
  Argmax a("a", dy.block());
  maxPool3dForward(Exec(), x, g, y, a, y.block().owned(), KernelPath::Fastest);
  const Host host;
  const auto hdy = hostCopy(dy);
  const auto ha = hostCopy(a);
  const Box dy_owned = dy.block().owned();
  // Through the public setting, which the benchmarks use.
  const PoolStreamBytes saved = poolStreamBytes();
  for (const Box& dy_box : {dy_owned, dy_owned.grown({-1, 0, -1}, {0, -1, -3})})
    for (const Box& dx_box : {x.block().owned(), Box({1, 2, 0}, {5, 6, 64}),
                              Box({1, 1, 3}, {5, 8, 61}), Box({0, 3, 0}, {6, 4, 64})}) {
      HaloTensor<float, Kokkos::HostSpace> dx_ref("dx_ref", x.block());
      reference::maxPool3dBackward(host, hdy, ha, g, dx_ref, dx_box, dy_box);
      HaloTensor<float, Memory> dx_cached("dx_cached", x.block()),
          dx_streamed("dx_streamed", x.block());
      setPoolStreamBytes({1e30, saved.avg_pool});
      maxPool3dBackward(Exec(), dy, a, g, dx_cached, dx_box, dy_box, KernelPath::Fastest);
      setPoolStreamBytes({0.0, saved.avg_pool});
      EXPECT_EQ(impl::maxPoolStreamMinBytes(), 0.0);
      maxPool3dBackward(Exec(), dy, a, g, dx_streamed, dx_box, dy_box, KernelPath::Fastest);
      setPoolStreamBytes(saved);
      Exec().fence();
      SCOPED_TRACE("dx box " + std::to_string(dx_box.min(0)) + " " + std::to_string(dx_box.min(1)) +
                   " " + std::to_string(dx_box.min(2)));
      EXPECT_EQ(maxRelError(hostCopy(dx_cached), dx_ref, dx_box), 0.0);
      EXPECT_TRUE(testing::identical(hostCopy(dx_streamed), hostCopy(dx_cached)));
    }
}

// Average pooling 16 channels at a time (impl/Pool3dHostChannels.hpp: float on AVX-512 hosts,
// channels a multiple of 16; the forward on planes of at most impl::poolChannelPlaneCells() cells,
// raised here so that every case takes it) gives every cell the bits of the planes it replaces,
// forward and backward (its three forms: rows of at most 8, at most 16 and more cells; streamed dx
// stores asked for or not; more covering dy rows than its scratch or row tables hold), on whole and
// cut boxes, with ghosts on every side, rows longer than one register, planes cut into bands
// and chunks, and signed zeros in the data. The last run of each set takes the planes (the
// channel forms turned off). Reversing the order of the D, kw or backward (od, oh) terms in the
// channel planes makes it fail. Where the channel forms do not exist every run takes the planes and
// the test holds trivially.
TEST(Pool3dChannels, SixteenChannelPlanesKeepThePlanesBits) {
  const auto signedZeros = [](index_t n, index_t c, const Extents3& g) {
    const index_t k = (((n * 7 + c) * 5 + g[0]) * 3 + g[1]) * 11 + g[2];
    return k % 5 == 0 ? -0.0 : (k % 7 == 0 ? 0.0 : valueAt(5, n, c, g[0], g[1], g[2]));
  };
  const index_t saved = impl::poolChannelPlaneCells();
  const double saved_stream = impl::poolStreamMinBytes();
  const WindowGeometry k3s2p1 = WindowGeometry::cubic(3, 2, 1);
  for (const Window& s :
       {Window{"k3s2p1_4cubed", {2, 16, 4, 4, 4}, k3s2p1},
        Window{"k3s2p1_odd", {1, 32, 5, 7, 9}, k3s2p1},
        Window{"k3s2p1_long_rows", {1, 16, 3, 4, 40}, k3s2p1},
        Window{"k3s2p1_bands_and_chunks", {1, 16, 3, 40, 141}, k3s2p1},
        Window{"k3s2p1_short_rows_in_bands", {1, 16, 3, 70, 8}, k3s2p1},
        // More than 16 covering (od, oh) rows per dx row: the backward's gathering fallback, from
        // both longer-row forms.
        Window{"k5x5_rows", {1, 16, 6, 6, 12}, general({5, 5, 3}, {1, 1, 2}, {2, 2, 1}, {1, 1, 1})},
        Window{"k5x5_loop", {1, 16, 6, 6, 21}, general({5, 5, 3}, {1, 1, 2}, {2, 2, 1}, {1, 1, 1})},
        // Short rows whose band's dy rows overflow the band form's scratch (11 x 26 rows of 4).
        Window{"k11x11_band_overflow",
               {1, 16, 12, 40, 8},
               general({11, 11, 3}, {1, 1, 2}, {5, 5, 1}, {1, 1, 1})},
        Window{"k3s2p1_W_only",
               {1, 16, 5, 6, 21},
               general({2, 1, 3}, {1, 3, 2}, {0, 0, 1}, {1, 1, 1})},
        Window{"k3s1p1", {1, 16, 6, 5, 18}, WindowGeometry::cubic(3, 1, 1)},
        Window{"k2s2", {1, 16, 6, 8, 8}, WindowGeometry::cubic(2, 2)},
        Window{"k2s1", {1, 48, 3, 4, 5}, WindowGeometry::cubic(2, 1)},
        Window{"k3s3", {1, 16, 6, 7, 9}, WindowGeometry::cubic(3, 3)},
        Window{
            "non_cubic", {1, 16, 4, 9, 7}, general({2, 3, 1}, {1, 2, 3}, {1, 1, 0}, {1, 1, 1})}}) {
    SCOPED_TRACE(s.name);
    const Box y_owned =
        Box::fromExtents(s.g.outputExtents({s.x_shape[2], s.x_shape[3], s.x_shape[4]}));
    const Box x_owned = Box::fromExtents({s.x_shape[2], s.x_shape[3], s.x_shape[4]});
    const auto cut = [](const Box& b) {
      std::array<index_t, 3> lo{}, hi{};
      for (int a = 0; a < 3; ++a) {
        lo[a] = b.min(a) + (b.extent(a) > 2 ? 1 : 0);
        hi[a] = b.max(a) - (b.extent(a) > 3 ? 1 : 0);
      }
      return Box(lo, hi);
    };
    HaloTensor<float, Memory> x("x", TensorBlock::whole(s.x_shape, kHaloX));
    HaloTensor<float, Memory> dy("dy", TensorBlock::whole(outputShape(s), kHaloY));
    fillGlobal(x, signedZeros);
    fillGlobal(dy, signedZeros);
    for (const Box& out_box : {y_owned, cut(y_owned)}) {
      std::vector<float> runs[2];
      for (int r = 0; r < 2; ++r) {
        impl::poolChannelPlaneCells() = r == 0 ? index_t(1) << 30 : 0;
        HaloTensor<float, Memory> y("y", TensorBlock::whole(outputShape(s), kHaloY));
        avgPool3dForward(Exec(), x, s.g, y, out_box, KernelPath::Fastest);
        Exec().fence();
        const auto h = hostCopy(y);
        runs[r].assign(h.view().data(), h.view().data() + h.view().size());
      }
      EXPECT_EQ(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * sizeof(float)), 0)
          << "forward, out_box " << out_box.extent(0) << "x" << out_box.extent(1) << "x"
          << out_box.extent(2);
    }
    for (const Box& dx_box : {x_owned, cut(x_owned)})
      for (const Box& dy_box : {y_owned, cut(y_owned)}) {
        // The channel forms, with streamed dx stores asked for (which they never use, so the bits
        // must not change) and without, then the planes.
        std::vector<float> runs[3];
        for (int r = 0; r < 3; ++r) {
          impl::poolChannelPlaneCells() = r < 2 ? index_t(1) << 30 : 0;
          impl::poolStreamMinBytes() = r == 1 ? 0.0 : saved_stream;
          HaloTensor<float, Memory> dx("dx", TensorBlock::whole(s.x_shape, kHaloX));
          avgPool3dBackward(Exec(), dy, s.g, dx, dx_box, dy_box, KernelPath::Fastest);
          Exec().fence();
          const auto h = hostCopy(dx);
          runs[r].assign(h.view().data(), h.view().data() + h.view().size());
        }
        for (int r = 0; r < 2; ++r)
          EXPECT_EQ(std::memcmp(runs[r].data(), runs[2].data(), runs[2].size() * sizeof(float)), 0)
              << "backward (" << (r == 0 ? "cached" : "streamed") << "), dx_box from "
              << dx_box.min(2) << ", dy_box from " << dy_box.min(2);
      }
  }
  impl::poolChannelPlaneCells() = saved;
  impl::poolStreamMinBytes() = saved_stream;
}

// NaN takes over a max (PyTorch's rule; the reference does not model NaN): both paths agree on
// the value and the argmax, on long rows.
TEST(Pool3dLongRows, NaNWinsTheMaxOnBothPaths) {
#if defined(__GLIBC__) && !defined(__CUDACC__)
  // Comparing with NaN raises "invalid", which the test main traps.
  struct NoInvalidTrap {
    NoInvalidTrap() { fedisableexcept(FE_INVALID); }
    ~NoInvalidTrap() {
      feclearexcept(FE_INVALID);
      feenableexcept(FE_INVALID);
    }
  } no_trap;
#endif
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto with_nans = [&](index_t, index_t c, const Extents3& g) {
    const index_t k = ((c * 5 + g[0]) * 7 + g[1]) * 11 + g[2];
    return k % 13 == 0 ? nan : float(k % 4) - 1.0f;
  };
  for (const Window& s : {Window{"k2s2", {1, 2, 4, 4, 200}, WindowGeometry::cubic(2, 2)},
                          Window{"k3s2p1", {1, 2, 5, 5, 201}, WindowGeometry::cubic(3, 2, 1)}}) {
    SCOPED_TRACE(s.name);
    HaloTensor<float, Memory> x("x", TensorBlock::whole(s.x_shape, kHaloX));
    fillGlobal(x, with_nans);
    HaloTensor<float, Memory> y_fast("y_fast", TensorBlock::whole(outputShape(s))),
        y_device("y_device", y_fast.block());
    Argmax a_fast("a_fast", y_fast.block()), a_device("a_device", y_fast.block());
    const Box out = y_fast.block().owned();
    runPool(true, s.g, x, y_fast, a_fast, out, KernelPath::Fastest);
    runPool(true, s.g, x, y_device, a_device, out, KernelPath::Device);
    Exec().fence();
    EXPECT_TRUE(testing::identical(hostCopy(a_fast), hostCopy(a_device)));
    int nans = 0, differ = 0;
    forEachCellPair(hostCopy(y_fast), hostCopy(y_device), out, [&](float v, float r) {
      nans += v != v;
      differ += !(v == r || (v != v && r != r));
    });
    EXPECT_GT(nans, 0);
    EXPECT_EQ(differ, 0);
  }
}

// Several NaNs in one window: the last one in window order holds the argmax (each NaN takes over),
// on the host planes of k2s2 (rows of 16-cell steps and a tail) as on the per-cell path.
TEST(Pool3dLongRows, LastNaNOfAWindowHoldsTheArgmaxOnBothPaths) {
#if defined(__GLIBC__) && !defined(__CUDACC__)
  struct NoInvalidTrap {
    NoInvalidTrap() { fedisableexcept(FE_INVALID); }
    ~NoInvalidTrap() {
      feclearexcept(FE_INVALID);
      feenableexcept(FE_INVALID);
    }
  } no_trap;
#endif
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto dense_nans = [&](index_t, index_t c, const Extents3& g) {
    const index_t k = ((c * 5 + g[0]) * 7 + g[1]) * 11 + g[2];
    return k % 3 == 0 ? nan : float(k % 4) - 1.0f;
  };
  const Window s{"k2s2", {2, 3, 4, 6, 70}, WindowGeometry::cubic(2, 2)};
  HaloTensor<float, Memory> x("x", TensorBlock::whole(s.x_shape, kHaloX));
  fillGlobal(x, dense_nans);
  HaloTensor<float, Memory> y_fast("y_fast", TensorBlock::whole(outputShape(s))),
      y_device("y_device", y_fast.block());
  Argmax a_fast("a_fast", y_fast.block()), a_device("a_device", y_fast.block());
  const Box out = y_fast.block().owned();
  runPool(true, s.g, x, y_fast, a_fast, out, KernelPath::Fastest);
  runPool(true, s.g, x, y_device, a_device, out, KernelPath::Device);
  Exec().fence();
  EXPECT_TRUE(testing::identical(hostCopy(a_fast), hostCopy(a_device)));
  int nans = 0, differ = 0;
  forEachCellPair(hostCopy(y_fast), hostCopy(y_device), out, [&](float v, float r) {
    nans += v != v;
    differ += !(v == r || (v != v && r != r));
  });
  EXPECT_GT(nans, 0);
  EXPECT_EQ(differ, 0);
}

TEST(Pool3dErrors, BadShapesNameTheValues) {
  const WindowGeometry g = WindowGeometry::cubic(3, 2, 1);
  HaloTensor<float, Memory> x("x", TensorBlock::whole({1, 3, 8, 8, 8}));
  HaloTensor<float, Memory> y("y", TensorBlock::whole({1, 3, 4, 4, 4}));
  Argmax a("a", y.block());
  HaloTensor<float, Memory> y_channels("y_channels", TensorBlock::whole({1, 2, 4, 4, 4}));
  std::string m = errorMessage<ShapeError>(
      [&] { avgPool3dForward(x, g, y_channels, y_channels.block().owned()); });
  expectContainsAll(m, {"'y_channels'", "has 2 channels but 'x' has 3"});

  HaloTensor<float, Memory> y_volume("y_volume", TensorBlock::whole({1, 3, 4, 4, 5}));
  m = errorMessage<ShapeError>([&] { avgPool3dForward(x, g, y_volume, y_volume.block().owned()); });
  expectContainsAll(m, {"(4, 4, 5)", "gives (4, 4, 4)"});

  m = errorMessage<ShapeError>([&] { maxPool3dForward(x, g, y, a, Box({0, 0, 0}, {4, 5, 4})); });
  expectContains(m, "[0:4, 0:5, 0:4) is not inside the owned cells");

  Argmax a_small("a_small", TensorBlock::whole({1, 3, 4, 4, 3}));
  m = errorMessage<ShapeError>([&] { maxPool3dForward(x, g, y, a_small, y.block().owned()); });
  expectContains(m, "'a_small'");

  // Output cells [0, 2) along D read input cells [-1, 4): x owning [0, 3) without ghosts is one
  // cell short.
  HaloTensor<float, Memory> x_thin("x_thin", cornerBlock({1, 3, 8, 8, 8}, {3, 8, 8}));
  HaloTensor<float, Memory> y_part("y_part", cornerBlock({1, 3, 4, 4, 4}, {2, 4, 4}));
  m = errorMessage<ShapeError>(
      [&] { avgPool3dForward(x_thin, g, y_part, y_part.block().owned()); });
  expectContainsAll(m, {"input cells read by output box [0:2, 0:4, 0:4): [0:4, 0:8, 0:8)",
                        "'x_thin'", "ghost region is too thin"});

  HaloTensor<float, Memory> dx("dx", x.block());
  m = errorMessage<ShapeError>([&] { avgPool3dBackward(y, g, dx, Box({0, 0, 0}, {8, 9, 8})); });
  expectContains(m, "[0:8, 0:9, 0:8)");
  m = errorMessage<ShapeError>([&] {
    maxPool3dBackward(Exec(), y, a, g, dx, dx.block().owned(), Box({0, 0, 0}, {5, 4, 4}));
  });
  expectContains(m, "dy_box [0:5, 0:4, 0:4)");

  m = errorMessage<ShapeError>([&] { validatePool3d(WindowGeometry::cubic(2, 2, 2)); });
  expectContains(m, "padding 2");
}

}  // namespace
}  // namespace halo3d::kernels
