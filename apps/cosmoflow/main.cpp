// cosmoflow: train and evaluate the CosmoFlow network with data x spatial parallelism.
//
//   mpirun -np 4 cosmoflow train --grid 1x2x2x1 --data data/train --val-data data/val --batch 4
//   --epochs 5 mpirun -np 4 cosmoflow eval  --grid 1x2x2x1 --data data/val --checkpoint-dir ckpt
//
// Every flag may also come from a config file: --config run.toml (CLI11's TOML/INI format, flag =
// value).
#include <CLI/CLI.hpp>

#include "apps/common/AppSupport.hpp"
#include "apps/cosmoflow/Training.hpp"

namespace {

using halo3d::apps::CosmoFlowOptions;

void addOptions(CLI::App* cmd, CosmoFlowOptions& o, bool training) {
  cmd->add_option("--grid", o.grid,
                  "process grid NxDxHxW (default 1xPx1x1: split D over all P ranks)");
  cmd->add_option("--data", o.data, "HDF5 sample file or directory of them")->required();
  cmd->add_option("--input-size", o.input_size, "input edge D = H = W (checked against the data)");
  cmd->add_option("--width", o.width, "channel multiplier of the model")->capture_default_str();
  cmd->add_flag("--batchnorm", o.batchnorm, "BatchNorm after every convolution");
  cmd->add_option("--bn-stats", o.bn_stats,
                  "BatchNorm statistics over the spatial group or all ranks")
      ->check(CLI::IsMember({"spatial", "global"}))
      ->capture_default_str();
  cmd->add_option("--batch", o.batch, "global mini-batch size")->capture_default_str();
  cmd->add_option("--init-weights", o.init_weights, "PyTorch-named weights: FILE.h5[:/group]");
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir,
                  "where checkpoints are written and resumed from");
  cmd->add_option("--metrics", o.metrics, "JSON-lines metrics file (appended)");
  cmd->add_option("--seed", o.seed, "seed of shuffling, initialisation and dropout")
      ->capture_default_str();
  cmd->add_flag("--no-overlap", o.no_overlap,
                "finish each halo exchange before computing (for comparison)");
  cmd->add_flag("--no-prefetch", o.no_prefetch, "read each batch when it is needed");
  cmd->add_option("--data-store-gib", o.data_store_gib,
                  "in-memory data store per rank (GiB; 0: off)");
  cmd->add_option("--mpiio", o.mpiio, "MPI-IO mode of the reads")
      ->check(CLI::IsMember({"independent", "collective"}))
      ->capture_default_str();
  cmd->add_option(
         "--transform", o.transform,
         "input transform: none, log1p, constant:F, meanstd:M1,..:S1,.. or log1p+<scaling>")
      ->capture_default_str();
  if (!training) return;
  cmd->add_option("--val-data", o.val_data, "validation sample file or directory");
  cmd->add_option("--dropout", o.dropout, "dropout probability in the dense head")
      ->capture_default_str();
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
  CLI::App app{"CosmoFlow with hybrid data x spatial parallelism (halo3d)"};
  app.set_config("--config", "", "read flags from a TOML/INI file");
  app.require_subcommand(1);
  CosmoFlowOptions options;
  CLI::App* train = app.add_subcommand("train", "train the model");
  CLI::App* eval = app.add_subcommand("eval", "evaluate the model on a data set");
  addOptions(train, options, true);
  addOptions(eval, options, false);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Every rank parses the same arguments; only rank 0 speaks.
    if (session.rank() != 0) return e.get_exit_code();
    return app.exit(e);
  }
  return halo3d::apps::runGuarded("cosmoflow", [&] {
    return train->parsed() ? halo3d::apps::trainCosmoFlow(options)
                           : halo3d::apps::evalCosmoFlow(options);
  });
}
