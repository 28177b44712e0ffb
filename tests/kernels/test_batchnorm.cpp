// Batch norm: every part against the naive reference over a shape sweep, on the host and the device
// code (the team reductions at several threads per team are in test_reduce_paths.cpp); the
// training-mode gradient
// (through the batch statistics) against central differences in double; the partial sums of a 2x2x2
// split add up to the whole volume's; sub-boxes are bit-identical to the whole box; running
// statistics; shape errors.
#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "halo3d/kernels/BatchNorm.hpp"
#include "halo3d/kernels/reference/BatchNorm.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {
namespace {

namespace ref = kernels::reference;
constexpr double kEps = 1e-5;

// A batch-norm problem on one block: x, dy, gamma, beta; global statistics computed through the
// kernels.
template <class T>
struct Problem {
  TensorBlock block;
  HostTensor<T> x, dy;
  std::vector<double> gamma, beta;

  explicit Problem(const ShapeCase& sc, std::uint64_t seed = 1)
      : block(TensorBlock::whole(sc.shape, sc.halo)),
        x(hostRandom<T>("x", block, seed, -2.0, 3.0)),
        dy(hostRandom<T>("dy", block, seed + 1)),
        gamma(hashValues(std::size_t(sc.shape[1]), seed + 2, 0.5, 1.5)),
        beta(hashValues(std::size_t(sc.shape[1]), seed + 3)) {}
  index_t channels() const { return block.channels(); }
  double count() const { return double(block.localSamples() * block.owned().size()); }
};

// maxRelError(ours, reference) < tolerance for each pair.
void expectRelErrorsBelow(
    std::initializer_list<std::pair<std::vector<double>, std::vector<double>>> pairs,
    double tolerance) {
  int k = 0;
  for (const auto& [ours, reference] : pairs)
    EXPECT_LT(maxRelError(ours, reference), tolerance) << "pair " << k++;
}

template <class T>
void checkAgainstReference(double tolerance) {
  forEachPathAndShape([&](KernelPath path, const ShapeCase& sc) {
    const Problem<T> p(sc);
    const index_t c = p.channels();
    const Box box = p.block.owned();
    const auto x = toDevice(p.x), dy = toDevice(p.dy);
    const auto gamma = makeVector<T>("gamma", p.gamma), beta = makeVector<T>("beta", p.beta);
    const auto gamma_h = makeVector<T, HostExec>("gamma", p.gamma),
               beta_h = makeVector<T, HostExec>("beta", p.beta);

    DeviceVector<double> stats("stats", kernels::batchNormStatsSize(c));
    HostVector<double> stats_h("stats", kernels::batchNormStatsSize(c));
    kernels::batchNormStatistics(Exec(), x, stats, box, false, path);
    ref::batchNormStatistics(HostExec(), p.x, stats_h, box);
    EXPECT_LT(maxRelError(values(stats), values(stats_h)), 1e-13);

    DeviceVector<T> mean("mean", c), var("var", c);
    HostVector<T> mean_h("mean", c), var_h("var", c);
    kernels::batchNormMoments(Exec(), stats, mean, var);
    ref::batchNormMoments(HostExec(), stats_h, mean_h, var_h);
    expectRelErrorsBelow({{values(mean), values(mean_h)}, {values(var), values(var_h)}}, tolerance);

    DeviceTensor<T> y("y", p.block);
    HostTensor<T> y_h("y", p.block);
    kernels::batchNormForward(Exec(), x, mean, var, gamma, beta, kEps, y, box, path);
    ref::batchNormForward(HostExec(), p.x, mean_h, var_h, gamma_h, beta_h, kEps, y_h, box);
    EXPECT_LT(maxRelError(toHost(y), y_h, box), tolerance);

    DeviceVector<double> sums("sums", kernels::batchNormBackwardSumsSize(c));
    HostVector<double> sums_h("sums", kernels::batchNormBackwardSumsSize(c));
    kernels::batchNormBackwardSums(Exec(), x, dy, mean, var, kEps, sums, box, false, path);
    ref::batchNormBackwardSums(HostExec(), p.x, p.dy, mean_h, var_h, kEps, sums_h, box);
    EXPECT_LT(maxRelError(values(sums), values(sums_h)), tolerance);

    DeviceTensor<T> dx("dx", p.block);
    HostTensor<T> dx_h("dx", p.block);
    kernels::batchNormBackward(Exec(), x, dy, mean, var, gamma, kEps, sums, p.count(), dx, box,
                               path);
    ref::batchNormBackward(HostExec(), p.x, p.dy, mean_h, var_h, gamma_h, kEps, sums_h, p.count(),
                           dx_h, box);
    EXPECT_LT(maxRelError(toHost(dx), dx_h, box), 10 * tolerance);

    DeviceVector<T> dgamma("dgamma", c), dbeta("dbeta", c);
    HostVector<T> dgamma_h("dgamma", c), dbeta_h("dbeta", c);
    kernels::batchNormParameterGradients(Exec(), sums, dgamma, dbeta);
    ref::batchNormParameterGradients(HostExec(), sums_h, dgamma_h, dbeta_h);
    expectRelErrorsBelow({{values(dgamma), values(dgamma_h)}, {values(dbeta), values(dbeta_h)}},
                         tolerance);
  });
}

HALO3D_FLOAT_DOUBLE_TESTS(BatchNorm, MatchesReferenceFloat, MatchesReferenceDouble,
                          checkAgainstReference, (2e-6), (1e-12))

// y(x, gamma, beta) with batch statistics; <r, y> differentiated by central differences in double.
// The loss runs the naive reference (checked against the kernels above), so the finite differences
// cost no kernel launches.
TEST(BatchNorm, TrainingGradientMatchesFiniteDifferences) {
  for (const Shape5& shape :
       {Shape5{2, 3, 1, 3, 5}, Shape5{1, 2, 3, 3, 3}, Shape5{3, 1, 2, 1, 1}}) {
    const Problem<double> p({shape, HaloWidths::uniform(1)}, 11);
    const index_t c = p.channels();
    const Box box = p.block.owned();
    const auto gamma_h = makeVector<double, HostExec>("gamma", p.gamma);
    const auto beta_h = makeVector<double, HostExec>("beta", p.beta);
    const HostTensor<double>& r = p.dy;
    // Allocated once: an allocation is a parallel zero-fill, slow on an oversubscribed machine.
    const HostVector<double> stats_h("stats", kernels::batchNormStatsSize(c)), mean_h("m", c),
        var_h("v", c);
    const HostTensor<double> y_h("y", p.block);
    auto loss = [&, stats = stats_h, mean = mean_h, var = var_h, y = y_h] {
      ref::batchNormStatistics(HostExec(), p.x, stats, box);
      ref::batchNormMoments(HostExec(), stats, mean, var);
      ref::batchNormForward(HostExec(), p.x, mean, var, gamma_h, beta_h, kEps, y, box);
      return dot(y, r);
    };
    const auto x = toDevice(p.x);
    DeviceVector<double> stats("stats", kernels::batchNormStatsSize(c)), mean("mean", c),
        var("var", c);
    kernels::batchNormStatistics(Exec(), x, stats, box);
    kernels::batchNormMoments(Exec(), stats, mean, var);
    DeviceVector<double> sums("sums", kernels::batchNormBackwardSumsSize(c));
    kernels::batchNormBackwardSums(Exec(), x, toDevice(r), mean, var, kEps, sums, box);
    DeviceTensor<double> dx("dx", p.block);
    kernels::batchNormBackward(Exec(), x, toDevice(r), mean, var, makeVector<double>("g", p.gamma),
                               kEps, sums, p.count(), dx, box);
    DeviceVector<double> dgamma("dgamma", c), dbeta("dbeta", c);
    kernels::batchNormParameterGradients(Exec(), sums, dgamma, dbeta);
    EXPECT_LT(maxRelError(ownedValues(toHost(dx)), numericGradient(p.x, loss)), 1e-6) << shape[0];
    EXPECT_LT(maxRelError(values(dgamma), numericGradientOf(gamma_h, loss)), 1e-7) << shape[0];
    EXPECT_LT(maxRelError(values(dbeta), numericGradientOf(beta_h, loss)), 1e-7) << shape[0];
  }
}

// Statistics and backward sums of the 8 blocks of a 1x2x2x2 grid (uneven extents) add up to the
// whole volume's; normalising each block with the summed statistics gives the whole volume's y and
// dx.
TEST(BatchNorm, PartialsOfASplitSumToTheWhole) {
  const Shape5 shape{2, 3, 5, 7, 3};
  const index_t c = shape[1];
  const TensorBlock whole = TensorBlock::whole(shape);
  const auto gamma = makeVector<double>("gamma", hashValues(std::size_t(c), 5, 0.5, 1.5));
  const auto beta = makeVector<double>("beta", hashValues(std::size_t(c), 6));
  const auto x = toDevice(hostRandom<double>("x", whole, 3, -1.0, 2.0));
  const auto dy = toDevice(hostRandom<double>("dy", whole, 4));
  DeviceVector<double> stats("stats", 2 * c + 1), mean("mean", c), var("var", c),
      sums("sums", 2 * c);
  kernels::batchNormStatistics(Exec(), x, stats, whole.owned());
  kernels::batchNormMoments(Exec(), stats, mean, var);
  kernels::batchNormBackwardSums(Exec(), x, dy, mean, var, kEps, sums, whole.owned());
  DeviceTensor<double> y("y", whole), dx("dx", whole);
  const double count = double(shape[0] * whole.owned().size());
  kernels::batchNormForward(Exec(), x, mean, var, gamma, beta, kEps, y, whole.owned());
  kernels::batchNormBackward(Exec(), x, dy, mean, var, gamma, kEps, sums, count, dx, whole.owned());

  const std::vector<TensorBlock> blocks =
      gridBlocks(shape, GridShape(1, 2, 2, 2), HaloWidths::uniform(1));
  for (KernelPath path : kPaths) {
    SCOPED_TRACE(kernelPathName(path));
    DeviceVector<double> split_stats("split_stats", 2 * c + 1), split_sums("split_sums", 2 * c);
    std::vector<DeviceTensor<double>> xs, dys;
    for (const TensorBlock& b : blocks) {
      xs.push_back(toDevice(hostRandom<double>("x", b, 3, -1.0, 2.0)));
      dys.push_back(toDevice(hostRandom<double>("dy", b, 4)));
      kernels::batchNormStatistics(Exec(), xs.back(), split_stats, b.owned(), xs.size() > 1, path);
    }
    EXPECT_LT(maxRelError(values(split_stats), values(stats)), 1e-14);
    DeviceVector<double> split_mean("mean", c), split_var("var", c);
    kernels::batchNormMoments(Exec(), split_stats, split_mean, split_var);
    for (std::size_t k = 0; k < blocks.size(); ++k)
      kernels::batchNormBackwardSums(Exec(), xs[k], dys[k], split_mean, split_var, kEps, split_sums,
                                     blocks[k].owned(), k > 0, path);
    EXPECT_LT(maxRelError(values(split_sums), values(sums)), 1e-12);
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      DeviceTensor<double> yb("y", blocks[k]), dxb("dx", blocks[k]);
      kernels::batchNormForward(Exec(), xs[k], split_mean, split_var, gamma, beta, kEps, yb,
                                blocks[k].owned(), path);
      kernels::batchNormBackward(Exec(), xs[k], dys[k], split_mean, split_var, gamma, kEps,
                                 split_sums, count, dxb, blocks[k].owned(), path);
      EXPECT_LT(maxRelError(toHost(yb), toHost(y), blocks[k].owned()), 1e-13) << "block " << k;
      EXPECT_LT(maxRelError(toHost(dxb), toHost(dx), blocks[k].owned()), 1e-11) << "block " << k;
    }
  }
}

