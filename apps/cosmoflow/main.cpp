// cosmoflow: train and evaluate the CosmoFlow network with data x spatial parallelism.
//
//   mpirun -np 4 cosmoflow train --grid 1x2x2x1 --data data/train --val-data data/val --batch 4
//       --epochs 5 --checkpoint-dir ckpt
//   mpirun -np 4 cosmoflow eval --grid 1x2x2x1 --data data/val --checkpoint-dir ckpt
//
// Flags may also come from a file: cosmoflow --config run.toml train (apps/common/ConfigFile.hpp).
// Exit codes: 0 done, 1 error, 75 stopped by a preemption signal after a checkpoint, 124 aborted by
// the watchdog (docs/cosmoflow.md).
#include <CLI/CLI.hpp>

#include "halo3d/apps/common/AppSupport.hpp"
#include "halo3d/apps/common/ConfigFile.hpp"
#include "halo3d/apps/common/TrainingFlags.hpp"
#include "halo3d/apps/cosmoflow/Flags.hpp"
#include "halo3d/apps/cosmoflow/Training.hpp"

int main(int argc, char** argv) {
  halo3d::apps::Session session(argc, argv);
  CLI::App app{"CosmoFlow with hybrid data x spatial parallelism (halo3d)"};
  app.require_subcommand(1);
  halo3d::apps::CosmoFlowOptions options;
  CLI::App* train = app.add_subcommand("train", "train the model");
  CLI::App* eval = app.add_subcommand("eval", "evaluate the model on a data set");
  halo3d::apps::addTrainingFlags(train, options, halo3d::apps::FlagSet::Train);
  halo3d::apps::addCosmoFlowFlags(train, options, true);
  halo3d::apps::addTrainingFlags(eval, options, halo3d::apps::FlagSet::Evaluate);
  halo3d::apps::addCosmoFlowFlags(eval, options, false);
  halo3d::apps::addConfigFile(app);
  return halo3d::apps::parseAndRun(app, session, argc, argv, "cosmoflow", [&] {
    return train->parsed() ? halo3d::apps::trainCosmoFlow(options)
                           : halo3d::apps::evalCosmoFlow(options);
  });
}
