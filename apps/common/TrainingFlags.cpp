#include "halo3d/apps/common/TrainingFlags.hpp"

#include <cctype>
#include <cmath>
#include <sstream>

#include "halo3d/core/EnumNames.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d::apps {

namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

constexpr ResumeMode kResumeModes[] = {ResumeMode::Off, ResumeMode::Required, ResumeMode::IfAny};
constexpr EnumName<ResumeMode> kResumeModeNames[] = {
    {ResumeMode::Off, "off"}, {ResumeMode::Required, "required"}, {ResumeMode::IfAny, "if-any"}};

}  // namespace

const char* resumeModeName(ResumeMode mode) {
  return nameOf(kResumeModeNames, mode);
}

void addBnStatsFlag(CLI::App* cmd, std::string& bn_stats) {
  cmd->add_option("--bn-stats", bn_stats,
                  "BatchNorm statistics over the spatial group or all ranks")
      ->check(CLI::IsMember({"spatial", "global"}))
      ->capture_default_str();
}

CLI::Validator atLeast(double lo) {
  return CLI::Validator(
      [lo](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v)) return "expected a number, got '" + s + "'";
        return v >= lo ? std::string() : "must be >= " + number(lo) + ", got " + s;
      },
      ">=" + number(lo));
}

CLI::Validator above(double lo) {
  return CLI::Validator(
      [lo](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v)) return "expected a number, got '" + s + "'";
        return v > lo ? std::string() : "must be > " + number(lo) + ", got " + s;
      },
      ">" + number(lo));
}

std::size_t parseByteSize(const std::string& text, const std::string& flag) {
  const auto bad = [&] {
    return InputError(
        concat(flag, ": expected a byte count such as 20G, 512M or 1073741824, got '", text, "'"));
  };
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  std::string suffix = text.substr(used);
  for (char& c : suffix)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() > 1 && suffix.back() == 'B') suffix.pop_back();  // "GB", "GIB"
  if (suffix.size() > 1 && suffix.back() == 'I') suffix.pop_back();  // "GI"
  const std::string units = "KMGT";
  double scale = 1;
  if (suffix == "B") suffix.clear();
  if (!suffix.empty()) {
    const auto at = units.find(suffix);
    if (suffix.size() != 1 || at == std::string::npos) throw bad();
    scale = std::pow(1024.0, double(at + 1));
  }
  const double bytes = value * scale;
  if (!std::isfinite(bytes) || bytes < 0 || bytes >= 1.8e19) throw bad();
  return std::size_t(std::llround(bytes));
}

CLI::Validator byteSize() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        try {
          s = std::to_string(parseByteSize(s, "value"));
          return {};
        } catch (const InputError&) {
          return "expected a byte count such as 20G, 512M or 1073741824, got '" + s + "'";
        }
      },
      "BYTES");
}

