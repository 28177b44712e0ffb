#pragma once
// The command-line flags of TrainingOptions, added to a CLI11 subcommand, with their checks: a
// value out of range is refused at parse time naming the flag and the value, and the optimizer,
// learning-rate decay and resume mode are parsed into their enums here, once.

#include <CLI/CLI.hpp>

#include <cstddef>
#include <map>
#include <string>

#include "halo3d/apps/common/TrainingOptions.hpp"

namespace halo3d::apps {

// Which subcommand the flags are for. Each level adds to the one before:
//   Predict: --grid --data --init-weights --checkpoint-dir --metrics --mpiio --transform
//   Evaluate: + --batch --seed --no-overlap --no-prefetch --data-store-gib --memory-limit
//   Train: + --machine, --val-data, length, optimizer and schedule, checkpoints, --resume,
//          --stall-timeout
//   Sweep (halo3d-sweep, which runs many grids and writes its own results): those of Evaluate
//          without --grid, --checkpoint-dir and --metrics, plus --machine, --optimizer, --lr,
//          --momentum and --stall-timeout
enum class FlagSet { Predict, Evaluate, Train, Sweep };

void addTrainingFlags(CLI::App* cmd, TrainingOptions& o, FlagSet set);

// "adam|sgd": the names of an enum's values.
template <class E, std::size_t N>
std::string choiceNames(const E (&values)[N], const char* (*name)(E)) {
  std::string names;
  for (E v : values)
    names += (names.empty() ? "" : "|") + std::string(name(v));
  return names;
}

// Turns the name of an enum value (`name` gives each value's name) into the enum's number before
// CLI11 converts it, so that the enum is parsed here, once; `aliases` maps other spellings to
// names.
template <class E, std::size_t N>
CLI::Validator choice(const E (&values)[N], const char* (*name)(E),
                      std::map<std::string, std::string> aliases = {}) {
  const std::string names = choiceNames(values, name);
  return CLI::Validator(
      [values, name, names, aliases](std::string& s) -> std::string {
        const auto alias = aliases.find(s);
        const std::string given = alias == aliases.end() ? s : alias->second;
        for (E v : values)
          if (given == name(v)) {
            s = std::to_string(int(v));
            return {};
          }
        return "expected one of " + names + ", got '" + s + "'";
      },
      "");
}

// A flag whose value is one of the names of an enum.
template <class E, std::size_t N>
CLI::Option* addChoice(CLI::App* cmd, const std::string& flag, E& target, const E (&values)[N],
                       const char* (*name)(E), const std::string& help) {
  return cmd->add_option(flag, target, help)
      ->transform(choice(values, name))
      ->option_text(choiceNames(values, name) + " (" + name(target) + ")");
}

// --bn-stats: BatchNorm statistics over the spatial group or all ranks (statsGroupOf).
void addBnStatsFlag(CLI::App* cmd, std::string& bn_stats);

// Validators: "must be >= lo, got v" / "must be > lo, got v".
CLI::Validator atLeast(double lo);
CLI::Validator above(double lo);

// A byte count: a number, optionally with a binary suffix K, M, G or T (powers of 1024; "KiB",
// "KB" and "k" mean the same), e.g. 20G, 512M, 1.5GiB, 1073741824. Throws InputError naming
// `flag` and the text on anything else (negative, not a number, an unknown suffix).
std::size_t parseByteSize(const std::string& text, const std::string& flag);
// The validator of a byte-count flag: turns "20G" into its number of bytes before CLI11 converts.
CLI::Validator byteSize();

// The name of a resume mode ("off", "required", "if-any").
const char* resumeModeName(ResumeMode mode);

}  // namespace halo3d::apps
