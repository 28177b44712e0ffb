#pragma once
// Deterministic weight initialisation, identical on every rank and every grid: values come from a
// counter-based generator keyed by (seed, parameter index, element index), never from rank-local
// state. Conv and linear weights are He-uniform, U(-sqrt(6 / fan_in), sqrt(6 / fan_in)) with fan_in
// = shape[1] * kernel volume, biases zero; BatchNorm weight 1, bias 0, running mean 0, running
// variance 1. He rather than PyTorch's default (kaiming_uniform with a = sqrt(5), a gain of
// 1/sqrt(3) per layer): without BatchNorm the default shrinks the signal through CosmoFlow's seven
// convolutions until the output barely depends on the input, and training stalls for tens of steps.
// (Runs that must match PyTorch load its weights with --init-weights.)

#include <cstdint>

#include "halo3d/nn/Parameter.hpp"

namespace halo3d::nn {

void initializeParameters(ParameterStore& store, std::uint64_t seed);

}  // namespace halo3d::nn
