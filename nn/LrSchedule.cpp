#include "halo3d/nn/LrSchedule.hpp"

#include <algorithm>
#include <cmath>

#include "halo3d/core/EnumNames.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d::nn {

namespace {
constexpr EnumName<LrDecay> kLrDecayNames[] = {
    {LrDecay::None, "none"}, {LrDecay::Step, "step"}, {LrDecay::Poly, "poly"}};
}  // namespace

const char* lrDecayName(LrDecay decay) {
  return nameOf(kLrDecayNames, decay);
}

LrDecay parseLrDecay(const std::string& name) {
  return parseName(kLrDecayNames, name, "lr decay");
}

void LrSchedule::validate() const {
  require<InputError>(base_lr > 0, "learning rate must be positive, got ", base_lr);
  require<InputError>(warmup_steps >= 0, "warm-up steps must be >= 0, got ", warmup_steps);
  if (decay == LrDecay::Step)
    require<InputError>(step_every > 0, "lr step interval must be positive, got ", step_every);
  if (decay == LrDecay::Poly)
    require<InputError>(total_steps > warmup_steps, "poly decay needs total steps (", total_steps,
                        ") beyond the warm-up (", warmup_steps, ")");
}

double LrSchedule::at(long step) const {
  if (step < warmup_steps) {
    const double f = double(step + 1) / double(warmup_steps);
    return base_lr * (warmup_start + (1.0 - warmup_start) * f);
  }
  const long t = step - warmup_steps;
  if (decay == LrDecay::Step) return base_lr * std::pow(step_gamma, double(t / step_every));
  if (decay == LrDecay::Poly) {
    const double span = double(total_steps - warmup_steps);
    const double f = std::clamp(1.0 - double(t) / span, 0.0, 1.0);
    return end_lr + (base_lr - end_lr) * std::pow(f, poly_power);
  }
  return base_lr;
}

}  // namespace halo3d::nn
