// Transposed conv3d: the host and the device code (KernelPath::Device: what a CUDA build runs, its
// backward-filter teams at one and at several threads per team) against the naive reference over a
// sweep of geometries (odd and unit extents, channel counts across the host blocking, ghosts on
// every side), finite-difference gradients, the sub-box property, a 2x2x2 block split without MPI,
// and shape errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "KernelTestSupport.hpp"
#include "halo3d/core/GridShape.hpp"
#include "halo3d/core/KernelPath.hpp"
#include "halo3d/core/MemoryTracker.hpp"
#include "halo3d/kernels/ConvTranspose3d.hpp"
#include "halo3d/kernels/HostScratchpad.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dImpl.hpp"
#include "halo3d/kernels/reference/ConvTranspose3d.hpp"

namespace halo3d::kernels {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using Host = Kokkos::DefaultHostExecutionSpace;
template <class T>
using Weights = Kokkos::View<T*****, Kokkos::LayoutRight, Memory>;
template <class T>
using Bias = Kokkos::View<T*, Kokkos::LayoutRight, Memory>;

template <class T>
constexpr double tolerance() {
  return std::is_same<T, float>::value ? 2e-6 : 1e-13;
}

using testing::addOnto;
using testing::cornerBlock;
using testing::errorMessage;
using testing::expectContains;
using testing::expectContainsAll;
using testing::fillView;
using testing::flatDot;
using testing::hostCopy;
using testing::identicalOn;
using testing::inputWindowOf;
using testing::interiorAndSlabs;
using testing::maxRelError;
using testing::randomValues;

// Global values inside the volume and `past` past it (zero is what a halo exchange leaves there;
// the sweep puts a huge value there to catch reads past the volume).
template <class T, class M>
void fill(const HaloTensor<T, M>& t, unsigned seed, T past = T(0)) {
  testing::fillGlobal(t, randomValues(seed), past);
}

struct Geometry {
  std::string name;
  Shape5 x_shape;  // (N, I, D, H, W)
  index_t out_channels;
  ConvTranspose3dGeometry g;
  friend void PrintTo(const Geometry& s, std::ostream* os) { *os << s.name; }
};

ConvTranspose3dGeometry general(std::array<int, 3> k, std::array<int, 3> s, std::array<int, 3> p,
                                std::array<int, 3> dil, std::array<int, 3> op) {
  return ConvTranspose3dGeometry{WindowGeometry{k, s, dil, p}, op};
}

std::vector<Geometry> sweep() {
  return {
      {"unet_k2s2", {2, 5, 4, 5, 6}, 3, ConvTranspose3dGeometry::cubic(2, 2)},
      {"k3s2p1op1_wide_out", {1, 3, 1, 3, 5}, 19, ConvTranspose3dGeometry::cubic(3, 2, 1, 1)},
      {"k3s1p1_wide_in", {1, 17, 5, 1, 4}, 4, ConvTranspose3dGeometry::cubic(3, 1, 1)},
      {"k1s3op2", {2, 2, 3, 2, 1}, 2, ConvTranspose3dGeometry::cubic(1, 3, 0, 2)},
      {"k4s2p1", {1, 6, 3, 3, 3}, 5, ConvTranspose3dGeometry::cubic(4, 2, 1)},
      {"k3s2p2dil2op1", {1, 4, 4, 3, 5}, 9, ConvTranspose3dGeometry::cubic(3, 2, 2, 1, 2)},
      {"non_cubic",
       {1, 3, 3, 4, 2},
       6,
       general({2, 3, 1}, {2, 1, 3}, {0, 1, 0}, {1, 2, 1}, {1, 0, 2})},
      {"unit_volume_k3s2p1", {1, 2, 1, 1, 1}, 3, ConvTranspose3dGeometry::cubic(3, 2, 1)},
      {"long_rows_k2s2", {1, 9, 2, 2, 21}, 33, ConvTranspose3dGeometry::cubic(2, 2)},
      // Rows whose full blocks of cells reach past the input volume on either side.
      {"long_rows_k3s2p1op1", {1, 5, 2, 3, 8}, 7, ConvTranspose3dGeometry::cubic(3, 2, 1, 1)},
      {"long_rows_k3s2p2dil2op1",
       {1, 3, 2, 2, 17},
       4,
       ConvTranspose3dGeometry::cubic(3, 2, 2, 1, 2)},
      {"long_rows_k5s1p1", {1, 2, 1, 2, 19}, 3, ConvTranspose3dGeometry::cubic(5, 1, 1)},
  };
}

Shape5 outputShape(const Geometry& s) {
  const Extents3 e = s.g.outputExtents({s.x_shape[2], s.x_shape[3], s.x_shape[4]});
  return {s.x_shape[0], s.out_channels, e[0], e[1], e[2]};
}

// Ghosts on every side (past the volume they stay zero), different for x and y, so that both index
// shifts count.
const HaloWidths kHaloX{{1, 2, 0}, {0, 1, 3}};
const HaloWidths kHaloY{{2, 0, 1}, {1, 1, 0}};

// One problem: x, dy and the parameters filled, plus the reference results on the host.
template <class T>
struct Problem {
  Geometry s;
  HaloTensor<T, Memory> x, dy;
  Weights<T> w;
  Bias<T> b;
  explicit Problem(const Geometry& geometry, const HaloWidths& hx = kHaloX,
                   const HaloWidths& hy = kHaloY, T past = T(0))
      : s(geometry),
        x("x", TensorBlock::whole(s.x_shape, hx)),
        dy("dy", TensorBlock::whole(outputShape(s), hy)),
        w("w", s.x_shape[1], s.out_channels, s.g.window.kernel[0], s.g.window.kernel[1],
          s.g.window.kernel[2]),
        b("b", s.out_channels) {
    fill(x, 1, past);
    fill(dy, 2, past);
    fillView(w, 3);
    fillView(b, 4);
  }
  Weights<T> newWeights(const char* label) const {
    return Weights<T>(std::string(label), w.extent(0), w.extent(1), w.extent(2), w.extent(3),
                      w.extent(4));
  }
};

template <class T>
void checkAgainstReference(const Geometry& s, KernelPath path) {
  const Exec exec;
  Problem<T> p(s, kHaloX, kHaloY, T(1e6));
  const Host host;
  auto hx = hostCopy(p.x), hdy = hostCopy(p.dy);
  auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.w);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.b);

  HaloTensor<T, Memory> y("y", p.dy.block());
  convTranspose3dForward(exec, p.x, p.w, p.b, s.g, y, y.block().owned(), path);
  HaloTensor<T, Kokkos::HostSpace> y_ref("y_ref", p.dy.block());
  reference::convTranspose3dForward(host, hx, hw, hb, s.g, y_ref, y_ref.block().owned());

  // dx on every cell of x's allocation inside the volume: ghost cells included, as a scatter-sum
  // layer does.
  const Box dx_box =
      intersect(impl::allocatedBox(p.x), Box::fromExtents(p.x.block().globalExtents()));
  HaloTensor<T, Memory> dx("dx", p.x.block());
  convTranspose3dBackwardData(exec, p.dy, p.w, s.g, dx, dx_box, p.dy.block().owned(), path);
  HaloTensor<T, Kokkos::HostSpace> dx_ref("dx_ref", p.x.block());
  reference::convTranspose3dBackwardData(host, hdy, hw, s.g, dx_ref, dx_box, hdy.block().owned());

  // Part of the gradient: the contributions of a strict sub-box of dy only.
  const Box dy_part = p.dy.block().owned().grown({-1, -1, -2}, {0, -1, -1});
  HaloTensor<T, Memory> dx_part("dx_part", p.x.block());
  convTranspose3dBackwardData(exec, p.dy, p.w, s.g, dx_part, dx_box, dy_part, path);
  HaloTensor<T, Kokkos::HostSpace> dx_part_ref("dx_part_ref", p.x.block());
  reference::convTranspose3dBackwardData(host, hdy, hw, s.g, dx_part_ref, dx_box, dy_part);

  auto dw = p.newWeights("dw");
  Bias<T> db("db", s.out_channels);
  convTranspose3dBackwardFilter(exec, p.x, p.dy, s.g, dw, db, p.dy.block().owned(), false, path);
  auto dw_ref = Kokkos::create_mirror_view(Kokkos::HostSpace(), dw);
  auto db_ref = Kokkos::create_mirror_view(Kokkos::HostSpace(), db);
  reference::convTranspose3dBackwardFilter(host, hx, hdy, s.g, dw_ref, db_ref, hdy.block().owned(),
                                           false);
  if (path == KernelPath::Device) {
    // The device code's backward-filter is a team reduction: also with several threads per team.
    auto dw_team = p.newWeights("dw_team");
    Bias<T> db_team("db_team", s.out_channels);
    impl::convTranspose3dBackwardFilter(exec, p.x, p.dy, s.g, dw_team, db_team,
                                        p.dy.block().owned(), false, path,
                                        impl::TeamTuning{std::min(2, exec.concurrency())});
    exec.fence();
    EXPECT_LE(maxRelError(dw_team, dw_ref), tolerance<T>())
        << s.name << " dw, two threads per team";
    EXPECT_LE(maxRelError(db_team, db_ref), tolerance<T>())
        << s.name << " db, two threads per team";
  }
  exec.fence();

  EXPECT_LE(maxRelError(hostCopy(y), y_ref, y.block().owned()), tolerance<T>()) << s.name << " y";
  EXPECT_LE(maxRelError(hostCopy(dx), dx_ref, dx_box), tolerance<T>()) << s.name << " dx";
  EXPECT_LE(maxRelError(hostCopy(dx_part), dx_part_ref, dx_box), tolerance<T>())
      << s.name << " dx from part of dy";
  EXPECT_LE(maxRelError(dw, dw_ref), tolerance<T>()) << s.name << " dw";
  EXPECT_LE(maxRelError(db, db_ref), tolerance<T>()) << s.name << " db";
}

