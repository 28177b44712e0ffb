// conv3d through the public kernels: finite-difference gradients (double), the sub-box property (a
// layer computes interior and boundary slabs separately around its halo exchange) on the host and
// the device code, and shape errors. Runs the kernels on the host execution space, so it includes
// their definitions (a CUDA build instantiates them here).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/impl/Conv3dImpl.hpp"
#include "halo3d/kernels/reference/Conv3d.hpp"
#include "test_conv3d_support.hpp"

namespace halo3d::testing {
namespace {

// Small problems: extents of 1, odd extents, stride 2, even kernels, dilation 2, a 3x1x5 kernel, no
// padding.
std::vector<ConvCase> gradientCases() {
  return {
      {2, 2, 3, {1, 5, 3}, WindowGeometry::cubic(3, 1, 1), true},
      {1, 2, 2, {5, 4, 7}, WindowGeometry::cubic(3, 2, 1), true},
      {1, 3, 2, {4, 3, 5}, WindowGeometry::cubic(2, 1, 1), true},
      {1, 2, 2, {4, 5, 3}, WindowGeometry::cubic(2, 2, 0), false},
      {1, 1, 2, {5, 6, 5}, WindowGeometry::cubic(3, 1, 2, 2), true},
      {1, 2, 3, {5, 3, 6}, geometry({3, 1, 5}, {1, 2, 1}, {1, 1, 1}, {1, 0, 2}), true},
      {2, 2, 1, {4, 5, 6}, WindowGeometry::cubic(3, 1, 0), true},
  };
}

// The loss L = sum(y * r) and its gradients by the kernels: dx = backward-data(r), dw, db =
// backward-filter(r).
struct Problem : ConvProblem<double> {
  HostTensor<double> r;

  explicit Problem(const ConvCase& cc)
      : ConvProblem<double>(cc), r("r", TensorBlock::whole(c.outShape())) {
    fillOwned(x, 1);
    fillOwned(r, 2);
    fillUniform(w, 3);
    fillUniform(b, 4);
  }

  double loss() const {
    kernels::conv3dForward(HostExec(), x, w, b, c.g, y, c.outBox());
    HostExec().fence();
    double l = 0;
    const auto yo = y.owned(), ro = r.owned();
    forEachIndex5(
        yo, [&](std::size_t k0, std::size_t k1, std::size_t k2, std::size_t k3, std::size_t k4) {
          l += yo(k0, k1, k2, k3, k4) * ro(k0, k1, k2, k3, k4);
        });
    return l;
  }