// Empty boxes (any extent 0) add nothing: zeros, or the accumulated values untouched.
TEST(BatchNorm, EmptyBoxesAddNothing) {
  const Problem<double> p(ShapeCase{{2, 2, 3, 4, 5}, {}});
  const auto x = toDevice(p.x), dy = toDevice(p.dy);
  const auto mean = makeVector<double>("mean", {0.5, -0.5});
  const auto var = makeVector<double>("var", {1.0, 2.0});
  for (const Box& empty :
       {Box({0, 0, 2}, {3, 4, 2}), Box({1, 2, 0}, {1, 4, 5}), Box({0, 3, 0}, {3, 3, 5})}) {
    const auto stats = makeVector<double>("stats", {1, 2, 3, 4, 5});
    const auto sums = makeVector<double>("sums", {1, 2, 3, 4});
    kernels::batchNormStatistics(Exec(), x, stats, empty, true);
    kernels::batchNormBackwardSums(Exec(), x, dy, mean, var, kEps, sums, empty, true);
    EXPECT_EQ(values(stats), (std::vector<double>{1, 2, 3, 4, 5})) << empty;
    EXPECT_EQ(values(sums), (std::vector<double>{1, 2, 3, 4})) << empty;
    kernels::batchNormStatistics(Exec(), x, stats, empty);
    kernels::batchNormBackwardSums(Exec(), x, dy, mean, var, kEps, sums, empty);
    EXPECT_EQ(values(stats), std::vector<double>(5, 0.0)) << empty;
    EXPECT_EQ(values(sums), std::vector<double>(4, 0.0)) << empty;
  }
}