class ConvTranspose3dSweep : public ::testing::TestWithParam<Geometry> {};

HALO3D_PATH_SWEEP_TESTS(ConvTranspose3dSweep)

// The whole box against the interior and slabs computed separately, and against the reference (so
// that a kernel that wrote nothing fails).
template <class T>
void checkSubBoxes(const Geometry& s, KernelPath path) {
  const Exec exec;
  Problem<T> p(s);
  const Box out = p.dy.block().owned();
  HaloTensor<T, Memory> y_whole("y_whole", p.dy.block()), y_parts("y_parts", p.dy.block());
  convTranspose3dForward(exec, p.x, p.w, p.b, s.g, y_whole, out, path);
  for (const Box& part : interiorAndSlabs(out, 1))
    convTranspose3dForward(exec, p.x, p.w, p.b, s.g, y_parts, part, path);

  const Box in = p.x.block().owned();
  HaloTensor<T, Memory> dx_whole("dx_whole", p.x.block()), dx_parts("dx_parts", p.x.block());
  convTranspose3dBackwardData(exec, p.dy, p.w, s.g, dx_whole, in, out, path);
  for (const Box& part : interiorAndSlabs(in, 1))
    convTranspose3dBackwardData(exec, p.dy, p.w, s.g, dx_parts, part, out, path);

  auto dw_whole = p.newWeights("dw_whole"), dw_parts = p.newWeights("dw_parts");
  Bias<T> db_whole("db_whole", s.out_channels), db_parts("db_parts", s.out_channels);
  convTranspose3dBackwardFilter(exec, p.x, p.dy, s.g, dw_whole, db_whole, out, false, path);
  for (const Box& part : interiorAndSlabs(out, 1))
    convTranspose3dBackwardFilter(exec, p.x, p.dy, s.g, dw_parts, db_parts, part, true, path);
  exec.fence();

  EXPECT_TRUE(identicalOn(hostCopy(y_whole), hostCopy(y_parts), out)) << s.name;
  EXPECT_TRUE(identicalOn(hostCopy(dx_whole), hostCopy(dx_parts), in)) << s.name;
  EXPECT_LE(maxRelError(dw_parts, dw_whole), 1e-12) << s.name;
  EXPECT_LE(maxRelError(db_parts, db_whole), 1e-12) << s.name;

  const Host host;
  const auto hx = hostCopy(p.x), hdy = hostCopy(p.dy);
  const auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.w);
  const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.b);
  HaloTensor<T, Kokkos::HostSpace> y_ref("y_ref", p.dy.block()), dx_ref("dx_ref", p.x.block());
  reference::convTranspose3dForward(host, hx, hw, hb, s.g, y_ref, out);
  reference::convTranspose3dBackwardData(host, hdy, hw, s.g, dx_ref, in, out);
  auto dw_ref = Kokkos::create_mirror_view(Kokkos::HostSpace(), dw_whole);
  auto db_ref = Kokkos::create_mirror_view(Kokkos::HostSpace(), db_whole);
  reference::convTranspose3dBackwardFilter(host, hx, hdy, s.g, dw_ref, db_ref, out, false);
  EXPECT_LE(maxRelError(hostCopy(y_whole), y_ref, out), tolerance<T>()) << s.name;
  EXPECT_LE(maxRelError(hostCopy(dx_whole), dx_ref, in), tolerance<T>()) << s.name;
  EXPECT_LE(maxRelError(dw_whole, dw_ref), tolerance<T>()) << s.name;
}