  void gradients() {
    kernels::conv3dBackwardData(HostExec(), r, w, c.g, dx, c.inBox());
    kernels::conv3dBackwardFilter(HostExec(), x, r, c.g, dw, db, c.outBox(), false);
    HostExec().fence();
  }
};

// L is linear in each parameter, so central differences are exact up to rounding: a large step
// keeps the rounding small. The tolerance is relative to the largest gradient entry.
constexpr double kStep = 1e-2;
constexpr double kTolerance = 1e-9;

// Central differences of `loss` with respect to every entry `values[k]`, checked against `grad[k]`.
template <class Loss>
void checkGradient(const char* what, double* values, const double* grad, std::size_t count,
                   Loss&& loss) {
  double scale = 0;
  for (std::size_t k = 0; k < count; ++k)
    scale = std::max(scale, std::fabs(grad[k]));
  ASSERT_GT(scale, 0.0) << what << ": an all-zero gradient cannot be checked";
  for (std::size_t k = 0; k < count; ++k) {
    const double keep = values[k];
    values[k] = keep + kStep;
    const double up = loss();
    values[k] = keep - kStep;
    const double down = loss();
    values[k] = keep;
    EXPECT_NEAR((up - down) / (2 * kStep), grad[k], kTolerance * scale) << what << " entry " << k;
  }
}

class Conv3dGradient : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv3dGradient, MatchesCentralDifferences) {
  Problem p(GetParam());
  p.gradients();
  auto loss = [&] { return p.loss(); };
  // Only the owned cells of x are variables; its ghosts are the zero padding.
  const auto xo = p.x.owned();
  const auto dxo = p.dx.owned();
  std::vector<double> dx_owned;
  std::vector<double*> x_cells;
  for (std::size_t n = 0; n < xo.extent(0); ++n)
    for (std::size_t c = 0; c < xo.extent(1); ++c)
      for (std::size_t d = 0; d < xo.extent(2); ++d)
        for (std::size_t h = 0; h < xo.extent(3); ++h)
          for (std::size_t w = 0; w < xo.extent(4); ++w) {
            dx_owned.push_back(dxo(n, c, d, h, w));
            x_cells.push_back(&xo(n, c, d, h, w));
          }
  double scale = 0;
  for (double v : dx_owned)
    scale = std::max(scale, std::fabs(v));
  ASSERT_GT(scale, 0.0);
  for (std::size_t k = 0; k < x_cells.size(); ++k) {
    const double keep = *x_cells[k];
    *x_cells[k] = keep + kStep;
    const double up = loss();
    *x_cells[k] = keep - kStep;
    const double down = loss();
    *x_cells[k] = keep;
    EXPECT_NEAR((up - down) / (2 * kStep), dx_owned[k], kTolerance * scale) << "dx cell " << k;
  }
  checkGradient("dw", p.w.data(), p.dw.data(), p.w.span(), loss);
  if (p.c.bias) checkGradient("db", p.b.data(), p.db.data(), p.b.span(), loss);
}

INSTANTIATE_TEST_SUITE_P(Geometries, Conv3dGradient, ::testing::ValuesIn(gradientCases()));

// Sub-boxes.

std::vector<ConvCase> subBoxCases() {
  return {
      {2, 3, 5, {6, 7, 19}, WindowGeometry::cubic(3, 1, 1), true},
      {1, 4, 9, {7, 6, 35}, WindowGeometry::cubic(3, 2, 1), true},
      {1, 2, 3, {6, 5, 17}, WindowGeometry::cubic(2, 1, 1), false},
      {1, 3, 4, {7, 8, 21}, WindowGeometry::cubic(3, 1, 2, 2), true},
      {1, 3, 6, {6, 9, 18}, geometry({3, 1, 5}, {1, 2, 1}, {1, 1, 1}, {1, 0, 2}), true},
      // Backward-data's rows of 3 W taps (RowsOuter) from 4 dy channels (the unrolled channel
      // loop); W = 33 ends in a one-lane vector, whose tap kw = 0 reads nothing in tiles that mix
      // boundary rows (table mode): its row still gives taps 1 and 2 their offset.
      {2, 5, 4, {9, 8, 33}, WindowGeometry::cubic(3, 1, 1), false},
      // Forward's rows of 3 W taps (RowsOuterAscending, from 8 input channels on): 9 channels, 12
      // outputs (a block of 8 and one of 4), and W = 35 (two full vectors and a 3-lane tail).
      {1, 9, 12, {7, 6, 35}, WindowGeometry::cubic(3, 1, 1), true},
  };
}

// Each pass on the whole box against the interior and six slabs computed separately (bitwise for
// forward and backward-data, which never reorder a value's sum; to rounding for the partial sums
// of backward-filter), and the whole box against the naive reference, so that a kernel that wrote
// nothing fails.
template <class T>
void checkSubBoxes(const ConvCase& c, KernelPath path) {
  SCOPED_TRACE(::testing::Message() << kernelPathName(path) << " " << c);
  const HostExec exec;
  const HostTensor<T> x("x", TensorBlock::whole(c.inShape(), c.inHalo()));
  const HostTensor<T> dy("dy", TensorBlock::whole(c.outShape()));
  HostWeights<T> w("w", c.out_ch, c.in_ch, c.g.kernel[0], c.g.kernel[1], c.g.kernel[2]);
  HostBias<T> b("b", c.bias ? c.out_ch : 0);
  fillOwned(x, 11);
  fillOwned(dy, 12);
  fillUniform(w, 13);
  fillUniform(b, 14);
  const double tolerance = std::is_same<T, double>::value ? 1e-12 : 2e-5;

  // Forward: the interior and the six slabs of the output box, each assigned separately.
  const HostTensor<T> y_whole("y", TensorBlock::whole(c.outShape())),
      y_parts("y", TensorBlock::whole(c.outShape())), y_ref("y", TensorBlock::whole(c.outShape()));
  fillAll(y_whole, T(-7));
  fillAll(y_parts, T(-7));
  kernels::conv3dForward(exec, x, w, b, c.g, y_whole, c.outBox(), path);
  for (const Box& piece : interiorAndSlabs(c.outBox(), 2, true))
    kernels::conv3dForward(exec, x, w, b, c.g, y_parts, piece, path);
  kernels::reference::conv3dForward(exec, x, w, b, c.g, y_ref, c.outBox());
  exec.fence();
  EXPECT_TRUE(identical(y_whole, y_parts)) << "forward";
  EXPECT_LE(maxRelError(y_whole.view(), y_ref.view()), tolerance) << "forward";

  // Backward-data: the same split of the dx box.
  const HostTensor<T> dx_whole("dx", TensorBlock::whole(c.inShape(), c.inHalo()));
  const HostTensor<T> dx_parts("dx", TensorBlock::whole(c.inShape(), c.inHalo()));
  const HostTensor<T> dx_ref("dx", TensorBlock::whole(c.inShape(), c.inHalo()));
  fillAll(dx_whole, T(-7));
  fillAll(dx_parts, T(-7));
  fillAll(dx_ref, T(-7));
  kernels::conv3dBackwardData(exec, dy, w, c.g, dx_whole, c.inBox(), dy.block().owned(), path);
  for (const Box& piece : interiorAndSlabs(c.inBox(), 3, true))
    kernels::conv3dBackwardData(exec, dy, w, c.g, dx_parts, piece, dy.block().owned(), path);
  kernels::reference::conv3dBackwardData(exec, dy, w, c.g, dx_ref, c.inBox());
  exec.fence();
  EXPECT_TRUE(identical(dx_whole, dx_parts)) << "backward-data";
  EXPECT_LE(maxRelError(dx_whole.view(), dx_ref.view()), tolerance) << "backward-data";

  // Backward-filter: partials over the pieces, accumulated, against the whole box (sums reorder).
  HostWeights<T> dw_whole("dw", c.out_ch, c.in_ch, c.g.kernel[0], c.g.kernel[1], c.g.kernel[2]);
  HostWeights<T> dw_parts("dw", c.out_ch, c.in_ch, c.g.kernel[0], c.g.kernel[1], c.g.kernel[2]);
  HostWeights<T> dw_ref("dw", c.out_ch, c.in_ch, c.g.kernel[0], c.g.kernel[1], c.g.kernel[2]);
  HostBias<T> db_whole("db", b.extent(0)), db_parts("db", b.extent(0)), db_ref("db", b.extent(0));
  fillUniform(dw_parts, 15);
  fillUniform(db_parts, 16);
  kernels::conv3dBackwardFilter(exec, x, dy, c.g, dw_whole, db_whole, c.outBox(), false, path);
  bool accumulate = false;
  for (const Box& piece : interiorAndSlabs(c.outBox(), 2, true)) {
    kernels::conv3dBackwardFilter(exec, x, dy, c.g, dw_parts, db_parts, piece, accumulate, path);
    accumulate = true;
  }
  kernels::reference::conv3dBackwardFilter(exec, x, dy, c.g, dw_ref, db_ref, c.outBox(), false);
  exec.fence();
  const double sum_tolerance = std::is_same<T, double>::value ? 1e-12 : 1e-5;
  EXPECT_LE(maxRelError(dw_parts, dw_whole), sum_tolerance) << "backward-filter dw";
  EXPECT_LE(maxRelError(dw_whole, dw_ref), sum_tolerance) << "backward-filter dw";
  if (c.bias) {
    EXPECT_LE(maxRelError(db_parts, db_whole), sum_tolerance) << "backward-filter db";
    EXPECT_LE(maxRelError(db_whole, db_ref), sum_tolerance) << "backward-filter db";
  }
}

class Conv3dSubBoxes : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv3dSubBoxes, InteriorPlusSlabsEqualsWholeDouble) {
  for (KernelPath path : {KernelPath::Fastest, KernelPath::Device})
    checkSubBoxes<double>(GetParam(), path);
}
TEST_P(Conv3dSubBoxes, InteriorPlusSlabsEqualsWholeFloat) {
  for (KernelPath path : {KernelPath::Fastest, KernelPath::Device})
    checkSubBoxes<float>(GetParam(), path);
}

