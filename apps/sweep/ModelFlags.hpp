#pragma once
// The model of a sweep: `--model cosmoflow|unet3d` and the flags of that application, parsed into
// that application's options, and its TrainingTask made from them, exactly as the application
// itself does (apps/cosmoflow/Flags.hpp, apps/unet3d/Flags.hpp; the tasks CosmoFlowTask and
// UNetTask). The training flags are FlagSet::Sweep's (TrainingFlags.hpp): no --grid, checkpoints,
// metrics, validation or schedule.

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "halo3d/apps/common/TrainingOptions.hpp"
#include "halo3d/apps/common/TrainingTask.hpp"
#include "halo3d/apps/cosmoflow/Options.hpp"
#include "halo3d/apps/unet3d/Options.hpp"

namespace halo3d::apps {

class ModelFlags {
 public:
  // The models a sweep can run: "cosmoflow|unet3d".
  static const char* names() { return "cosmoflow|unet3d"; }
  // The value of --model in `argv` ("--model X" or "--model=X"), or empty: the model's flags must
  // be known before the command line is parsed.
  static std::string find(int argc, char** argv);

  // Adds --model (required; one of names()) and, when `model` is one of them, the training and
  // model flags of that application to `cmd`.
  void add(CLI::App* cmd, const std::string& model);

  const std::string& model() const { return _model; }
  // The chosen model's options (shared training flags).
  TrainingOptions& training();
  const TrainingOptions& training() const;
  // The application's task for the parsed flags; it refers to these options, which must outlive
  // it.
  std::unique_ptr<TrainingTask> makeTask() const;

 private:
  std::string _model;
  CosmoFlowOptions _cosmoflow;
  UNetOptions _unet;
};

}  // namespace halo3d::apps