TEST_P(ConvTranspose3dSweep, SubBoxesEqualWholeBoxFastest) {
  checkSubBoxes<double>(GetParam(), KernelPath::Fastest);
}
TEST_P(ConvTranspose3dSweep, SubBoxesEqualWholeBoxDevice) {
  checkSubBoxes<double>(GetParam(), KernelPath::Device);
}

INSTANTIATE_TEST_SUITE_P(Geometries, ConvTranspose3dSweep, ::testing::ValuesIn(sweep()),
                         [](const ::testing::TestParamInfo<Geometry>& info) {
                           return info.param.name;
                         });

// Finite differences in double of L = sum(y * dy) + sum over b: dL/dx, dL/dw, dL/db against the
// kernels.
class ConvTranspose3dGradient : public ::testing::TestWithParam<Geometry> {};

TEST_P(ConvTranspose3dGradient, MatchesFiniteDifferences) {
  const Geometry& s = GetParam();
  const Exec exec;
  Problem<double> p(s, HaloWidths{}, HaloWidths{});
  HaloTensor<double, Memory> dx("dx", p.x.block());
  convTranspose3dBackwardData(exec, p.dy, p.w, s.g, dx, dx.block().owned());
  auto dw = p.newWeights("dw");
  Bias<double> db("db", s.out_channels);
  convTranspose3dBackwardFilter(exec, p.x, p.dy, s.g, dw, db, p.dy.block().owned(), false);
  exec.fence();

  // The loss is evaluated through the reference forward on host copies (checked against the kernels
  // by the sweep), so that the hundreds of evaluations launch no kernel: fast on a busy machine.
  auto hx = hostCopy(p.x), hdy = hostCopy(p.dy);
  auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.w);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.b);
  HaloTensor<double, Kokkos::HostSpace> hy("hy", p.dy.block());
  auto loss = [&]() {
    reference::convTranspose3dForward(Host(), hx, hw, hb, s.g, hy, hy.block().owned());
    return flatDot(hy, hdy);
  };
  // L is linear in each parameter, so central differences are exact up to rounding; step 1e-3 keeps
  // that small.
  const double step = 1e-3;
  auto check = [&](const auto& host_param, const auto& grad, const char* what) {
    auto host_grad = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grad);
    const std::size_t size = host_param.size(), stride = std::max<std::size_t>(1, size / 40);
    for (std::size_t i = 0; i < size; i += stride) {
      const double fd = testing::centralDifference(host_param.data()[i], step, loss);
      EXPECT_NEAR(host_grad.data()[i], fd, 1e-8 * std::max(1.0, std::abs(fd)))
          << s.name << " " << what << "[" << i << "]";
    }
  };
  check(hx.view(), dx.view(), "dx");
  check(hw, dw, "dw");
  check(hb, db, "db");
}