INSTANTIATE_TEST_SUITE_P(Geometries, Conv3dSubBoxes, ::testing::ValuesIn(subBoxCases()));

// A layer's backward-data writes dx on its window clipped to the volume, ghost cells of dx
// included, from the dy cells it owns; summing every block's window (the scatter) must give the
// one-block dx.
TEST(Conv3dBackwardData, GhostWindowsOfTwoBlocksSumToTheWhole) {
  const ConvCase c{1, 2, 3, {9, 5, 6}, WindowGeometry::cubic(3, 1, 1), false};
  const HostExec exec;
  const HostTensor<double> dy("dy", TensorBlock::whole(c.outShape()));
  HostWeights<double> w("w", c.out_ch, c.in_ch, 3, 3, 3);
  fillOwned(dy, 21);
  fillUniform(w, 22);
  const HostTensor<double> dx("dx", TensorBlock::whole(c.inShape(), c.inHalo()));
  kernels::conv3dBackwardData(exec, dy, w, c.g, dx, c.inBox());
  // Two blocks split along D at 4: each computes dx on its owned cells plus one ghost plane inside
  // the volume.
  const HaloWidths halo = HaloWidths::uniform(1);
  const HostTensor<double> lo("dx_lo",
                              TensorBlock(c.inShape(), 0, 1, Box({0, 0, 0}, {4, 5, 6}), halo));
  const HostTensor<double> hi("dx_hi",
                              TensorBlock(c.inShape(), 0, 1, Box({4, 0, 0}, {9, 5, 6}), halo));
  kernels::conv3dBackwardData(exec, dy, w, c.g, lo, Box({0, 0, 0}, {5, 5, 6}),
                              Box({0, 0, 0}, {4, 5, 6}));
  kernels::conv3dBackwardData(exec, dy, w, c.g, hi, Box({3, 0, 0}, {9, 5, 6}),
                              Box({4, 0, 0}, {9, 5, 6}));
  exec.fence();
  double worst = 0;
  for (index_t i = 0; i < c.in_ch; ++i)
    for (index_t d = 0; d < 9; ++d)
      for (index_t h = 0; h < 5; ++h)
        for (index_t q = 0; q < 6; ++q) {
          double sum = 0;
          if (d < 5) sum += lo.view()(0, i, d + 1, h + 1, q + 1);
          if (d >= 3) sum += hi.view()(0, i, d - 4 + 1, h + 1, q + 1);
          worst = std::max(worst, std::fabs(sum - dx.view()(0, i, d + 1, h + 1, q + 1)));
        }
  EXPECT_LE(worst, 1e-13);
}

