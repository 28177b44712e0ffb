// halo3d-sweep: run a model on every valid N x D x H x W grid of the job's ranks, one after another
// in one launch, and record measured beside predicted step time and memory (docs/sweep.md).
//
//   mpirun -np 4 halo3d-sweep --model cosmoflow --data data/train --width 0.25 --batch 4
//       --steps 5 --warmup 1 --out sweep4 [--grids 1x4x1x1,2x2x1x1] [--machine FILE] [--rounds 3]
//       [--calibrate [--calibrate-each-round]] [--memory-limit 2G]
//   python3 scripts/plot_sweep.py sweep4/sweep.jsonl
//
// Exit codes: 0 every valid grid measured, 1 an error (no valid grid, bad flags, a grid failed).
#include <CLI/CLI.hpp>

#include "halo3d/apps/common/AppSupport.hpp"
#include "halo3d/apps/common/TrainingFlags.hpp"
#include "halo3d/apps/sweep/ModelFlags.hpp"
#include "halo3d/apps/sweep/Sweep.hpp"

int main(int argc, char** argv) {
  halo3d::apps::Session session(argc, argv);
  CLI::App app{
      "halo3d-sweep: one launch runs a model on every valid NxDxHxW grid of its ranks and records "
      "measured and predicted step time and memory per grid"};
  halo3d::apps::SweepOptions options;
  // The model's flags depend on the model, so --model is read first.
  options.model.add(&app, halo3d::apps::ModelFlags::find(argc, argv));
  app.add_option("--steps", options.steps, "measured steps per grid")
      ->check(halo3d::apps::atLeast(1))
      ->capture_default_str();
  app.add_option("--warmup", options.warmup, "steps per grid before the measured ones")
      ->check(halo3d::apps::atLeast(0))
      ->capture_default_str();
  app.add_option("--rounds", options.rounds,
                 "run the grids in turn this many times, each time --warmup then --steps steps; "
                 "a grid's figures pool its rounds (its step time: the mean of the rounds' "
                 "median steps)")
      ->check(halo3d::apps::atLeast(1))
      ->capture_default_str();
  app.add_option("--out", options.out, "output directory: sweep.jsonl, sweep.csv, sweep.md")
      ->required();
  app.add_option("--grids", options.grids,
                 "comma-separated NxDxHxW grids to run (default: every grid of the job's ranks)");
  app.add_flag("--calibrate", options.calibrate,
               "first time the layers on the blocks of every valid grid (rank 0; the others wait) "
               "and record the timings in the machine file (--machine)");
  app.add_flag("--calibrate-each-round", options.calibrate_each_round,
               "with --calibrate and --rounds: time the layers again before every later round "
               "(one pass each, the first calibration one pass too) and price the grids with each "
               "layer's mean over the rounds, so that the timings sample the same minutes as "
               "the steps they price")
      ->needs("--calibrate");
  return halo3d::apps::parseAndRun(app, session, argc, argv, "halo3d-sweep",
                                   [&] { return halo3d::apps::runSweep(options); });
}