INSTANTIATE_TEST_SUITE_P(Geometries, ConvTranspose3dGradient, ::testing::ValuesIn(sweep()),
                         [](const ::testing::TestParamInfo<Geometry>& info) {
                           return info.param.name;
                         });

// A 2x2x2 split without MPI: each block's ghosts are filled from the global tensor (what a halo
// exchange leaves: neighbour data inside the volume, zeros past it), forward runs on its owned
// outputs, and the assembled output must equal the one-block run exactly. Backward-data in
// scatter-sum form (dx on the window of the owned dy, ghosts included, then summed into the owners)
// and the sum of the blocks' filter partials must match the one-block gradients up to rounding.
TEST(ConvTranspose3dBlocks, TwoByTwoByTwoSplitEqualsOneBlock) {
  const Exec exec;
  const GridShape grid(1, 2, 2, 2);
  for (const Geometry& s :
       {Geometry{"unet_k2s2", {2, 3, 4, 5, 6}, 4, ConvTranspose3dGeometry::cubic(2, 2)},
        Geometry{"k3s2p1op1", {1, 2, 5, 4, 6}, 3, ConvTranspose3dGeometry::cubic(3, 2, 1, 1)},
        Geometry{"k3s1p1", {1, 3, 4, 5, 3}, 2, ConvTranspose3dGeometry::cubic(3, 1, 1)}}) {
    const Extents3 in_extents{s.x_shape[2], s.x_shape[3], s.x_shape[4]};
    const HaloWidths halo = convTranspose3dHaloWidthsForGrid(s.g, in_extents, grid.spatial());
    Problem<double> whole(s, HaloWidths{}, HaloWidths{});
    HaloTensor<double, Memory> y_whole("y_whole", whole.dy.block()),
        dx_whole("dx_whole", whole.x.block());
    convTranspose3dForward(exec, whole.x, whole.w, whole.b, s.g, y_whole, y_whole.block().owned());
    convTranspose3dBackwardData(exec, whole.dy, whole.w, s.g, dx_whole, dx_whole.block().owned());
    auto dw_whole = whole.newWeights("dw_whole"), dw_sum = whole.newWeights("dw_sum");
    Bias<double> db_whole("db_whole", s.out_channels), db_sum("db_sum", s.out_channels);
    convTranspose3dBackwardFilter(exec, whole.x, whole.dy, s.g, dw_whole, db_whole,
                                  whole.dy.block().owned(), false);
    HaloTensor<double, Kokkos::HostSpace> dx_sum("dx_sum", whole.x.block());
    auto hy_whole = hostCopy(y_whole);

    for (int r = 0; r < grid.size(); ++r) {
      const GridCoords c = grid.coordsOf(r);
      HaloTensor<double, Memory> x("x", TensorBlock::forGrid(s.x_shape, grid, c, halo));
      HaloTensor<double, Memory> dy("dy",
                                    TensorBlock::forGrid(outputShape(s), grid, c, HaloWidths{}));
      fill(x, 1);
      fill(dy, 2);
      HaloTensor<double, Memory> y("y", dy.block()), dx("dx", x.block());
      convTranspose3dForward(exec, x, whole.w, whole.b, s.g, y, y.block().owned());
      const Box dx_box = inputWindowOf(s.g, dy.block().owned(), in_extents);
      convTranspose3dBackwardData(exec, dy, whole.w, s.g, dx, dx_box);
      convTranspose3dBackwardFilter(exec, x, dy, s.g, dw_sum, db_sum, dy.block().owned(), true);
      exec.fence();
      EXPECT_TRUE(identicalOn(hostCopy(y), hy_whole, y.block().owned()))
          << s.name << " block " << r;
      addOnto(dx_sum, hostCopy(dx), dx_box);
    }
    exec.fence();
    EXPECT_LE(maxRelError(dx_sum, hostCopy(dx_whole), dx_whole.block().owned()), 1e-13) << s.name;
    EXPECT_LE(maxRelError(dw_sum, dw_whole), 1e-12) << s.name;
    EXPECT_LE(maxRelError(db_sum, db_whole), 1e-12) << s.name;
  }
}

