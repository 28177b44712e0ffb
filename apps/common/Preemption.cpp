#include "halo3d/apps/common/Preemption.hpp"

#include <csignal>
#include <cstdio>

namespace halo3d::apps {

namespace {

volatile std::sig_atomic_t g_received = 0;

extern "C" void recordSignal(int signal) {
  g_received = signal;
}

constexpr int kSignals[] = {SIGTERM, SIGUSR1};
struct sigaction g_previous[2];

}  // namespace

PreemptionSignals::PreemptionSignals() {
  g_received = 0;
  struct sigaction action {};
  action.sa_handler = recordSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // system calls go on; the step boundary looks at the flag
  for (int i = 0; i < 2; ++i)
    sigaction(kSignals[i], &action, &g_previous[i]);
}

PreemptionSignals::~PreemptionSignals() {
  for (int i = 0; i < 2; ++i)
    sigaction(kSignals[i], &g_previous[i], nullptr);
}

int PreemptionSignals::received() {
  return g_received;
}

const char* signalName(int signal) {
  switch (signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    default: {
      static thread_local char name[32];
      std::snprintf(name, sizeof name, "signal %d", signal);
      return name;
    }
  }
}

}  // namespace halo3d::apps
