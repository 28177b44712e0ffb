// unet3d: train, evaluate and apply a 3D U-Net for voxel-wise segmentation with data x spatial
// parallelism.
//
//   mpirun -np 2 unet3d train   --grid 1x2x1x1 --data data/train --val-data data/val --batch 2
//   --epochs 5 mpirun -np 2 unet3d eval    --data data/val --checkpoint-dir ckpt mpirun -np 4
//   unet3d predict --grid 1x2x2x1 --data data/big --checkpoint-dir ckpt --out seg.h5 [--tile 32]
//
// Every flag may also come from a config file: --config run.toml (CLI11's TOML/INI format, flag =
// value).
#include <CLI/CLI.hpp>

#include "apps/common/AppSupport.hpp"
#include "apps/unet3d/Training.hpp"

namespace {

using halo3d::apps::UNetOptions;

enum class Command { Train, Eval, Predict };

void addOptions(CLI::App* cmd, UNetOptions& o, Command command) {
  cmd->add_option("--grid", o.grid,
                  "process grid NxDxHxW (default 1xPx1x1: split D over all P ranks)");
  cmd->add_option("--data", o.data, "HDF5 sample file or directory of them (U-Net layout)")
      ->required();
  cmd->add_option("--in-channels", o.in_channels, "input channels (checked against the data)");
  cmd->add_option("--base", o.base, "channels of the first level (doubling per level)")
      ->capture_default_str();
  cmd->add_option("--depth", o.depth, "levels of the encoder (the volume must divide by 2^depth)")
      ->capture_default_str();
  cmd->add_option("--classes", o.classes, "segmentation classes, background included")
      ->capture_default_str();
  cmd->add_option("--bn-stats", o.bn_stats,
                  "BatchNorm statistics over the spatial group or all ranks")
      ->check(CLI::IsMember({"spatial", "global"}))
      ->capture_default_str();
  cmd->add_option("--init-weights", o.init_weights, "PyTorch-named weights: FILE.h5[:/group]");
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir,
                  "where checkpoints are written and resumed from");
  cmd->add_option("--metrics", o.metrics, "JSON-lines metrics file (appended)");
  cmd->add_option("--mpiio", o.mpiio, "MPI-IO mode of the reads")
      ->check(CLI::IsMember({"independent", "collective"}))
      ->capture_default_str();
  cmd->add_option(
         "--transform", o.transform,
         "input transform: none, log1p, constant:F, meanstd:M1,..:S1,.. or log1p+<scaling>")
      ->capture_default_str();
  if (command == Command::Predict) {
    cmd->add_option("--sample", o.sample, "sample id in --data (files in name order)")
        ->capture_default_str();
    cmd->add_option("--out", o.out, "output HDF5 file: labels (D, H, W) uint8 [+ probabilities]")
        ->required();
    cmd->add_flag("--probabilities", o.probabilities,
                  "also write the softmax per class (C, D, H, W) float32");
    cmd->add_flag("--pad", o.pad,
                  "pad the volume with zeros to a multiple of 2^depth (cropped from the output)");
    cmd->add_option("--tile", o.tile, "sliding-window tile edge (0: the whole volume at once)")
        ->capture_default_str();
    cmd->add_option("--overlap", o.overlap, "sliding-window overlap in [0, 1)")
        ->capture_default_str();
    cmd->add_option("--sigma-scale", o.sigma_scale, "Gaussian blending sigma over the tile edge")
        ->capture_default_str();
    return;
  }
  cmd->add_option("--input-size", o.input_size, "input edge D = H = W (checked against the data)");
  cmd->add_option("--loss", o.loss, "ce (voxel-wise cross-entropy) or dice (soft Dice)")
      ->check(CLI::IsMember({"ce", "dice"}))
      ->capture_default_str();
  cmd->add_option("--batch", o.batch, "global mini-batch size")->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of shuffling and initialisation")->capture_default_str();
  cmd->add_flag("--no-overlap", o.no_overlap,
                "finish each halo exchange before computing (for comparison)");
  cmd->add_flag("--no-prefetch", o.no_prefetch, "read each batch when it is needed");
  cmd->add_option("--data-store-gib", o.data_store_gib,
                  "in-memory data store per rank (GiB; 0: off)");
  if (command != Command::Train) return;
  cmd->add_option("--val-data", o.val_data,
                  "validation sample file or directory (loss and Dice per epoch)");
  cmd->add_option("--epochs", o.epochs, "epochs to train")->capture_default_str();
  cmd->add_option("--steps", o.steps,
                  "total optimizer steps, counted across resumes (overrides --epochs)");
  cmd->add_option("--optimizer", o.optimizer, "adam or sgd")
      ->check(CLI::IsMember({"adam", "sgd"}))
      ->capture_default_str();
  cmd->add_option("--lr", o.lr, "learning rate")->capture_default_str();
  cmd->add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str();
  cmd->add_option("--warmup-steps", o.warmup_steps, "linear learning-rate warm-up steps")
      ->capture_default_str();
  cmd->add_option("--lr-decay", o.lr_decay, "none, step or poly")
      ->check(CLI::IsMember({"none", "step", "poly"}))
      ->capture_default_str();
  cmd->add_option("--lr-step-every", o.lr_step_every, "step decay interval (steps)")
      ->capture_default_str();
  cmd->add_option("--lr-gamma", o.lr_gamma, "step decay factor")->capture_default_str();
  cmd->add_flag("--no-shuffle", o.no_shuffle, "keep the file order");
  cmd->add_option("--checkpoint-every", o.checkpoint_every,
                  "checkpoint every N steps (0: each epoch end)");
  cmd->add_option("--keep-checkpoints", o.keep_checkpoints, "checkpoints kept")
      ->capture_default_str();
  cmd->add_flag("--resume", o.resume,
                "continue from the newest checkpoint in --checkpoint-dir (any grid)");
}

}  // namespace

int main(int argc, char** argv) {
  halo3d::apps::Session session(argc, argv);
  CLI::App app{"3D U-Net segmentation with hybrid data x spatial parallelism (halo3d)"};
  app.set_config("--config", "", "read flags from a TOML/INI file");
  app.require_subcommand(1);
  UNetOptions options;
  CLI::App* train = app.add_subcommand("train", "train the model");
  CLI::App* eval = app.add_subcommand("eval", "loss and per-class Dice on a data set");
  CLI::App* predict =
      app.add_subcommand("predict", "segment one volume (any size) and write an HDF5 label volume");
  addOptions(train, options, Command::Train);
  addOptions(eval, options, Command::Eval);
  addOptions(predict, options, Command::Predict);
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
