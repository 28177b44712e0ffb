// bf16 against an independent rule: the nearest bf16 by distance (ties to the even mantissa),
// found by comparing the two bf16 values that bracket x in double arithmetic, over hand-picked
// boundaries and a million random floats; and on the default execution space, against the host.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "halo3d/core/BFloat16.hpp"

namespace halo3d {
namespace {

float floatOf(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
std::uint32_t bitsOf(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// The bf16 bits nearest to finite x, ties to even, by comparing distances: truncation gives the
// bracketing value toward zero, the next bit pattern the one away from zero (possibly infinity,
// which is nearer than nothing only when x is at least halfway to 2^128 = the next "power").
std::uint16_t nearestBf16(float x) {
  const std::uint32_t u = bitsOf(x);
  const std::uint16_t down = std::uint16_t(u >> 16);
  const std::uint16_t up = std::uint16_t(down + 1);
  const double lo = double(floatOf(std::uint32_t(down) << 16));
  const bool up_is_inf = (up & 0x7fffu) == 0x7f80u;
  // Past the largest finite bf16 the rounding boundary is where the next binade would begin.
  const double hi = up_is_inf ? std::copysign(std::ldexp(1.0, 128), double(x))
                              : double(floatOf(std::uint32_t(up) << 16));
  const double dl = std::abs(double(x) - lo), dh = std::abs(hi - double(x));
  if (dl < dh) return down;
  if (dh < dl) return up;
  return (down & 1u) ? up : down;
}

// NaN by its bits: the tests trap FE_INVALID, which a floating-point compare of a signalling NaN
// raises.
bool isNanBits(std::uint16_t b) {
  return (b & 0x7fffu) > 0x7f80u;
}

TEST(BFloat16, HandPickedValues) {
  EXPECT_EQ(bf16(1.0f).bits, 0x3f80);
  EXPECT_EQ(bf16(-2.0f).bits, 0xc000);
  EXPECT_EQ(bf16(0.0f).bits, 0x0000);
  EXPECT_EQ(bf16(-0.0f).bits, 0x8000);
  EXPECT_EQ(bf16(0).bits, 0x0000);
  // Ties: 1 + 2^-8 goes down to the even 1.0; 1 + 3 * 2^-8 up to the even 1 + 2^-6.
  EXPECT_EQ(bf16(floatOf(0x3f808000u)).bits, 0x3f80);
  EXPECT_EQ(bf16(floatOf(0x3f818000u)).bits, 0x3f82);
  // Just above a tie rounds up; just below rounds down.
  EXPECT_EQ(bf16(floatOf(0x3f808001u)).bits, 0x3f81);
  EXPECT_EQ(bf16(floatOf(0x3f807fffu)).bits, 0x3f80);
  // The largest float rounds to infinity, as in PyTorch; infinities and NaN stay.
  EXPECT_EQ(bf16(std::numeric_limits<float>::max()).bits, 0x7f80);
  EXPECT_EQ(bf16(std::numeric_limits<float>::infinity()).bits, 0x7f80);
  EXPECT_EQ(bf16(-std::numeric_limits<float>::infinity()).bits, 0xff80);
  EXPECT_TRUE(isNanBits(bf16(std::numeric_limits<float>::quiet_NaN()).bits));
  // A NaN whose payload lives only in the dropped bits must not become infinity.
  EXPECT_EQ(bf16(floatOf(0x7f800001u)).bits, 0x7fc0);
  EXPECT_EQ(bf16(floatOf(0xff800001u)).bits, 0xffc0);
  // Subnormals round like any other value.
  EXPECT_EQ(bf16(floatOf(0x00008000u)).bits, 0x0000);
  EXPECT_EQ(bf16(floatOf(0x00018000u)).bits, 0x0002);
  EXPECT_EQ(bf16(floatOf(0x00018001u)).bits, 0x0002);
  EXPECT_EQ(float(bf16(3.140625f)), 3.140625f);  // 8 significant bits: exact
}

TEST(BFloat16, EveryBf16SurvivesTheRoundTrip) {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const float f = float(bf16::fromBits(std::uint16_t(b)));
    const std::uint16_t back = bf16(f).bits;
    if (isNanBits(std::uint16_t(b))) {
      // NaN stays NaN, made quiet, with its sign and top payload bits.
      EXPECT_EQ(back, b | 0x0040u) << std::hex << b;
      continue;
    }
    ASSERT_EQ(back, b) << std::hex << b;
  }
}

TEST(BFloat16, RandomFloatsRoundToTheNearestEven) {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<std::uint32_t> bits;
  int wrong = 0;
  for (int i = 0; i < 1000000; ++i) {
    const std::uint32_t u = bits(rng);
    if ((u & 0x7f800000u) == 0x7f800000u) continue;  // infinities and NaN: checked above
    const float x = floatOf(u);
    if (bf16(x).bits != nearestBf16(x) && ++wrong <= 5)
      ADD_FAILURE() << std::hex << "x bits " << bitsOf(x) << ": got " << bf16(x).bits << ", want "
                    << nearestBf16(x);
  }
  EXPECT_EQ(wrong, 0);
}

TEST(BFloat16, ScatterSumAddsInFloatAndRoundsOnce) {
  bf16 a(1.0f);
  a += bf16(floatOf(0x3b800000u));  // 2^-8: half an ulp of 1, a tie that rounds to even 1.0
  EXPECT_EQ(a.bits, 0x3f80);
  a += bf16(0.0078125f);  // 2^-7: one ulp
  EXPECT_EQ(a.bits, 0x3f81);
}

// out(i) = bf16(in(i)) on the default execution space. A free function: CUDA's extended lambdas may
// not be defined in a test body (a private member function).
void convertOnDevice(const Kokkos::View<float*>& in, const Kokkos::View<bf16*>& out) {
  Kokkos::parallel_for(
      "bf16_convert", int(in.extent(0)), KOKKOS_LAMBDA(const int i) { out(i) = bf16(in(i)); });
}

// The conversion compiles and agrees on the default execution space (CUDA in a device build).
TEST(BFloat16, DeviceConversionMatchesHost) {
  const int n = 1 << 16;
  Kokkos::View<float*> in("in", n);
  Kokkos::View<bf16*> out("out", n);
  auto h_in = Kokkos::create_mirror_view(in);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1000.0f, 1000.0f);
  for (int i = 0; i < n; ++i)
    h_in(i) = u(rng);
  Kokkos::deep_copy(in, h_in);
  convertOnDevice(in, out);
  auto h_out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += h_out(i).bits != bf16(h_in(i)).bits;
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace halo3d
