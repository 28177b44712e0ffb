#pragma once
// What this process is doing now, as a short text ("forward", "features.3 halo wait"), and how many
// times that changed: the heartbeat that the training watchdog watches (apps/common/Watchdog.hpp).
// Any layer may mark its phases. A mark takes a mutex and copies the text, so mark phases (a
// layer's pass, a halo wait, an allreduce, an I/O wait), not loop iterations. Marks from several
// threads interleave: the text is the latest mark of any thread.

#include <cstdint>
#include <string>
#include <string_view>

namespace halo3d {

struct Activity {
  std::uint64_t changes = 0;  // number of marks so far
  std::string what;
};

// Sets the current activity.
void setActivity(std::string_view what);
// The current activity and the number of marks so far (safe from any thread).
Activity currentActivity();

// Sets `what` for the lifetime of the scope, then restores the activity before it (a mark too).
// The scope is also a Kokkos profiling region of that name, so that Kokkos Tools, Nsight Systems
// and perf attribute time to the same phases the watchdog names.
class ScopedActivity {
 public:
  explicit ScopedActivity(std::string_view what);
  ~ScopedActivity();
  ScopedActivity(const ScopedActivity&) = delete;
  ScopedActivity& operator=(const ScopedActivity&) = delete;

 private:
  std::string _previous;
};

}  // namespace halo3d
