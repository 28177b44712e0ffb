#pragma once
// No silent hang: a thread per rank that watches the process's activity (core/Activity.hpp). If
// the activity does not change for `timeout` seconds (a rank stuck in a collective whose peer died
// or deadlocked, a hung file system, a kernel that never ends), it prints which rank, at which step
// and in which phase, and aborts the whole job (MPI_Abort with kExitStalled), rather than holding
// the allocation until the wall-clock limit.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace halo3d::apps {

// The exit code of a job the watchdog aborted (as timeout(1)).
inline constexpr int kExitStalled = 124;

class Watchdog {
 public:
  // Starts watching unless `timeout_seconds` is 0. `program` names the binary in the message.
  Watchdog(std::string program, int rank, double timeout_seconds);
  // Stops watching.
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // The training step for the message (-1: setting up).
  void setStep(long step) { _step = step; }

 private:
  void watch();

  std::string _program;
  int _rank;
  double _timeout;
  std::atomic<long> _step{-1};
  std::mutex _mutex;
  std::condition_variable _wake;
  bool _stop = false;
  std::thread _thread;
};

}  // namespace halo3d::apps
