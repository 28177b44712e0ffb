// The epoch schedule: permutations, batches, the final partial batch rule and the group split, as
// pure functions of (samples, batch, groups, seed).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/io/EpochSchedule.hpp"
#include "halo3d/io/Random.hpp"

namespace halo3d {
namespace {

struct StepsCase {
  index_t samples, batch;
  int groups;
  bool drop_last;
  index_t steps, last_batch;
};

// S = 10, B = 4: the 2 left over make a step for 1 or 2 groups, not for 3 or 4; drop_last drops
// them.
const StepsCase kSteps[] = {
    {10, 4, 1, false, 3, 2}, {10, 4, 2, false, 3, 2}, {10, 4, 3, false, 2, 4},
    {10, 4, 4, false, 2, 4}, {10, 4, 2, true, 2, 4},  {8, 4, 4, false, 2, 4},
    {1, 1, 1, false, 1, 1},  {3, 5, 3, false, 1, 3},  {3, 5, 1, false, 1, 3},
    {7, 7, 7, false, 1, 7},  {13, 6, 5, false, 2, 6},
};

TEST(EpochSchedule, StepsAndTheFinalPartialBatch) {
  for (const StepsCase& c : kSteps) {
    SCOPED_TRACE(testing::Message() << "S " << c.samples << " B " << c.batch << " Pn " << c.groups);
    const EpochSchedule s(c.samples, c.batch, c.groups, 1, true, c.drop_last);
    EXPECT_EQ(s.stepsPerEpoch(), c.steps);
    EXPECT_EQ(s.batchSizeOf(c.steps - 1), c.last_batch);
    for (index_t k = 0; k + 1 < c.steps; ++k)
      EXPECT_EQ(s.batchSizeOf(k), c.batch);
  }
}

TEST(EpochSchedule, RefusesBatchesThatCannotFeedEveryGroup) {
  try {
    EpochSchedule(10, 3, 4, 0);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("batch size 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4 sample groups"), std::string::npos) << e.what();
  }
  EXPECT_THROW(EpochSchedule(3, 5, 4, 0), InputError);  // 3 samples, fewer than 4 groups
  EXPECT_THROW(EpochSchedule(3, 5, 1, 0, true, true), InputError);  // drop_last leaves nothing
  EXPECT_THROW(EpochSchedule(0, 1, 1, 0), InputError);
  EXPECT_THROW(EpochSchedule(10, 4, 1, 0).batchSizeOf(3), InputError);
}

TEST(EpochSchedule, PermutationsAreDeterministicPerEpochAndIndependentOfGroups) {
  for (index_t samples : {1, 2, 17, 1000}) {
    const EpochSchedule a(samples, 1, 1, 42), b(samples, std::min<index_t>(samples, 8), 1, 42);
    const EpochSchedule c(samples, samples, int(std::min<index_t>(samples, 4)), 42);
    for (index_t epoch : {0, 1, 7}) {
      const auto p = a.permutation(epoch);
      std::vector<index_t> sorted = p;
      std::sort(sorted.begin(), sorted.end());
      std::vector<index_t> iota(static_cast<std::size_t>(samples));
      std::iota(iota.begin(), iota.end(), 0);
      EXPECT_EQ(sorted, iota);
      EXPECT_EQ(p, b.permutation(epoch));
      EXPECT_EQ(p, c.permutation(epoch));
      EXPECT_EQ(p, a.permutation(epoch));
    }
    if (samples >= 17) {
      EXPECT_NE(a.permutation(0), a.permutation(1));
      EXPECT_NE(a.permutation(0), EpochSchedule(samples, 1, 1, 43).permutation(0));
    }
  }
  const EpochSchedule ordered(5, 2, 1, 42, false);
  EXPECT_EQ(ordered.permutation(3), (std::vector<index_t>{0, 1, 2, 3, 4}));
}

TEST(EpochSchedule, ShuffleIsUniformEnough) {
  // Where sample 0 lands over many epochs: each of 8 positions about 1/8 of the time.
  const EpochSchedule s(8, 1, 1, 7);
  std::vector<int> hits(8, 0);
  const int epochs = 8000;
  for (int e = 0; e < epochs; ++e) {
    const auto p = s.permutation(e);
    ++hits[std::size_t(std::find(p.begin(), p.end(), 0) - p.begin())];
  }
  for (int h : hits)
    EXPECT_NEAR(double(h) / epochs, 0.125, 0.02);
}

TEST(EpochSchedule, BatchesTakeConsecutivePositionsAndGroupsSplitLikeTensorBlock) {
  const EpochSchedule s(11, 4, 3, 5);
  const auto p = s.permutation(2);
  EXPECT_EQ(s.batch(p, 0), std::vector<index_t>(p.begin(), p.begin() + 4));
  EXPECT_EQ(s.batch(p, 2), std::vector<index_t>(p.begin() + 8, p.begin() + 11));
  for (index_t b : {3, 4, 5}) {
    index_t next = 0;
    for (int g = 0; g < 3; ++g) {
      const auto [k0, k1] = s.groupRange(b, g);
      EXPECT_EQ(k0, next);
      EXPECT_EQ(k0, blockOffset(b, 3, g));
      EXPECT_EQ(k1 - k0, blockExtent(b, 3, g));
      next = k1;
    }
    EXPECT_EQ(next, b);
  }
}

TEST(CounterRng, PoissonAndNormalMoments) {
  for (double mean : {0.5, 4.0, 16.0, 300.0}) {
    CounterRng rng(3, std::uint64_t(mean * 10));
    double sum = 0, sum2 = 0;
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
      const double k = double(rng.poisson(mean));
      sum += k;
      sum2 += k * k;
    }
    const double m = sum / n, var = sum2 / n - m * m;
    EXPECT_NEAR(m, mean, 5 * std::sqrt(mean / n)) << "mean " << mean;
    EXPECT_NEAR(var / mean, 1.0, 0.05) << "mean " << mean;
  }
  CounterRng rng(9, 1);
  double sum = 0, sum2 = 0;
  for (int i = 0; i < 20000; ++i) {
    const double x = rng.normal();
    sum += x;
    sum2 += x * x;
  }
  EXPECT_NEAR(sum / 20000, 0.0, 0.03);
  EXPECT_NEAR(sum2 / 20000, 1.0, 0.03);
  EXPECT_EQ(CounterRng(1, 2).next(), CounterRng(1, 2).next());
  EXPECT_NE(CounterRng(1, 2).next(), CounterRng(1, 3).next());
}

}  // namespace
}  // namespace halo3d
