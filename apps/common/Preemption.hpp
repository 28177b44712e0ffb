#pragma once
// Preemption as Slurm does it: SIGTERM (scancel, the time limit) or SIGUSR1 (`#SBATCH
// --signal=B:USR1@120`, forwarded by the job script) asks the run to stop. The handler only records
// the signal; the training driver agrees on it over all ranks at the next step boundary (so a
// signal that reaches one rank is enough), writes a checkpoint and exits with kExitPreempted.

namespace halo3d::apps {

// The exit code of a run that stopped on a signal after writing its checkpoint: EX_TEMPFAIL of
// sysexits.h ("temporary failure; the user is invited to retry"). A job script requeues on it
// (examples/slurm/requeue.sbatch); any other non-zero code is a real failure.
inline constexpr int kExitPreempted = 75;

// Installs the handlers of SIGTERM and SIGUSR1 for its lifetime and restores the previous ones.
class PreemptionSignals {
 public:
  PreemptionSignals();
  ~PreemptionSignals();
  PreemptionSignals(const PreemptionSignals&) = delete;
  PreemptionSignals& operator=(const PreemptionSignals&) = delete;

  // The signal received by this process (the last one), or 0.
  static int received();
};

// "SIGTERM", "SIGUSR1", or "signal N".
const char* signalName(int signal);

}  // namespace halo3d::apps
