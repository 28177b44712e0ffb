#include "halo3d/apps/common/Watchdog.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "halo3d/core/Activity.hpp"

namespace halo3d::apps {

Watchdog::Watchdog(std::string program, int rank, double timeout_seconds)
    : _program(std::move(program)), _rank(rank), _timeout(timeout_seconds) {
  if (_timeout > 0) _thread = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  if (!_thread.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(_mutex);
    _stop = true;
  }
  _wake.notify_all();
  _thread.join();
}

void Watchdog::watch() {
  using Clock = std::chrono::steady_clock;
  const auto poll = std::chrono::duration<double>(std::clamp(_timeout / 10, 0.05, 1.0));
  Activity last = currentActivity();
  auto since = Clock::now();
  std::unique_lock<std::mutex> lock(_mutex);
  while (!_wake.wait_for(lock, poll, [this] { return _stop; })) {
    const Activity now = currentActivity();
    if (now.changes != last.changes) {
      last = now;
      since = Clock::now();
      continue;
    }
    const double idle = std::chrono::duration<double>(Clock::now() - since).count();
    if (idle < _timeout) continue;
    const long step = _step;
    const std::string when = step < 0 ? std::string("setup") : "step " + std::to_string(step);
    std::fprintf(stderr,
                 "%s: error: rank %d made no progress for %.0f s (--stall-timeout %g) at %s, in "
                 "phase '%s'; aborting the job\n",
                 _program.c_str(), _rank, idle, _timeout, when.c_str(), now.what.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, kExitStalled);
  }
}

}  // namespace halo3d::apps