// Interior + slabs equal the whole box bit for bit, and the whole box equals the reference (so a
// kernel that wrote nothing fails).
TEST(BatchNorm, SubBoxesEqualWholeBox) {
  const Problem<float> p({{2, 3, 5, 6, 7}, HaloWidths{{1, 2, 0}, {0, 1, 1}}}, 21);
  const index_t c = p.channels();
  const auto x = toDevice(p.x), dy = toDevice(p.dy);
  const auto gamma = makeVector<float>("gamma", p.gamma), beta = makeVector<float>("beta", p.beta);
  const std::vector<double> mean_v = hashValues(std::size_t(c), 22),
                            var_v = hashValues(std::size_t(c), 23, 0.5, 2.0),
                            sums_v = hashValues(std::size_t(2 * c), 24);
  const auto mean = makeVector<float>("mean", mean_v), var = makeVector<float>("var", var_v);
  const auto sums = makeVector<double>("sums", sums_v);
  HostTensor<float> y_ref("y", p.block), dx_ref("dx", p.block);
  const auto mean_h = makeVector<float, HostExec>("mean", mean_v),
             var_h = makeVector<float, HostExec>("var", var_v),
             gamma_h = makeVector<float, HostExec>("gamma", p.gamma),
             beta_h = makeVector<float, HostExec>("beta", p.beta);
  ref::batchNormForward(HostExec(), p.x, mean_h, var_h, gamma_h, beta_h, kEps, y_ref,
                        p.block.owned());
  ref::batchNormBackward(HostExec(), p.x, p.dy, mean_h, var_h, gamma_h, kEps,
                         makeVector<double, HostExec>("sums", sums_v), 17.0, dx_ref,
                         p.block.owned());
  for (KernelPath path : kPaths) {
    DeviceTensor<float> y_whole("y", p.block), y_pieces("y", p.block), dx_whole("dx", p.block),
        dx_pieces("dx", p.block);
    kernels::batchNormForward(Exec(), x, mean, var, gamma, beta, kEps, y_whole, p.block.owned(),
                              path);
    kernels::batchNormBackward(Exec(), x, dy, mean, var, gamma, kEps, sums, 17.0, dx_whole,
                               p.block.owned(), path);
    for (const Box& piece : interiorAndSlabs(p.block.owned(), 1)) {
      kernels::batchNormForward(Exec(), x, mean, var, gamma, beta, kEps, y_pieces, piece, path);
      kernels::batchNormBackward(Exec(), x, dy, mean, var, gamma, kEps, sums, 17.0, dx_pieces,
                                 piece, path);
    }
    EXPECT_TRUE(identical(toHost(y_pieces), toHost(y_whole))) << kernelPathName(path);
    EXPECT_TRUE(identical(toHost(dx_pieces), toHost(dx_whole))) << kernelPathName(path);
    EXPECT_LT(maxRelError(toHost(y_whole), y_ref, p.block.owned()), 2e-6) << kernelPathName(path);
    EXPECT_LT(maxRelError(toHost(dx_whole), dx_ref, p.block.owned()), 2e-5) << kernelPathName(path);
  }
}

