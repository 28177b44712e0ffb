#include "halo3d/apps/sweep/ModelFlags.hpp"

#include "halo3d/apps/common/TrainingFlags.hpp"
#include "halo3d/apps/cosmoflow/CosmoFlowTask.hpp"
#include "halo3d/apps/cosmoflow/Flags.hpp"
#include "halo3d/apps/unet3d/Flags.hpp"
#include "halo3d/apps/unet3d/UNetTask.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d::apps {

std::string ModelFlags::find(int argc, char** argv) {
  const std::string flag = "--model";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == flag && i + 1 < argc) return argv[i + 1];
    if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
  }
  return {};
}

void ModelFlags::add(CLI::App* cmd, const std::string& model) {
  cmd->add_option("--model", _model,
                  "the model to sweep; its application's flags follow (pass --model X --help to "
                  "list them)")
      ->required()
      ->check(CLI::IsMember({"cosmoflow", "unet3d"}))
      ->option_text(names());
  if (model == "cosmoflow") {
    addTrainingFlags(cmd, _cosmoflow, FlagSet::Sweep);
    addCosmoFlowFlags(cmd, _cosmoflow, true);
  } else if (model == "unet3d") {
    addTrainingFlags(cmd, _unet, FlagSet::Sweep);
    addUNetFlags(cmd, _unet, FlagSet::Sweep);
  }
}

TrainingOptions& ModelFlags::training() {
  return _model == "unet3d" ? static_cast<TrainingOptions&>(_unet)
                            : static_cast<TrainingOptions&>(_cosmoflow);
}

const TrainingOptions& ModelFlags::training() const {
  return const_cast<ModelFlags*>(this)->training();
}

std::unique_ptr<TrainingTask> ModelFlags::makeTask() const {
  if (_model == "cosmoflow") return std::make_unique<CosmoFlowTask>(_cosmoflow);
  if (_model == "unet3d") return std::make_unique<UNetTask>(_unet);
  throw InputError(concat("--model '", _model, "': expected one of ", names()));
}

}  // namespace halo3d::apps
