// MemoryTracker: every Kokkos allocation is counted in its memory space, with the current and the
// peak bytes; and the counts agree with what the process holds (resident set) for memory it
// touched.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include "halo3d/core/MemoryTracker.hpp"

namespace halo3d {
namespace {

constexpr std::size_t kMiB = std::size_t(1) << 20;

TEST(MemoryTracker, CountsCurrentAndPeakBytesPerSpace) {
  MemoryTracker::install();
  ASSERT_TRUE(MemoryTracker::installed());
  const MemoryUsage before = MemoryTracker::usage("Host");
  MemoryTracker::resetPeak();
  {
    Kokkos::View<float*, Kokkos::HostSpace> a("a", 4 * kMiB / sizeof(float));
    const MemoryUsage with_a = MemoryTracker::usage("Host");
    EXPECT_GE(with_a.current - before.current, 4 * kMiB);
    EXPECT_LT(with_a.current - before.current, 4 * kMiB + 4096);  // allocation headers at most
    EXPECT_EQ(with_a.allocations, before.allocations + 1);
  }
  const MemoryUsage after_a = MemoryTracker::usage("Host");
  EXPECT_EQ(after_a.current, before.current);
  {
    Kokkos::View<double*, Kokkos::HostSpace> b("b", kMiB / sizeof(double));
    const MemoryUsage with_b = MemoryTracker::usage("Host");
    EXPECT_GE(with_b.current - before.current, kMiB);
    // The peak remembers the larger allocation that is gone.
    EXPECT_GE(with_b.peak - before.current, 4 * kMiB);
    EXPECT_GE(MemoryTracker::peakBytes(), with_b.peak);
  }
  MemoryTracker::resetPeak();
  EXPECT_EQ(MemoryTracker::usage("Host").peak, MemoryTracker::usage("Host").current);
}

// The tracked bytes are memory the process really holds: a zero-filled allocation shows in the peak
// resident set.
TEST(MemoryTracker, TrackedPeakIsWithinTheResidentSet) {
  MemoryTracker::install();
  Kokkos::View<char*, Kokkos::HostSpace> big("big", 64 * kMiB);
  Kokkos::fence();
  EXPECT_GE(peakResidentBytes(), MemoryTracker::usage("Host").current);
}

}  // namespace
}  // namespace halo3d
