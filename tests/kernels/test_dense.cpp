// Dense layers against the naive references over a size sweep (extents of 1, odd sizes, no bias;
// up to 16 samples the row kernels, above that gemm); gradients against central differences in
// double; accumulation; shape errors. The row kernels are one code for the host and a device (no
// KernelPath), so the sweep runs what a CUDA build runs.
#include <gtest/gtest.h>

#include "halo3d/kernels/Dense.hpp"
#include "halo3d/kernels/reference/Dense.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {
namespace {

namespace ref = kernels::reference;

struct DenseCase {
  index_t samples, in, out;
  bool bias;
};
const DenseCase kCases[] = {{1, 1, 1, true},
                            {3, 10, 6, true},
                            {4, 7, 1, false},
                            {1, 33, 17, true},
                            {5, 2, 9, false},
                            // More samples than the row kernels take (16): the gemm path.
                            {17, 5, 3, true},
                            {24, 40, 70, false}};

template <class T, class E = Exec>
kernels::Matrix<T, E> matrix(const std::string& label, index_t rows, index_t cols,
                             std::uint64_t seed) {
  kernels::Matrix<T, E> m(label, rows, cols);
  auto h = Kokkos::create_mirror_view(m);
  for (std::size_t k = 0; k < h.span(); ++k)
    h.data()[k] = T(hashUniform(seed, k));
  Kokkos::deep_copy(m, h);
  return m;
}

template <class T>
void checkAgainstReference(double tolerance) {
  for (const DenseCase& c : kCases) {
    const auto x = matrix<T>("x", c.samples, c.in, 1), w = matrix<T>("w", c.out, c.in, 2);
    const auto dy = matrix<T>("dy", c.samples, c.out, 3);
    const auto xh = matrix<T, HostExec>("x", c.samples, c.in, 1),
               wh = matrix<T, HostExec>("w", c.out, c.in, 2);
    const auto dyh = matrix<T, HostExec>("dy", c.samples, c.out, 3);
    const std::vector<double> bias =
        c.bias ? hashValues(std::size_t(c.out), 4) : std::vector<double>();
    const auto b = makeVector<T>("b", bias);
    const auto bh = makeVector<T, HostExec>("b", bias);
    kernels::Matrix<T, Exec> y("y", c.samples, c.out), dx("dx", c.samples, c.in),
        dw("dw", c.out, c.in);
    kernels::Matrix<T, HostExec> yh("y", c.samples, c.out), dxh("dx", c.samples, c.in);
    auto dwh = matrix<T, HostExec>("dw", c.out, c.in, 5);
    auto dbh = makeVector<T, HostExec>("db", hashValues(std::size_t(c.out), 6));
    Kokkos::deep_copy(dw, dwh);
    auto db = makeVector<T>("db", hashValues(std::size_t(c.out), 6));
    kernels::denseForward(Exec(), x, w, b, y);
    kernels::denseBackwardData(Exec(), dy, w, dx);
    kernels::denseBackwardWeights(Exec(), x, dy, dw, true);
    kernels::denseBackwardBias(Exec(), dy, db, true);
    ref::denseForward(HostExec(), xh, wh, bh, yh);
    ref::denseBackwardData(HostExec(), dyh, wh, dxh);
    ref::denseBackwardWeights(HostExec(), xh, dyh, dwh, true);
    ref::denseBackwardBias(HostExec(), dyh, dbh, true);
    EXPECT_LT(maxRelError(values(y), values(yh)), tolerance)
        << c.samples << " " << c.in << " " << c.out;
    EXPECT_LT(maxRelError(values(dx), values(dxh)), tolerance);
    EXPECT_LT(maxRelError(values(dw), values(dwh)), tolerance);
    EXPECT_LT(maxRelError(values(db), values(dbh)), tolerance);
    // Without accumulate the gradients are overwritten.
    kernels::denseBackwardWeights(Exec(), x, dy, dw);
    kernels::denseBackwardBias(Exec(), dy, db);
    ref::denseBackwardWeights(HostExec(), xh, dyh, dwh);
    ref::denseBackwardBias(HostExec(), dyh, dbh);
    EXPECT_LT(maxRelError(values(dw), values(dwh)), tolerance);
    EXPECT_LT(maxRelError(values(db), values(dbh)), tolerance);
  }
}

HALO3D_FLOAT_DOUBLE_TESTS(Dense, MatchesReferenceFloat, MatchesReferenceDouble,
                          checkAgainstReference, (1e-6), (1e-14))

// <r, x w^T + b> differentiated by central differences (of the reference) in x, w and b.
TEST(Dense, GradientsMatchFiniteDifferences) {
  for (const DenseCase& c : kCases) {
    if (!c.bias) continue;
    auto xh = matrix<double, HostExec>("x", c.samples, c.in, 7),
         wh = matrix<double, HostExec>("w", c.out, c.in, 8);
    auto bh = makeVector<double, HostExec>("b", hashValues(std::size_t(c.out), 9));
    const auto r = matrix<double, HostExec>("r", c.samples, c.out, 10);
    // Allocated once: an allocation is a parallel zero-fill, slow on an oversubscribed machine.
    const kernels::Matrix<double, HostExec> y("y", c.samples, c.out);
    auto loss = [&] {
      ref::denseForward(HostExec(), xh, wh, bh, y);
      double s = 0.0;
      for (std::size_t k = 0; k < y.span(); ++k)
        s += y.data()[k] * r.data()[k];
      return s;
    };
    const auto dy = matrix<double>("dy", c.samples, c.out, 10);
    kernels::Matrix<double, Exec> dx("dx", c.samples, c.in), dw("dw", c.out, c.in);
    DeviceVector<double> db("db", c.out);
    kernels::denseBackwardData(Exec(), dy, matrix<double>("w", c.out, c.in, 8), dx);
    kernels::denseBackwardWeights(Exec(), matrix<double>("x", c.samples, c.in, 7), dy, dw);
    kernels::denseBackwardBias(Exec(), dy, db);
    EXPECT_LT(maxRelError(values(dx), numericGradientOf(xh, loss)), 1e-8);
    EXPECT_LT(maxRelError(values(dw), numericGradientOf(wh, loss)), 1e-8);
    EXPECT_LT(maxRelError(values(db), numericGradientOf(bh, loss)), 1e-8);
  }
}

TEST(Dense, OverloadsWithoutAnInstanceUseTheDefault) {
  const auto x = matrix<float>("x", 3, 4, 1), w = matrix<float>("w", 2, 4, 2),
             dy = matrix<float>("dy", 3, 2, 3);
  const auto b = makeVector<float>("b", {0.5, -0.5});
  kernels::Matrix<float, Exec> y("y", 3, 2), dx("dx", 3, 4), dw("dw", 2, 4), y_exec("y", 3, 2);
  DeviceVector<float> db("db", 2);
  kernels::denseForward(x, w, b, y);
  kernels::denseBackwardData(dy, w, dx);
  kernels::denseBackwardWeights(x, dy, dw);
  kernels::denseBackwardBias(dy, db);
  kernels::denseForward(Exec(), x, w, b, y_exec);
  EXPECT_EQ(values(y), values(y_exec));
  // What the reference gives: a kernel that wrote nothing would leave its output at zero.
  const auto xh = matrix<float, HostExec>("x", 3, 4, 1), wh = matrix<float, HostExec>("w", 2, 4, 2),
             dyh = matrix<float, HostExec>("dy", 3, 2, 3);
  kernels::Matrix<float, HostExec> yh("y", 3, 2), dxh("dx", 3, 4), dwh("dw", 2, 4);
  HostVector<float> dbh("db", 2);
  ref::denseForward(HostExec(), xh, wh, makeVector<float, HostExec>("b", {0.5, -0.5}), yh);
  ref::denseBackwardData(HostExec(), dyh, wh, dxh);
  ref::denseBackwardWeights(HostExec(), xh, dyh, dwh);
  ref::denseBackwardBias(HostExec(), dyh, dbh);
  EXPECT_LT(maxRelError(values(y), values(yh)), 1e-6);
  EXPECT_LT(maxRelError(values(dx), values(dxh)), 1e-6);
  EXPECT_LT(maxRelError(values(dw), values(dwh)), 1e-6);
  EXPECT_LT(maxRelError(values(db), values(dbh)), 1e-6);
}

TEST(Dense, ShapeErrorsNameTheValues) {
  const auto x = matrix<float>("x", 3, 10, 1), w = matrix<float>("w", 6, 9, 2);
  const auto b = makeVector<float>("b", hashValues(5, 3));
  kernels::Matrix<float, Exec> y("y", 3, 6);
  std::string m = errorMessage<ShapeError>([&] { kernels::denseForward(Exec(), x, w, b, y); });
  EXPECT_NE(m.find("'w' has extent 9 along dimension 1"), std::string::npos) << m;
  EXPECT_NE(m.find("in of x (N, in) is 10"), std::string::npos) << m;
  const auto w_ok = matrix<float>("w", 6, 10, 2);
  m = errorMessage<ShapeError>([&] { kernels::denseForward(Exec(), x, w_ok, b, y); });
  EXPECT_NE(m.find("bias 'b' has extent 5"), std::string::npos) << m;
  EXPECT_NE(m.find("extent 0 (no bias) or 6"), std::string::npos) << m;
  DeviceVector<float> db("db", 7);
  m = errorMessage<ShapeError>([&] { kernels::denseBackwardBias(Exec(), y, db); });
  EXPECT_NE(m.find("'db' has extent 7"), std::string::npos) << m;
}

}  // namespace
}  // namespace halo3d::testing