void addTrainingFlags(CLI::App* cmd, TrainingOptions& o, FlagSet set) {
  const bool sweep = set == FlagSet::Sweep;
  if (set == FlagSet::Train)
    cmd->add_option("--grid", o.grid,
                    "process grid NxDxHxW, or auto: the grid the performance model predicts "
                    "fastest among those that fit --memory-limit (with --machine); default "
                    "1xPx1x1, splitting D over all P ranks");
  else if (!sweep)
    cmd->add_option("--grid", o.grid,
                    "process grid NxDxHxW (default 1xPx1x1: split D over all P ranks)");
  cmd->add_option("--data", o.data, "HDF5 sample file or directory of them")->required();
  cmd->add_option("--init-weights", o.init_weights, "PyTorch-named weights: FILE.h5[:/group]");
  if (!sweep) {
    cmd->add_option("--checkpoint-dir", o.checkpoint_dir,
                    "where checkpoints are written and resumed from");
    cmd->add_option("--metrics", o.metrics, "JSON-lines metrics file (appended)");
  }
  cmd->add_option("--mpiio", o.mpiio, "MPI-IO mode of the reads")
      ->check(CLI::IsMember({"independent", "collective"}))
      ->capture_default_str();
  cmd->add_option(
         "--transform", o.transform,
         "input transform: none, log1p, constant:F, meanstd:M1,..:S1,.. or log1p+<scaling>")
      ->capture_default_str();
  if (set == FlagSet::Predict) return;
  cmd->add_option("--batch", o.batch, "global mini-batch size")
      ->check(atLeast(1))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of shuffling, initialisation and dropout")
      ->capture_default_str();
  cmd->add_flag("--no-overlap", o.no_overlap,
                "finish each halo exchange before computing (for comparison)");
  cmd->add_flag("--no-prefetch", o.no_prefetch, "read each batch when it is needed");
  addChoice(cmd, "--precision", o.precision, nn::kPrecisions, nn::toString,
            "storage of activations, their gradients and halo messages (bf16: half the memory "
            "and halo bytes; parameters, optimizer state and every sum stay fp32)");
  cmd->add_option("--data-store-gib", o.data_store_gib,
                  "in-memory data store per rank (GiB; 0: off)")
      ->check(atLeast(0));
  cmd->add_option("--memory-limit", o.memory_limit,
                  "bytes per rank the model may use (e.g. 20G, 512M; K, M, G, T are powers of "
                  "1024): a run whose plan needs more stops before allocating the model, naming "
                  "the largest layers and a grid that fits (0: no limit beyond the memory "
                  "available)")
      ->transform(byteSize());
  if (set == FlagSet::Evaluate) return;
  cmd->add_option("--machine", o.machine,
                  "machine file of the performance model (default: $HALO3D_MACHINE, else "
                  "machines/this-machine.json of the source tree or of the installation)");
  addChoice(cmd, "--optimizer", o.optimizer, nn::kOptimizerKinds, nn::optimizerKindName,
            "optimizer (torch.optim semantics)");
  cmd->add_option("--lr", o.lr, "learning rate")->check(above(0))->capture_default_str();
  cmd->add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str();
  cmd->add_option("--stall-timeout", o.stall_timeout,
                  "abort the job when a rank makes no progress for this many seconds (0: off)")
      ->check(atLeast(0))
      ->capture_default_str();
  addChoice(cmd, "--allreduce-precision", o.allreduce_precision, nn::kPrecisions, nn::toString,
            "the gradient allreduce's messages (bf16: half the bytes, summed in place with no "
            "receive buffer; each addition in fp32, rounded to bf16 once per reduction level)");
  if (sweep) return;
  cmd->add_option("--val-data", o.val_data,
                  "validation sample file or directory (evaluated after every epoch)");
  cmd->add_option("--epochs", o.epochs, "epochs to train")
      ->check(atLeast(1))
      ->capture_default_str();
  cmd->add_option("--steps", o.steps,
                  "total optimizer steps, counted across resumes (overrides --epochs)")
      ->check(atLeast(1));
  cmd->add_option("--warmup-steps", o.warmup_steps, "linear learning-rate warm-up steps")
      ->check(atLeast(0))
      ->capture_default_str();
  addChoice(cmd, "--lr-decay", o.lr_decay, nn::kLrDecays, nn::lrDecayName,
            "learning-rate decay after the warm-up");
  cmd->add_option("--lr-step-every", o.lr_step_every, "step decay interval (steps)")
      ->check(atLeast(1))
      ->capture_default_str();
  cmd->add_option("--lr-gamma", o.lr_gamma, "step decay factor")->capture_default_str();
  cmd->add_flag("--no-shuffle", o.no_shuffle, "keep the file order");
  cmd->add_option("--checkpoint-every", o.checkpoint_every,
                  "checkpoint every N steps (0: each epoch end); the end of a run always saves")
      ->check(atLeast(0))
      ->capture_default_str();
  cmd->add_option("--keep-checkpoints", o.keep_checkpoints, "checkpoints kept")
      ->check(atLeast(1))
      ->capture_default_str();
  // `--resume` alone means `--resume=required` (and `resume = true` in a config file).
  cmd->add_flag("--resume{required}", o.resume,
                "continue from the newest valid checkpoint in --checkpoint-dir (any grid), which "
                "must exist; --resume=if-any starts from scratch when there is none")
      ->transform(choice(kResumeModes, resumeModeName, {{"true", "required"}, {"false", "off"}}))
      ->option_text("[=if-any]");
}

}  // namespace halo3d::apps
