// unet3d: train, evaluate and apply a 3D U-Net for voxel-wise segmentation with data x spatial
// parallelism.
//
//   mpirun -np 2 unet3d train --grid 1x2x1x1 --data data/train --val-data data/val --batch 2
//       --epochs 5 --checkpoint-dir ckpt
//   mpirun -np 2 unet3d eval --data data/val --checkpoint-dir ckpt
//   mpirun -np 4 unet3d predict --grid 1x2x2x1 --data data/big --checkpoint-dir ckpt --out seg.h5
//       [--tile 32]
//
// Flags may also come from a file: unet3d --config run.toml predict (apps/common/ConfigFile.hpp).
// Exit codes: 0 done, 1 error, 75 stopped by a preemption signal after a checkpoint, 124 aborted by
// the watchdog (docs/unet3d.md).
#include <CLI/CLI.hpp>

#include "halo3d/apps/common/AppSupport.hpp"
#include "halo3d/apps/common/ConfigFile.hpp"
#include "halo3d/apps/common/TrainingFlags.hpp"
#include "halo3d/apps/unet3d/Flags.hpp"
#include "halo3d/apps/unet3d/Training.hpp"

int main(int argc, char** argv) {
  halo3d::apps::Session session(argc, argv);
  CLI::App app{"3D U-Net segmentation with hybrid data x spatial parallelism (halo3d)"};
  app.require_subcommand(1);
  halo3d::apps::UNetOptions options;
  CLI::App* train = app.add_subcommand("train", "train the model");
  CLI::App* eval = app.add_subcommand("eval", "loss and per-class Dice on a data set");
  CLI::App* predict =
      app.add_subcommand("predict", "segment one volume (any size) and write an HDF5 label volume");
  using halo3d::apps::FlagSet;
  for (auto [cmd, set] : {std::pair{train, FlagSet::Train}, std::pair{eval, FlagSet::Evaluate},
                          std::pair{predict, FlagSet::Predict}}) {
    halo3d::apps::addTrainingFlags(cmd, options, set);
    halo3d::apps::addUNetFlags(cmd, options, set);
  }
  halo3d::apps::addConfigFile(app);
  return halo3d::apps::parseAndRun(app, session, argc, argv, "unet3d", [&] {
    if (train->parsed()) return halo3d::apps::trainUNet(options);
    if (eval->parsed()) return halo3d::apps::evalUNet(options);
    return halo3d::apps::predictUNet(options);
  });
}
