#pragma once
// The model (and prediction) flags of the 3D U-Net (docs/unet3d.md), shared by `unet3d
// train|eval|predict` and `halo3d-sweep --model unet3d`.

#include <CLI/CLI.hpp>

#include "halo3d/apps/common/TrainingFlags.hpp"
#include "halo3d/apps/unet3d/Options.hpp"

namespace halo3d::apps {

// --in-channels --base --depth --classes --bn-stats; for Predict the sliding-window and output
// flags, for the others --input-size and --loss.
void addUNetFlags(CLI::App* cmd, UNetOptions& o, FlagSet set);

}  // namespace halo3d::apps
