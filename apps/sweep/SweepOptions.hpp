#pragma once
// The flags of halo3d-sweep (docs/sweep.md): the model (--model and that application's flags, which
// ModelFlags.hpp adds and turns into the application's TrainingTask), and the sweep's own.

#include <string>

#include "halo3d/apps/sweep/ModelFlags.hpp"

namespace halo3d::apps {

struct SweepOptions {
  ModelFlags model;        // --model cosmoflow|unet3d and its flags
  int steps = 3;           // measured steps per grid
  int warmup = 1;          // steps per grid before the measured ones (not recorded)
  int rounds = 1;          // times the grids run in turn, each time warm-up then steps
  std::string out;         // output directory: sweep.jsonl, sweep.csv, sweep.md
  std::string grids;       // comma-separated NxDxHxW list; empty: every grid of P ranks
  bool calibrate = false;  // time the layers on every candidate grid's blocks first (rank 0)
  // With calibrate: time them again before every later round and price the grids with each
  // layer's mean over the rounds (one pass per round instead of the median of three at first).
  bool calibrate_each_round = false;
};

}  // namespace halo3d::apps