TEST(ConvTranspose3dGeometry, ExtentsWindowsAndHaloWidths) {
  const auto unet = ConvTranspose3dGeometry::cubic(2, 2);
  EXPECT_EQ(unet.outputExtents({4, 5, 1}), (Extents3{8, 10, 2}));
  EXPECT_EQ(unet.inputWindow(0, 4, 8), (std::array<index_t, 2>{2, 4}));
  EXPECT_TRUE(convTranspose3dHaloWidthsForGrid(unet, {8, 8, 8}, {2, 2, 2}).isZero());
  const auto k3 = ConvTranspose3dGeometry::cubic(3, 2, 1, 1);
  EXPECT_EQ(k3.outputExtent(0, 4), 8);
  // o = 2i - 1 + k: output cells [4, 8) read input cells [2, 5) (cell 4 lies past a volume of 4),
  // [0, 4) read [0, 3).
  EXPECT_EQ(k3.inputWindow(0, 4, 8), (std::array<index_t, 2>{2, 5}));
  EXPECT_EQ(k3.inputWindow(0, 0, 4), (std::array<index_t, 2>{0, 3}));
  EXPECT_EQ(k3.outputWindow(0, 0, 2), (std::array<index_t, 2>{-1, 4}));
  const HaloWidths h = convTranspose3dHaloWidthsForGrid(k3, {4, 4, 4}, {2, 1, 1});
  EXPECT_EQ(h.lo, (std::array<int, 3>{0, 0, 0}));
  EXPECT_EQ(h.hi, (std::array<int, 3>{1, 0, 0}));
}

