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
#include "halo3d/apps/unet3d/Training.hpp"

namespace {

using halo3d::apps::FlagSet;
using halo3d::apps::UNetOptions;

void addModelFlags(CLI::App* cmd, UNetOptions& o, FlagSet set) {
  cmd->add_option("--in-channels", o.in_channels, "input channels (checked against the data)");
  cmd->add_option("--base", o.base, "channels of the first level (doubling per level)")
      ->check(halo3d::apps::atLeast(1))
      ->capture_default_str();
  cmd->add_option("--depth", o.depth, "levels of the encoder (the volume must divide by 2^depth)")
      ->capture_default_str();
  cmd->add_option("--classes", o.classes, "segmentation classes, background included")
      ->capture_default_str();
  cmd->add_option("--bn-stats", o.bn_stats,
                  "BatchNorm statistics over the spatial group or all ranks")
      ->check(CLI::IsMember({"spatial", "global"}))
      ->capture_default_str();
  if (set == FlagSet::Predict) {
    cmd->add_option("--sample", o.sample, "sample id in --data (files in name order)")
        ->check(halo3d::apps::atLeast(0))
        ->capture_default_str();
    cmd->add_option("--out", o.out, "output HDF5 file: labels (D, H, W) uint8 [+ probabilities]")
        ->required();
    cmd->add_flag("--probabilities", o.probabilities,
                  "also write the softmax per class (C, D, H, W) float32");
    cmd->add_flag("--pad", o.pad,
                  "pad the volume with zeros to a multiple of 2^depth (cropped from the output)");
    cmd->add_option("--tile", o.tile, "sliding-window tile edge (0: the whole volume at once)")
        ->check(halo3d::apps::atLeast(0))
        ->capture_default_str();
    cmd->add_option("--overlap", o.overlap, "sliding-window overlap in [0, 1)")
        ->capture_default_str();
    cmd->add_option("--sigma-scale", o.sigma_scale, "Gaussian blending sigma over the tile edge")
        ->check(halo3d::apps::above(0))
        ->capture_default_str();
    return;
  }
  cmd->add_option("--input-size", o.input_size, "input edge D = H = W (checked against the data)");
  halo3d::apps::addChoice(cmd, "--loss", o.loss, halo3d::apps::kSegmentationLosses,
                          halo3d::apps::segmentationLossName,
                          "ce (voxel-wise cross-entropy) or dice (soft Dice)");
}

}  // namespace

int main(int argc, char** argv) {
  halo3d::apps::Session session(argc, argv);
  CLI::App app{"3D U-Net segmentation with hybrid data x spatial parallelism (halo3d)"};
  app.require_subcommand(1);
  UNetOptions options;
  CLI::App* train = app.add_subcommand("train", "train the model");
  CLI::App* eval = app.add_subcommand("eval", "loss and per-class Dice on a data set");
  CLI::App* predict =
      app.add_subcommand("predict", "segment one volume (any size) and write an HDF5 label volume");
  for (auto [cmd, set] : {std::pair{train, FlagSet::Train}, std::pair{eval, FlagSet::Evaluate},
                          std::pair{predict, FlagSet::Predict}}) {
    halo3d::apps::addTrainingFlags(cmd, options, set);
    addModelFlags(cmd, options, set);
  }
  halo3d::apps::addConfigFile(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Every rank parses the same arguments; only rank 0 speaks.
    if (session.rank() != 0) return e.get_exit_code();
    return app.exit(e);
  }
  return halo3d::apps::runGuarded("unet3d", [&] {
    if (train->parsed()) return halo3d::apps::trainUNet(options);
    if (eval->parsed()) return halo3d::apps::evalUNet(options);
    return halo3d::apps::predictUNet(options);
  });
}
