// LayerTimers and ScopedTimer: the scope's time lands under the name it was given, even when that
// name was a temporary (Model::backward passes "allreduce"; a timer that kept a reference read
// freed memory).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

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

// Timers are exclusive: BatchNorm3d's statistics allreduce runs inside its compute timer, and its
// wait counted under both phases made a step's phases add up to more than the step. `whole` times
// the same scope on timers of its own, opened first and closed last.
TEST(ScopedTimer, TakesAnInnerTimerOutOfTheEnclosingOne) {
  LayerTimers timers, whole;
  {
    ScopedTimer all(&whole, "bn", Phase::Compute);
    ScopedTimer t(&timers, "bn", Phase::Compute);
    {
      ScopedTimer a(&timers, "bn", Phase::Allreduce);
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    {
      ScopedTimer a(&timers, "bn", Phase::Allreduce);
      ScopedTimer inner(&timers, "bn", Phase::HaloWait);  // two levels down
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
  }
  const double compute = timers.get("bn", Phase::Compute);
  const double allreduce = timers.get("bn", Phase::Allreduce);
  const double halo = timers.get("bn", Phase::HaloWait);
  EXPECT_GE(halo, 0.030);
  EXPECT_GE(allreduce, 0.030);  // the first sleep; the second is the halo wait's
  EXPECT_GE(compute, 0.0);
  EXPECT_LE(compute + allreduce + halo, whole.get("bn", Phase::Compute));
  EXPECT_LT(compute, allreduce);                  // no sleep of its own
  EXPECT_EQ(whole.total(Phase::Allreduce), 0.0);  // other timers' scopes do not nest
}

// After an inner timer closes, a new one opened in the same enclosing scope nests in it too, and
// a timer closed at the outermost level leaves nothing open: the next one stands alone.
TEST(ScopedTimer, NestsAgainAfterTheInnerOneCloses) {
  LayerTimers timers, whole;
  {
    ScopedTimer all(&whole, "conv", Phase::Compute);
    ScopedTimer t(&timers, "conv", Phase::Compute);
    { ScopedTimer h(&timers, "conv", Phase::HaloWait); }
    {
      ScopedTimer h(&timers, "conv", Phase::HaloWait);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  EXPECT_LE(timers.total(Phase::Compute) + timers.total(Phase::HaloWait),
            whole.get("conv", Phase::Compute));
  EXPECT_LT(timers.get("conv", Phase::Compute), timers.get("conv", Phase::HaloWait));
  const double conv = timers.get("conv", Phase::Compute);
  const double halo = timers.get("conv", Phase::HaloWait);
  {
    ScopedTimer alone(&timers, "relu", Phase::Compute);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(timers.get("relu", Phase::Compute), 0.020);
  EXPECT_EQ(timers.get("conv", Phase::Compute), conv);  // nothing taken out of a closed timer
  EXPECT_EQ(timers.get("conv", Phase::HaloWait), halo);
}

}  // namespace
}  // namespace halo3d::nn