// Errors.

// Runs `call`, which must throw ShapeError, and checks that the message holds every string of
// `expected`.
template <class Call>
void expectShapeError(Call&& call, const std::vector<std::string>& expected) {
  try {
    call();
    ADD_FAILURE() << "no ShapeError thrown";
  } catch (const ShapeError& e) {
    const std::string m = e.what();
    for (const std::string& s : expected)
      EXPECT_NE(m.find(s), std::string::npos) << "'" << s << "' missing in: " << m;
  }
}

struct ErrorFixture {
  ConvCase c{2, 3, 4, {6, 5, 7}, WindowGeometry::cubic(3, 1, 1), true};
  HostTensor<float> x{"x", TensorBlock::whole(c.inShape(), c.inHalo())};
  HostTensor<float> y{"y", TensorBlock::whole(c.outShape())};
  HostWeights<float> w{"w", 4, 3, 3, 3, 3};
  HostBias<float> b{"b", 4};
  HostExec exec;
};

TEST(Conv3dErrors, MismatchedChannelsNameTheWeightShape) {
  ErrorFixture f;
  const HostWeights<float> w("w_bad", 4, 2, 3, 3, 3);
  expectShapeError([&] { kernels::conv3dForward(f.exec, f.x, w, f.b, f.c.g, f.y, f.c.outBox()); },
                   {"conv3dForward", "'w_bad' of shape (4, 2, 3, 3, 3)", "(4, 3, 3, 3, 3)"});
  const HostTensor<float> x2("x_two_channels", TensorBlock::whole({2, 2, 6, 5, 7}, f.c.inHalo()));
  expectShapeError([&] { kernels::conv3dForward(f.exec, x2, f.w, f.b, f.c.g, f.y, f.c.outBox()); },
                   {"'w' of shape (4, 3, 3, 3, 3)", "(4, 2, 3, 3, 3)"});
  const HostTensor<float> dy5("dy5", TensorBlock::whole({2, 5, 6, 5, 7}));
  expectShapeError([&] { kernels::conv3dBackwardData(f.exec, dy5, f.w, f.c.g, f.x, f.c.inBox()); },
                   {"conv3dBackwardData", "(5, 3, 3, 3, 3)"});
}

