// The activity board the watchdog reads: marks count, scopes restore, and another thread sees the
// latest mark.
#include <gtest/gtest.h>

#include <thread>

#include "halo3d/core/Activity.hpp"

namespace halo3d {
namespace {

TEST(Activity, MarksCountAndScopesRestore) {
  setActivity("outer");
  const Activity before = currentActivity();
  EXPECT_EQ(before.what, "outer");
  {
    ScopedActivity inner("features.3 forward");
    EXPECT_EQ(currentActivity().what, "features.3 forward");
    EXPECT_EQ(currentActivity().changes, before.changes + 1);
  }
  EXPECT_EQ(currentActivity().what, "outer");
  EXPECT_EQ(currentActivity().changes, before.changes + 2);
}

TEST(Activity, AnotherThreadSeesTheLatestMark) {
  setActivity("halo wait");
  Activity seen;
  std::thread reader([&] { seen = currentActivity(); });
  reader.join();
  EXPECT_EQ(seen.what, "halo wait");
}

}  // namespace
}  // namespace halo3d
