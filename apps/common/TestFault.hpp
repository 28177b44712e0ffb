#pragma once
// A fault injected into a training step, for the tests of the watchdog and of preemption only. The
// environment variable HALO3D_TEST_FAULT selects it:
//
//   sleep:rank=R:step=S:seconds=T   rank R sleeps T s inside step S (cut short by a preemption
//                                   signal, so that a test can interrupt a parked run)
//   signal:rank=R:step=S:signal=USR1|TERM   rank R raises the signal inside step S
//
// Unset: nothing happens. A malformed value is an InputError naming it.

#include <string>

namespace halo3d::apps {

class TestFault {
 public:
  // The fault of HALO3D_TEST_FAULT (none if unset).
  static TestFault fromEnvironment();
  // Parses `spec` (the syntax above; empty: none).
  static TestFault parse(const std::string& spec);

  // Injects the fault if this is its rank and step.
  void at(int rank, long step) const;

 private:
  enum class Kind { None, Sleep, Signal } _kind = Kind::None;
  int _rank = -1;
  long _step = -1;
  double _seconds = 0;
  int _signal = 0;
};

}  // namespace halo3d::apps
