#pragma once
// Deterministic weight initialisation, identical on every rank and every grid: values come from a
// counter-based generator keyed by (seed, parameter index, element index), never from rank-local state.
// The distributions are PyTorch's defaults: conv and linear weights and biases U(-1/sqrt(fan_in),
// 1/sqrt(fan_in)) with fan_in = shape[1] * kernel volume (the bias uses its weight's fan_in), BatchNorm weight
// 1, bias 0, running mean 0, running variance 1.

#include <cstdint>

#include "nn/Parameter.hpp"

namespace halo3d::nn {

void initializeParameters(ParameterStore& store, std::uint64_t seed);

}  // namespace halo3d::nn
