// The synthetic generators: deterministic per (seed, sample), parameters normalised to [-1, 1], and
// each CosmoFlow parameter leaving a strong, monotone imprint on a statistic of the field (so a
// network can learn it); segmentation volumes with the three classes at their intensities.
#include <gtest/gtest.h>

#include <cmath>

#include "halo3d/core/Error.hpp"
#include "halo3d/io/synthetic/CosmoFlowGenerator.hpp"
#include "halo3d/io/synthetic/SegmentationGenerator.hpp"
#include "halo3d/io/synthetic/SyntheticDataset.hpp"

namespace halo3d {
namespace {

constexpr index_t kN = 32;

// Summary statistics of log1p(counts) of channel `c`.
struct Stats {
  double variance, skewness, roughness, lag4;
};

Stats statsOf(const std::vector<float>& counts, index_t c = 0) {
  const std::size_t cells = std::size_t(kN * kN * kN);
  std::vector<double> x(cells);
  double mean = 0;
  for (std::size_t i = 0; i < cells; ++i)
    mean += x[i] = std::log1p(double(counts[std::size_t(c) * cells + i]));
  mean /= double(cells);
  double m2 = 0, m3 = 0, diff = 0, lag = 0;
  auto at = [&](index_t d, index_t h, index_t w) {
    return x[std::size_t(((d % kN) * kN + h) * kN + w)] - mean;
  };
  for (index_t d = 0; d < kN; ++d)
    for (index_t h = 0; h < kN; ++h)
      for (index_t w = 0; w < kN; ++w) {
        const double v = at(d, h, w);
        m2 += v * v;
        m3 += v * v * v;
        diff += (v - at(d + 1, h, w)) * (v - at(d + 1, h, w));
        lag += v * at(d + 4, h, w);
      }
  m2 /= double(cells);
  return {m2, m3 / double(cells) / std::pow(m2, 1.5), diff / double(cells) / m2,
          lag / double(cells) / m2};
}

std::vector<float> field(const CosmoFlowParams& p, index_t channels = 1) {
  CosmoFlowSpec spec;
  spec.size = kN;
  spec.channels = channels;
  return generateCosmoFlowCounts(p, spec, 11, 3);
}

TEST(CosmoFlowGenerator, DeterministicPerSeedAndSample) {
  CosmoFlowSpec spec;
  spec.size = 8;
  const CosmoFlowParams p;
  EXPECT_EQ(generateCosmoFlowCounts(p, spec, 1, 0), generateCosmoFlowCounts(p, spec, 1, 0));
  EXPECT_NE(generateCosmoFlowCounts(p, spec, 1, 0), generateCosmoFlowCounts(p, spec, 1, 1));
  EXPECT_NE(generateCosmoFlowCounts(p, spec, 1, 0), generateCosmoFlowCounts(p, spec, 2, 0));
  for (float v : generateCosmoFlowCounts(p, spec, 1, 0))
    ASSERT_TRUE(v >= 0 && v == std::floor(v));
  EXPECT_THROW(generateCosmoFlowCounts(p, CosmoFlowSpec{1, 4, 16.0, {}}, 1, 0), InputError);
}

TEST(CosmoFlowGenerator, ParametersNormaliseToUnitRange) {
  const CosmoFlowRanges r;
  for (index_t i = 0; i < 50; ++i) {
    const CosmoFlowParams p = drawCosmoFlowParams(5, i, r);
    const auto u = r.normalise(p);
    for (float x : u)
      EXPECT_TRUE(x >= -1.0f && x <= 1.0f) << x;
    const auto back = r.denormalise(u).asArray();
    for (int k = 0; k < 4; ++k)
      EXPECT_NEAR(back[std::size_t(k)], p.asArray()[std::size_t(k)], 1e-5);
  }
  EXPECT_EQ(r.normalise(r.lo), (std::array<float, 4>{-1, -1, -1, -1}));
  EXPECT_EQ(r.normalise(r.hi), (std::array<float, 4>{1, 1, 1, 1}));
}

// Each parameter, from the low to the high end of its range with the others in the middle and the
// same noise, moves its statistic the expected way by a wide margin.
TEST(CosmoFlowGenerator, EveryParameterLeavesAStrongImprint) {
  const CosmoFlowRanges r;
  const CosmoFlowParams mid = r.denormalise({0, 0, 0, 0});
  auto with = [&](int k, bool high) {
    CosmoFlowParams p = mid;
    double* fields[] = {&p.amplitude, &p.slope, &p.turnover, &p.nonlinearity};
    *fields[k] = (high ? r.hi : r.lo).asArray()[std::size_t(k)];
    return statsOf(field(p));
  };
  const Stats amp_lo = with(0, false), amp_hi = with(0, true);
  EXPECT_GT(amp_hi.variance, 2.0 * amp_lo.variance);
  const Stats slope_lo = with(1, false), slope_hi = with(1, true);
  EXPECT_GT(slope_lo.roughness, 1.3 * slope_hi.roughness);
  const Stats turn_lo = with(2, false), turn_hi = with(2, true);
  EXPECT_GT(turn_lo.lag4, turn_hi.lag4 + 0.2);
  const Stats nl_lo = with(3, false), nl_hi = with(3, true);
  EXPECT_GT(nl_hi.skewness, nl_lo.skewness + 0.3);
}

TEST(CosmoFlowGenerator, LaterChannelsGrowLess) {
  const std::vector<float> counts = field(CosmoFlowParams(), 4);
  double previous = 1e30;
  for (index_t c = 0; c < 4; ++c) {
    const double v = statsOf(counts, c).variance;
    EXPECT_LT(v, previous) << "channel " << c;
    previous = v;
  }
}

TEST(SegmentationGenerator, ThreeClassesAtTheirIntensities) {
  std::vector<double> sum(3, 0), n(3, 0);
  for (index_t i = 0; i < 4; ++i) {
    const SegmentationSample s = generateSegmentationSample({32, 2}, 9, i);
    ASSERT_EQ(s.volume.size(), 2u * 32 * 32 * 32);
    const SegmentationSample again = generateSegmentationSample({32, 2}, 9, i);
    EXPECT_EQ(s.volume, again.volume);
    EXPECT_EQ(s.labels, again.labels);
    for (std::size_t v = 0; v < s.labels.size(); ++v) {
      ASSERT_TRUE(s.labels[v] >= 0 && s.labels[v] <= 2);
      sum[std::size_t(s.labels[v])] += s.volume[v];
      ++n[std::size_t(s.labels[v])];
    }
  }
  for (int k = 0; k < 3; ++k)
    ASSERT_GT(n[std::size_t(k)], 0) << "class " << k << " never drawn";
  EXPECT_NEAR(sum[0] / n[0], 0.0, 5.0);
  EXPECT_NEAR(sum[1] / n[1], 60.0, 5.0);
  EXPECT_NEAR(sum[2] / n[2], 130.0, 5.0);
}

TEST(SyntheticDataset, CosmoFlowTargetsAreTheNormalisedParameters) {
  SyntheticDatasetSpec spec;
  spec.size = 4;
  spec.seed = 3;
  const HostSample s = syntheticSample(spec, 6);
  const auto expected = CosmoFlowRanges().normalise(drawCosmoFlowParams(3, 6, CosmoFlowRanges()));
  EXPECT_EQ(s.targets, std::vector<float>(expected.begin(), expected.end()));
  EXPECT_EQ(s.input.size(), std::size_t(4 * 4 * 4 * 4));
}

}  // namespace
}  // namespace halo3d