// The memory model counts the host code's largest buffer from hostWorkspaceBytes: it must be what
// the passes allocate. Measured as the tracker's peak over what was live before each pass, for a
// U-Net-like up-sampling (many partial-sum chunks) and a small odd geometry, from an empty
// scratchpad (kernels/HostScratchpad.hpp), whose pieces are rounded up to 64 bytes each.
TEST(ConvTranspose3dWorkspace, HostBytesAreWhatThePassesAllocate) {
  if (!kRunsOnHost<Exec>) GTEST_SKIP() << "the device code keeps no workspace";
  MemoryTracker::install();
  const Exec exec;
  for (const Geometry& s :
       {Geometry{"up_k2s2", {2, 24, 4, 4, 3}, 20, ConvTranspose3dGeometry::cubic(2, 2)},
        Geometry{"k3s2p1op1", {1, 3, 4, 4, 4}, 5, ConvTranspose3dGeometry::cubic(3, 2, 1, 1)}}) {
    Problem<float> p(s, HaloWidths{}, HaloWidths{});
    HaloTensor<float, Memory> y("y", p.dy.block());
    HaloTensor<float, Memory> dx("dx", p.x.block());
    auto dw = p.newWeights("dw");
    Bias<float> db("db", s.out_channels);
    exec.fence();
    kernels::releaseHostScratchpad();
    std::size_t largest = 0;
    const auto measure = [&](const std::function<void()>& pass) {
      const std::size_t live = MemoryTracker::usage("Host").current;
      MemoryTracker::resetPeak();
      pass();
      exec.fence();
      largest = std::max(largest, MemoryTracker::usage("Host").peak - live);
    };
    measure([&] { convTranspose3dForward(exec, p.x, p.w, p.b, s.g, y, y.block().owned()); });
    measure([&] {
      convTranspose3dBackwardData(exec, p.dy, p.w, s.g, dx, p.x.block().owned(),
                                  p.dy.block().owned());
    });
    measure([&] {
      convTranspose3dBackwardFilter(exec, p.x, p.dy, s.g, dw, db, p.dy.block().owned(), false);
    });
    const Shape5 out = outputShape(s);
    const std::size_t predicted = s.g.hostWorkspaceBytes(out[0], s.x_shape[1], out[1],
                                                         {out[2], out[3], out[4]}, sizeof(float));
    EXPECT_GE(largest, predicted) << s.name;
    EXPECT_LE(largest, predicted + 2 * 64) << s.name;  // two pieces at most
    EXPECT_GT(largest, 0u) << s.name;
  }
}

// Once warm, the host passes take every buffer from the scratchpad: a third round allocates
// nothing and gives the bits of the first (reused scratch holds the previous pass's values, so a
// buffer read before it is written, such as the partial sums, shows up here).
TEST(ConvTranspose3dWorkspace, WarmHostPassesAllocateNothing) {
  if (!kRunsOnHost<Exec>) GTEST_SKIP() << "the device code keeps no workspace";
  MemoryTracker::install();
  const Exec exec;
  const Geometry s{"up_k2s2", {2, 24, 4, 4, 3}, 20, ConvTranspose3dGeometry::cubic(2, 2)};
  Problem<float> p(s, HaloWidths{}, HaloWidths{});
  HaloTensor<float, Memory> y("y", p.dy.block());
  HaloTensor<float, Memory> dx("dx", p.x.block());
  auto dw = p.newWeights("dw");
  Bias<float> db("db", s.out_channels);
  const auto round = [&] {
    convTranspose3dForward(exec, p.x, p.w, p.b, s.g, y, y.block().owned());
    convTranspose3dBackwardData(exec, p.dy, p.w, s.g, dx, p.x.block().owned(),
                                p.dy.block().owned());
    convTranspose3dBackwardFilter(exec, p.x, p.dy, s.g, dw, db, p.dy.block().owned(), false);
    exec.fence();
    std::vector<float> bits(y.view().data(), y.view().data() + y.view().span());
    bits.insert(bits.end(), dx.view().data(), dx.view().data() + dx.view().span());
    bits.insert(bits.end(), dw.data(), dw.data() + dw.span());
    bits.insert(bits.end(), db.data(), db.data() + db.span());
    return bits;
  };
  const std::vector<float> first = round();
  round();
  const std::size_t before = MemoryTracker::usage("Host").allocations;
  const std::vector<float> third = round();
  EXPECT_EQ(MemoryTracker::usage("Host").allocations, before) << "a warm pass allocated";
  EXPECT_EQ(third, first);
}

