#pragma once
// The speed probe: a fixed piece of work whose time says how fast this process computes now, so
// that layer timings calibrated at another moment (or in another process) can be priced at the
// machine's present speed.
//
// Why: on a shared or virtual machine the same code runs 20-30% faster or slower from one minute
// or process to the next (docs/scaling.md, "Validation on this machine"). A calibration that
// records its layers' times in a machine file also records the probe's time in the same process
// (LayerTiming::probe_s); a later run times the probe again (Machine::probe_now_s), and the step
// model scales each calibrated time by probe_now_s / probe_s. The probe runs alone on one rank
// while the others wait, as the calibration does, so the ratio holds the machine's speed and
// nothing the model prices elsewhere (time-sharing of cores by oversubscribed ranks).
//
// The work: a 3^3 convolution of 8 to 8 channels on a 32^3 block with its one-cell ghosts (forward,
// backward-data, backward-filter: compute-bound), then LeakyReLU forward and backward on a
// 16 x 64^3 tensor (64 MiB moved: memory-bound), a few milliseconds each, the median of
// `repetitions` runs after a warm-up.

namespace halo3d::nn {

struct SpeedProbe {
  double seconds = 0;    // the median run: the probe's time
  double compute_s = 0;  // of which the convolution (median of its own runs)
  double memory_s = 0;   // and the LeakyReLU
  int repetitions = 0;
};

// Runs the probe on this process with Kokkos' default execution space. repetitions >= 1.
SpeedProbe timeSpeedProbe(int repetitions = 15);

}  // namespace halo3d::nn