TEST(BatchNorm, RunningStatisticsUseTheUnbiasedVariance) {
  const auto mean = makeVector<double>("mean", {1.0, -2.0});
  const auto var = makeVector<double>("var", {4.0, 0.5});
  auto running_mean = makeVector<double>("running_mean", {0.0, 0.0});
  auto running_var = makeVector<double>("running_var", {1.0, 1.0});
  kernels::batchNormUpdateRunningStats(Exec(), mean, var, 10.0, 0.1, running_mean, running_var);
  const std::vector<double> rm = values(running_mean), rv = values(running_var);
  EXPECT_DOUBLE_EQ(rm[0], 0.1);
  EXPECT_DOUBLE_EQ(rm[1], -0.2);
  EXPECT_DOUBLE_EQ(rv[0], 0.9 + 0.1 * 4.0 * 10.0 / 9.0);
  EXPECT_DOUBLE_EQ(rv[1], 0.9 + 0.1 * 0.5 * 10.0 / 9.0);
  const std::string m = errorMessage<ShapeError>([&] {
    kernels::batchNormUpdateRunningStats(Exec(), mean, var, 1.0, 0.1, running_mean, running_var);
  });
  EXPECT_NE(m.find("got count 1"), std::string::npos) << m;
}

TEST(BatchNorm, OverloadsWithoutAnInstanceUseTheDefault) {
  const Problem<float> p(ShapeCase{{2, 2, 3, 4, 5}, {}});
  const index_t c = 2;
  const Box box = p.block.owned();
  const auto x = toDevice(p.x), dy = toDevice(p.dy);
  const auto gamma = makeVector<float>("gamma", p.gamma), beta = makeVector<float>("beta", p.beta);
  DeviceVector<double> stats("stats", 5), sums("sums", 4);
  DeviceVector<float> mean("mean", c), var("var", c), rm("rm", c), rv("rv", c), dg("dg", c),
      db("db", c);
  DeviceTensor<float> y("y", p.block), dx("dx", p.block), dx_exec("dx", p.block);
  kernels::batchNormStatistics(x, stats, box);
  kernels::batchNormMoments(stats, mean, var);
  kernels::batchNormForward(x, mean, var, gamma, beta, kEps, y, box);
  kernels::batchNormUpdateRunningStats(mean, var, p.count(), 0.1, rm, rv);
  kernels::batchNormBackwardSums(x, dy, mean, var, kEps, sums, box);
  kernels::batchNormBackward(x, dy, mean, var, gamma, kEps, sums, p.count(), dx, box);
  kernels::batchNormParameterGradients(sums, dg, db);
  kernels::batchNormBackward(Exec(), x, dy, mean, var, gamma, kEps, sums, p.count(), dx_exec, box);
  EXPECT_TRUE(identical(toHost(dx), toHost(dx_exec)));
  const std::vector<double> s = values(sums), dbv = values(db);
  for (int k = 0; k < 2; ++k)
    EXPECT_NEAR(dbv[k], s[k], 1e-6 * std::fabs(s[k])) << k;
  // What the reference gives: a kernel that wrote nothing would leave its output at zero.
  HostVector<double> stats_h("stats", 5), sums_h("sums", 4);
  HostVector<float> mean_h("mean", c), var_h("var", c);
  HostTensor<float> y_h("y", p.block), dx_h("dx", p.block);
  const auto gamma_h = makeVector<float, HostExec>("gamma", p.gamma),
             beta_h = makeVector<float, HostExec>("beta", p.beta);
  ref::batchNormStatistics(HostExec(), p.x, stats_h, box);
  ref::batchNormMoments(HostExec(), stats_h, mean_h, var_h);
  ref::batchNormForward(HostExec(), p.x, mean_h, var_h, gamma_h, beta_h, kEps, y_h, box);
  ref::batchNormBackwardSums(HostExec(), p.x, p.dy, mean_h, var_h, kEps, sums_h, box);
  ref::batchNormBackward(HostExec(), p.x, p.dy, mean_h, var_h, gamma_h, kEps, sums_h, p.count(),
                         dx_h, box);
  EXPECT_LT(maxRelError(values(stats), values(stats_h)), 1e-13);
  EXPECT_LT(maxRelError(values(mean), values(mean_h)), 2e-6);
  EXPECT_LT(maxRelError(toHost(y), y_h, box), 2e-6);
  EXPECT_LT(maxRelError(values(sums), values(sums_h)), 2e-6);
  EXPECT_LT(maxRelError(toHost(dx), dx_h, box), 2e-5);
  EXPECT_NE(values(rv), std::vector<double>(std::size_t(c), 0.0));
  EXPECT_NE(values(dg), std::vector<double>(std::size_t(c), 0.0));
}

