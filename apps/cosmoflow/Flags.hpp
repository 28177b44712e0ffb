#pragma once
// The model flags of CosmoFlow (docs/cosmoflow.md), shared by `cosmoflow train|eval` and
// `halo3d-sweep --model cosmoflow`.

#include <CLI/CLI.hpp>

#include "halo3d/apps/cosmoflow/Options.hpp"

namespace halo3d::apps {

// --input-size --width --batchnorm --bn-stats, and --dropout when `training`.
void addCosmoFlowFlags(CLI::App* cmd, CosmoFlowOptions& o, bool training);

}  // namespace halo3d::apps
