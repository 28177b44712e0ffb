#pragma once
// `unet3d train`, `unet3d eval` and `unet3d predict`.

#include "halo3d/apps/unet3d/Options.hpp"

namespace halo3d::apps {

// Trains as the options say (validation: loss and per-class Dice after every epoch); returns the
// exit code. Throws halo3d errors (collectively) on bad input.
int trainUNet(const UNetOptions& options);
// Loss and per-class Dice of the model (from --init-weights or the newest checkpoint in
// --checkpoint-dir) on every sample of --data.
int evalUNet(const UNetOptions& options);
// Segments sample --sample of --data, whole or by sliding window, and writes --out
// (apps/unet3d/Predict.cpp).
int predictUNet(const UNetOptions& options);

}  // namespace halo3d::apps
