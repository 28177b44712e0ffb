// BatchNorm3d's running statistics with spatial-group statistics: at every grid of the
// communicator's size they follow the whole mini-batch (PyTorch's definition applied to the global
// batch), and every rank holds the same values, so an evaluation or a checkpoint does not depend on
// the rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <vector>

#include "halo3d/nn/Init.hpp"
#include "halo3d/nn/Model.hpp"
#include "halo3d/nn/layers/BatchNorm3d.hpp"
#include "support/GridFactorisations.hpp"
#include "support/MpiWorld.hpp"

namespace halo3d::nn {
namespace {

using testing::worldSize;

// Differs per sample and channel in mean and spread, so group statistics differ from the batch's.
double value(index_t n, index_t c, index_t d, index_t h, index_t w) {
  return 0.5 * double(n) - 0.3 * double(c) +
         (1.0 + 0.25 * double(n + c)) * std::sin(double(d * 7 + h * 3 + w) + 0.1 * double(n));
}

constexpr index_t kChannels = 3, kD = 9, kH = 8, kW = 10;  // uneven splits over up to 8 ranks

TEST(BatchNormLayer, RunningStatisticsFollowTheWholeBatchOnEveryGrid) {
  const index_t batch = 2 * worldSize();
  // What PyTorch keeps after one training step on the whole batch: momentum 0.1 from (0, 1),
  // unbiased variance.
  std::vector<double> want_mean(kChannels), want_var(kChannels);
  for (index_t c = 0; c < kChannels; ++c) {
    double s = 0, s2 = 0, m = 0;
    for (index_t n = 0; n < batch; ++n)
      for (index_t d = 0; d < kD; ++d)
        for (index_t h = 0; h < kH; ++h)
          for (index_t w = 0; w < kW; ++w) {
            const double v = value(n, c, d, h, w);
            s += v;
            s2 += v * v;
            m += 1;
          }
    const double mean = s / m, var = (s2 / m - mean * mean) * m / (m - 1);
    want_mean[c] = 0.1 * mean;
    want_var[c] = 0.9 + 0.1 * var;
  }
  for (const GridShape& shape : testing::allGrids(worldSize())) {
    SCOPED_TRACE(shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    Model m;
    m.input({kChannels, kD, kH, kW});
    m.add(std::make_unique<BatchNorm3d>("bn", kChannels, StatsGroup::Spatial));
    m.build(grid, batch);
    initializeParameters(m.parameters(), 1);
    Activation& in = m.input();
    auto h = Kokkos::create_mirror_view(in.tensor.owned());
    const TensorBlock& b = in.tensor.block();
    for (index_t n = 0; n < index_t(h.extent(0)); ++n)
      for (index_t c = 0; c < kChannels; ++c)
        for (index_t d = 0; d < index_t(h.extent(2)); ++d)
          for (index_t y = 0; y < index_t(h.extent(3)); ++y)
            for (index_t x = 0; x < index_t(h.extent(4)); ++x)
              h(n, c, d, y, x) = real(value(n + b.sampleBegin(), c, d + b.owned().min(0),
                                            y + b.owned().min(1), x + b.owned().min(2)));
    Kokkos::deep_copy(in.tensor.owned(), h);
    RunContext ctx;
    ctx.grid = &grid;
    ctx.training = true;
    m.forward(ctx);
    auto mean = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                    m.parameters().find("bn.running_mean").value());
    auto var = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                   m.parameters().find("bn.running_var").value());
    const double tol = sizeof(real) == 4 ? 1e-5 : 1e-12;
    for (index_t c = 0; c < kChannels; ++c) {
      EXPECT_NEAR(mean(c), want_mean[c], tol * (1 + std::abs(want_mean[c]))) << "channel " << c;
      EXPECT_NEAR(var(c), want_var[c], tol * (1 + std::abs(want_var[c]))) << "channel " << c;
      // Bit-identical on every rank.
      double mine[2] = {double(mean(c)), double(var(c))}, lo[2], hi[2];
      MPI_Allreduce(mine, lo, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(mine, hi, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_EQ(lo[0], hi[0]) << "running_mean differs between ranks, channel " << c;
      EXPECT_EQ(lo[1], hi[1]) << "running_var differs between ranks, channel " << c;
    }
  }
}

}  // namespace
}  // namespace halo3d::nn
