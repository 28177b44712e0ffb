#pragma once
// Learning-rate schedules: an optional linear warm-up, then constant, step decay or polynomial
// decay.

#include <string>

namespace halo3d::nn {

enum class LrDecay { None, Step, Poly };
inline constexpr LrDecay kLrDecays[] = {LrDecay::None, LrDecay::Step, LrDecay::Poly};

// "none", "step", "poly": the names of the --lr-decay flag.
const char* lrDecayName(LrDecay decay);
// The decay called `name`; throws InputError naming it and the known names.
LrDecay parseLrDecay(const std::string& name);

struct LrSchedule {
  double base_lr = 1e-3;
  long warmup_steps = 0;  // linear ramp from warmup_start * base_lr to base_lr
  double warmup_start = 0.1;
  LrDecay decay = LrDecay::None;
  long step_every = 1000;  // step: multiply by step_gamma every step_every steps after warm-up
  double step_gamma = 0.1;
  long total_steps = 0;  // poly: decay to end_lr at total_steps with exponent poly_power
  double poly_power = 1.0;
  double end_lr = 0.0;

  // Throws InputError naming the bad field.
  void validate() const;
  // The learning rate of optimizer step `step` (0-based).
  double at(long step) const;
};

}  // namespace halo3d::nn
