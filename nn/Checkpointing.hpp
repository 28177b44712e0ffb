#pragma once
// A training run's state as a partition-independent checkpoint (io/CheckpointState.hpp): the
// model's state_dict, the optimizer's per-parameter tensors and step count, the caller's counters
// (step, epoch, RNG streams) and the run configuration.

#include <map>
#include <string>

#include "halo3d/io/CheckpointState.hpp"
#include "halo3d/nn/Optimizer.hpp"
#include "halo3d/nn/Parameter.hpp"

namespace halo3d::nn {

CheckpointState captureState(const ParameterStore& store, Optimizer& optimizer,
                             const std::map<std::string, std::int64_t>& counters,
                             const std::string& config_json);

// Restores parameters, buffers and the optimizer from `state` (InputError naming `source` and every
// missing or misshapen key if the checkpoint does not fit the model). Returns the counters.
std::map<std::string, std::int64_t> restoreState(const CheckpointState& state,
                                                 ParameterStore& store, Optimizer& optimizer,
                                                 const std::string& source);

}  // namespace halo3d::nn
