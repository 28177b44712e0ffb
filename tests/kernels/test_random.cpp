// Philox-4x32-10 against Random123's known-answer vectors, and the properties dropout relies on:
// streams keyed by (seed, step, layer) are independent, draws are the same on host and device, and
// uniform.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <set>

#include "halo3d/kernels/Random.hpp"

namespace halo3d::kernels {
namespace {

struct KnownAnswer {
  Philox4x32::Counter counter;
  Philox4x32::Key key;
  std::uint32_t expected[4];
};

// Random123 kat_vectors, "philox4x32 10" lines: counter, key, output.
TEST(Philox4x32, MatchesRandom123KnownAnswers) {
  const KnownAnswer cases[] = {
      {{{0, 0, 0, 0}}, {{0, 0}}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       {{0xffffffff, 0xffffffff}},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       {{0xa4093822, 0x299f31d0}},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}};
  for (const KnownAnswer& k : cases) {
    const Philox4x32::Counter out = Philox4x32::generate(k.counter, k.key);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(out.v[i], k.expected[i]) << "word " << i;
  }
}

TEST(RandomBits, FourConsecutiveIndicesShareOneBlock) {
  const RandomStream s{0x243f6a8885a308d3ull, 7, 3};
  const Philox4x32::Counter out = Philox4x32::generate(
      {{5, 0, s.step, s.layer}}, {{std::uint32_t(s.seed), std::uint32_t(s.seed >> 32)}});
  for (std::uint32_t k = 0; k < 4; ++k)
    EXPECT_EQ(randomBits(s, 20 + k), out.v[k]);
}

TEST(RandomBits, EveryKeyFieldChangesTheStream) {
  const RandomStream base{42, 1, 2};
  const RandomStream variants[] = {
      {43, 1, 2}, {42, 2, 2}, {42, 1, 3}, {42ull | (1ull << 40), 1, 2}};
  for (const RandomStream& v : variants) {
    int same = 0;
    for (std::uint64_t i = 0; i < 256; ++i)
      same += randomBits(base, i) == randomBits(v, i);
    EXPECT_LE(same, 1) << "seed " << v.seed << " step " << v.step << " layer " << v.layer;
  }
  // Indices beyond 32 bits reach distinct blocks.
  EXPECT_NE(randomBits(base, 1ull << 34), randomBits(base, 0));
  EXPECT_NE(randomBits(base, (1ull << 34) + 1), randomBits(base, 1));
}

// The draws of randomBits(s, i * 977) on the default execution space. A free function: CUDA's
// extended lambdas may not be defined in a test body (a private member function).
Kokkos::View<std::uint32_t*> drawOnDevice(const RandomStream& s, std::size_t n) {
  Kokkos::View<std::uint32_t*> bits("bits", n);
  Kokkos::parallel_for(
      "draw", Kokkos::RangePolicy<>(0, n),
      KOKKOS_LAMBDA(std::size_t i) { bits(i) = randomBits(s, i * 977); });
  return bits;
}

TEST(RandomBits, DeviceDrawsEqualHostDraws) {
  const RandomStream s{2024, 5, 9};
  const std::size_t n = 4099;
  const auto bits = drawOnDevice(s, n);
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bits);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(host(i), randomBits(s, i * 977)) << i;
}

// Mean and variance of 2^18 draws within 6 standard errors of 1/2 and 1/12, and no repeated 32-bit
// word: a broken round function fails these by orders of magnitude.
TEST(Uniform01, MomentsAndDistinctness) {
  const RandomStream s{1, 0, 0};
  const int n = 1 << 18;
  double sum = 0.0, sum_sq = 0.0;
  std::set<std::uint32_t> seen;
  for (int i = 0; i < n; ++i) {
    const std::uint32_t b = randomBits(s, std::uint64_t(i));
    const double u = uniform01(b);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum_sq += u * u;
    if (i < 4096) {
      EXPECT_TRUE(seen.insert(b).second) << "repeated word at " << i;
    }
  }
  const double mean = sum / n, var = sum_sq / n - mean * mean;
  EXPECT_NEAR(mean, 0.5, 6.0 * std::sqrt(1.0 / 12.0 / n));
  EXPECT_NEAR(var, 1.0 / 12.0, 6.0 * std::sqrt(1.0 / 180.0 / n));
  EXPECT_EQ(uniform01(0), 0.0);
  EXPECT_LT(uniform01(0xffffffffu), 1.0);
}

}  // namespace
}  // namespace halo3d::kernels
