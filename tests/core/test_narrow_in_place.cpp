// core/NarrowInPlace.hpp: the bf16 image of an array written over its own memory, and back.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <random>
#include <vector>

#include "halo3d/core/NarrowInPlace.hpp"

namespace halo3d {
namespace {

template <class Wide>
void roundTrip(std::size_t n) {
  SCOPED_TRACE(::testing::Message() << "n = " << n << ", " << sizeof(Wide) << "-byte elements");
  std::mt19937 rng(unsigned(n) + 7);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<Wide> original(n);
  for (Wide& x : original)
    x = Wide(u(rng)) * Wide(1.0001);  // not bf16 values: rounding must happen
  Kokkos::View<Wide*, Kokkos::HostSpace> a("a", n);
  for (std::size_t i = 0; i < n; ++i)
    a(i) = original[i];
  const Kokkos::DefaultHostExecutionSpace space;
  narrowToBf16InPlace(space, a.data(), n);
  space.fence();
  const auto* narrow = reinterpret_cast<const bf16*>(a.data());
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(narrow[i].bits, bf16(float(original[i])).bits) << "element " << i;
  widenFromBf16InPlace(space, a.data(), n);
  space.fence();
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(a(i), Wide(roundToBf16(float(original[i])))) << "element " << i;
}

TEST(NarrowInPlace, RoundsEveryElementAndWidensBackExactly) {
  for (std::size_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 1000, 1024, 4097}) {
    roundTrip<float>(n);
    roundTrip<double>(n);
  }
}

TEST(NarrowInPlace, RangesCoverTheArrayOnceInDoublingSteps) {
  const auto r = impl::doublingRanges(9);
  const std::vector<std::pair<std::size_t, std::size_t>> expect = {
      {0, 1}, {1, 2}, {2, 4}, {4, 8}, {8, 9}};
  EXPECT_EQ(r, expect);
  EXPECT_TRUE(impl::doublingRanges(0).empty());
}

}  // namespace
}  // namespace halo3d
