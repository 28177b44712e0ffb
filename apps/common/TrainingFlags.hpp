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
//   Evaluate: + --batch --seed --no-overlap --no-prefetch --data-store-gib
//   Train: + --val-data, length, optimizer and schedule, checkpoints, --resume, --stall-timeout
enum class FlagSet { Predict, Evaluate, Train };

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

// Validators: "must be >= lo, got v" / "must be > lo, got v".
CLI::Validator atLeast(double lo);
CLI::Validator above(double lo);

// The name of a resume mode ("off", "required", "if-any").
const char* resumeModeName(ResumeMode mode);

}  // namespace halo3d::apps
