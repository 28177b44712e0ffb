// LayerTimers and ScopedTimer: the scope's time lands under the name it was given, even when that
// name was a temporary (Model::backward passes "allreduce"; a timer that kept a reference read
// freed memory).
#include <gtest/gtest.h>

#include <string>

#include "halo3d/nn/LayerTimers.hpp"

namespace halo3d::nn {
namespace {

TEST(ScopedTimer, KeepsATemporaryNameAliveUntilItRecords) {
  LayerTimers timers;
  {
    // Longer than any small-string buffer, so the temporary's characters live on the heap and are
    // freed at the end of this statement.
    ScopedTimer t(&timers, std::string("allreduce-of-the-gradient-buckets-") + "temporary",
                  Phase::Allreduce);
    const std::string reuse(64, 'x');  // likely to take the freed block
    EXPECT_EQ(reuse.size(), 64u);
  }
  ASSERT_EQ(timers.all().size(), 1u);
  EXPECT_EQ(timers.all().begin()->first, "allreduce-of-the-gradient-buckets-temporary");
  EXPECT_GE(timers.get("allreduce-of-the-gradient-buckets-temporary", Phase::Allreduce), 0.0);
  EXPECT_EQ(timers.total(Phase::Compute), 0.0);
}

TEST(ScopedTimer, AddsToThePhaseItNames) {
  LayerTimers timers;
  { ScopedTimer t(&timers, "conv", Phase::HaloWait); }
  { ScopedTimer t(&timers, "conv", Phase::HaloWait); }
  { ScopedTimer t(nullptr, "ignored", Phase::Compute); }
  EXPECT_EQ(timers.all().size(), 1u);
  EXPECT_EQ(timers.all().begin()->first, "conv");
  EXPECT_GE(timers.get("conv", Phase::HaloWait), 0.0);
  EXPECT_EQ(timers.get("conv", Phase::Compute), 0.0);
  timers.reset();
  EXPECT_TRUE(timers.all().empty());
}

// A communication phase is appended to the current activity (what the watchdog names on a stall)
// for the scope's lifetime; compute phases leave it alone.
TEST(ScopedTimer, NamesCommunicationPhasesInTheActivity) {
  const ScopedActivity pass("features.3 forward");
  {
    ScopedTimer t(nullptr, "features.3", Phase::HaloWait);
    EXPECT_EQ(currentActivity().what, "features.3 forward: halo wait");
  }
  EXPECT_EQ(currentActivity().what, "features.3 forward");
  {
    ScopedTimer t(nullptr, "features.3", Phase::Compute);
    EXPECT_EQ(currentActivity().what, "features.3 forward");
  }
  {
    ScopedTimer t(nullptr, "allreduce", Phase::Allreduce);
    EXPECT_EQ(currentActivity().what, "features.3 forward: allreduce");
  }
}

}  // namespace
}  // namespace halo3d::nn