TEST(BatchNorm, ShapeErrorsNameTheValues) {
  const Problem<float> p(ShapeCase{{2, 3, 4, 4, 4}, {}});
  const auto x = toDevice(p.x);
  DeviceVector<double> short_stats("stats", 6);
  std::string m = errorMessage<ShapeError>(
      [&] { kernels::batchNormStatistics(Exec(), x, short_stats, p.block.owned()); });
  EXPECT_NE(m.find("'stats' has extent 6"), std::string::npos) << m;
  EXPECT_NE(m.find("is 7"), std::string::npos) << m;
  const auto ok = makeVector<float>("ok", {1, 1, 1});
  const auto gamma = makeVector<float>("gamma", {1, 1});
  DeviceTensor<float> y("y", p.block);
  m = errorMessage<ShapeError>(
      [&] { kernels::batchNormForward(Exec(), x, ok, ok, gamma, ok, kEps, y, p.block.owned()); });
  EXPECT_NE(m.find("'gamma' has extent 2"), std::string::npos) << m;
  EXPECT_NE(m.find("channel count is 3"), std::string::npos) << m;
  DeviceTensor<float> y_other("y_other", TensorBlock::whole({2, 3, 4, 4, 5}));
  m = errorMessage<ShapeError>([&] {
    kernels::batchNormForward(Exec(), x, ok, ok, ok, ok, kEps, y_other, p.block.owned());
  });
  EXPECT_NE(m.find("(2, 3, 4, 4, 5)"), std::string::npos) << m;
}

}  // namespace
}  // namespace halo3d::testing
