#pragma once
// `cosmoflow train` and `cosmoflow eval`: the hybrid-parallel training loop of the CosmoFlow app.

#include "halo3d/apps/cosmoflow/Options.hpp"

namespace halo3d::apps {

// Trains as the options say; returns the exit code. Throws halo3d errors (collectively) on bad
// input.
int trainCosmoFlow(const CosmoFlowOptions& options);
// Evaluates the model (from --init-weights or the newest checkpoint in --checkpoint-dir) on --data.
int evalCosmoFlow(const CosmoFlowOptions& options);

}  // namespace halo3d::apps