TEST(Conv3dErrors, WrongKernelAndBiasShapesAreNamed) {
  ErrorFixture f;
  const HostWeights<float> w("w_k2", 4, 3, 3, 2, 3);
  expectShapeError([&] { kernels::conv3dForward(f.exec, f.x, w, f.b, f.c.g, f.y, f.c.outBox()); },
                   {"'w_k2' of shape (4, 3, 3, 2, 3)", "(4, 3, 3, 3, 3)"});
  const HostBias<float> b("b_bad", 3);
  expectShapeError([&] { kernels::conv3dForward(f.exec, f.x, f.w, b, f.c.g, f.y, f.c.outBox()); },
                   {"'b_bad' has extent 3", "extent 0 (no bias) or 4"});
  const HostWeights<float> dw("dw", 4, 3, 3, 3, 3);
  expectShapeError(
      [&] { kernels::conv3dBackwardFilter(f.exec, f.x, f.y, f.c.g, dw, b, f.c.outBox(), false); },
      {"conv3dBackwardFilter", "'b_bad' has extent 3"});
}

TEST(Conv3dErrors, OutputBoxOutsideTheOwnedCellsIsNamed) {
  ErrorFixture f;
  const Box box({0, 0, 0}, {6, 5, 8});
  expectShapeError([&] { kernels::conv3dForward(f.exec, f.x, f.w, f.b, f.c.g, f.y, box); },
                   {"output box [0:6, 0:5, 0:8)", "'y' of global shape (2, 4, 6, 5, 7)"});
  const HostWeights<float> dw("dw", 4, 3, 3, 3, 3);
  expectShapeError(
      [&] { kernels::conv3dBackwardFilter(f.exec, f.x, f.y, f.c.g, dw, f.b, box, false); },
      {"output box [0:6, 0:5, 0:8)", "'y'"});
}

TEST(Conv3dErrors, GhostRegionTooThinIsNamed) {
  ErrorFixture f;
  const HostTensor<float> thin("x_thin",
                               TensorBlock::whole(f.c.inShape(), HaloWidths{{1, 1, 1}, {1, 0, 1}}));
  expectShapeError(
      [&] { kernels::conv3dForward(f.exec, thin, f.w, f.b, f.c.g, f.y, f.c.outBox()); },
      {"input window [-1:7, -1:6, -1:8)", "'x_thin'", "halo lo(1,1,1) hi(1,0,1)", "too thin"});
  // Without the ghost plane, the interior still works: the window of [0:6, 0:4, 0:7) fits.
  EXPECT_NO_THROW(
      kernels::conv3dForward(f.exec, thin, f.w, f.b, f.c.g, f.y, Box({0, 0, 0}, {6, 4, 7})));
  // dx_box must stay inside the volume (the ghosts past it are the padding).
  expectShapeError(
      [&] {
        kernels::conv3dBackwardData(f.exec, f.y, f.w, f.c.g, f.x, Box({-1, 0, 0}, {6, 5, 7}));
      },
      {"dx box [-1:6, 0:5, 0:7)", "reaches past the volume (6, 5, 7)"});
  f.exec.fence();
}

TEST(Conv3dErrors, MismatchedSamplesAndVolumesAreNamed) {
  ErrorFixture f;
  const HostTensor<float> y1("y_one_sample", TensorBlock::whole({1, 4, 6, 5, 7}));
  expectShapeError(
      [&] {
        kernels::conv3dForward(f.exec, f.x, f.w, f.b, f.c.g, y1, Box({0, 0, 0}, {1, 1, 1}));
      },
      {"sample mismatch", "'y_one_sample'", "samples [0, 1)", "'x'"});
  const HostTensor<float> y_small("y_small", TensorBlock::whole({2, 4, 6, 5, 6}));
  expectShapeError(
      [&] {
        kernels::conv3dForward(f.exec, f.x, f.w, f.b, f.c.g, y_small, Box({0, 0, 0}, {1, 1, 1}));
      },
      {"'y_small'", "has volume (6, 5, 6)", "gives (6, 5, 7)"});
}

}  // namespace
}  // namespace halo3d::testing
