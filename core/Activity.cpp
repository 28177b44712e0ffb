#include "halo3d/core/Activity.hpp"

#include <Kokkos_Core.hpp>

#include <mutex>

namespace halo3d {

namespace {

std::mutex& activityMutex() {
  static std::mutex m;
  return m;
}

Activity& activityState() {
  static Activity a{0, "starting"};
  return a;
}

}  // namespace

void setActivity(std::string_view what) {
  std::lock_guard<std::mutex> lock(activityMutex());
  Activity& a = activityState();
  a.what.assign(what.data(), what.size());
  ++a.changes;
}

Activity currentActivity() {
  std::lock_guard<std::mutex> lock(activityMutex());
  return activityState();
}

ScopedActivity::ScopedActivity(std::string_view what) {
  {
    std::lock_guard<std::mutex> lock(activityMutex());
    Activity& a = activityState();
    _previous = a.what;
    a.what.assign(what.data(), what.size());
    ++a.changes;
  }
  Kokkos::Profiling::pushRegion(std::string(what));
}

ScopedActivity::~ScopedActivity() {
  Kokkos::Profiling::popRegion();
  setActivity(_previous);
}

}  // namespace halo3d