TEST(ConvTranspose3dErrors, BadShapesNameTheValues) {
  const Exec exec;
  const Geometry s{"k3s2p1op1", {1, 3, 4, 4, 4}, 5, ConvTranspose3dGeometry::cubic(3, 2, 1, 1)};
  Problem<float> p(s, HaloWidths{}, HaloWidths{});
  HaloTensor<float, Memory> y("y", p.dy.block());
  HaloTensor<float, Memory> y_bad_channels("y_bad", TensorBlock::whole({1, 4, 8, 8, 8}));
  std::string m = errorMessage<ShapeError>([&] {
    convTranspose3dForward(exec, p.x, p.w, p.b, s.g, y_bad_channels,
                           y_bad_channels.block().owned());
  });
  expectContainsAll(m, {"(3, 4, 3, 3, 3)", "(3, 5, 3, 3, 3)"});

  HaloTensor<float, Memory> y_bad_volume("y_vol", TensorBlock::whole({1, 5, 8, 8, 7}));
  m = errorMessage<ShapeError>([&] {
    convTranspose3dForward(exec, p.x, p.w, p.b, s.g, y_bad_volume, y_bad_volume.block().owned());
  });
  expectContainsAll(m, {"(8, 8, 7)", "(8, 8, 8)"});

  m = errorMessage<ShapeError>([&] {
    convTranspose3dForward(exec, p.x, p.w, p.b, s.g, y, Box({0, 0, 0}, {9, 8, 8}));
  });
  expectContainsAll(m, {"[0:9, 0:8, 0:8)", "not inside the owned cells"});

  // Output block [0, 4)^3 of a split volume reads input cells [0, 3)^3: x owning [0, 2)^3 without
  // ghosts is too thin.
  HaloTensor<float, Memory> x_thin("x_thin", cornerBlock({1, 3, 4, 4, 4}, {2, 2, 2}));
  HaloTensor<float, Memory> y_part("y_part", cornerBlock({1, 5, 8, 8, 8}, {4, 4, 4}));
  m = errorMessage<ShapeError>(
      [&] { convTranspose3dForward(exec, x_thin, p.w, p.b, s.g, y_part, y_part.block().owned()); });
  expectContainsAll(m, {"[0:3, 0:3, 0:3)", "'x_thin'", "ghost region is too thin"});
  m = errorMessage<ShapeError>([&] {
    convTranspose3dBackwardFilter(exec, x_thin, y_part, s.g, p.newWeights("dw"),
                                  Bias<float>("db", 5), y_part.block().owned(), false);
  });
  expectContains(m, "ghost region is too thin");

  Bias<float> b_bad("b_bad", 4);
  m = errorMessage<ShapeError>(
      [&] { convTranspose3dForward(exec, p.x, p.w, b_bad, s.g, y, y.block().owned()); });
  expectContains(m, "'b_bad' has extent 4");

  HaloTensor<float, Memory> dx("dx", p.x.block());
  m = errorMessage<ShapeError>([&] {
    convTranspose3dBackwardData(exec, p.dy, p.w, s.g, dx, Box({0, 0, 0}, {4, 4, 5}));
  });
  expectContains(m, "[0:4, 0:4, 0:5)");
  m = errorMessage<ShapeError>([&] {
    convTranspose3dBackwardData(exec, p.dy, p.w, s.g, dx, dx.block().owned(),
                                Box({0, 0, 0}, {8, 9, 8}));
  });
  expectContains(m, "dy_box [0:8, 0:9, 0:8)");

  m = errorMessage<ShapeError>([&] { ConvTranspose3dGeometry::cubic(3, 2, 1, 2).validate(); });
  expectContains(m, "output_padding 2");
}

}  // namespace
}  // namespace halo3d::kernels
