#include "halo3d/apps/cosmoflow/Flags.hpp"

#include "halo3d/apps/common/TrainingFlags.hpp"

namespace halo3d::apps {

void addCosmoFlowFlags(CLI::App* cmd, CosmoFlowOptions& o, bool training) {
  cmd->add_option("--input-size", o.input_size, "input edge D = H = W (checked against the data)");
  cmd->add_option("--width", o.width, "channel multiplier of the model")
      ->check(above(0))
      ->capture_default_str();
  cmd->add_flag("--batchnorm", o.batchnorm, "BatchNorm after every convolution");
  addBnStatsFlag(cmd, o.bn_stats);
  if (training)
    cmd->add_option("--dropout", o.dropout, "dropout probability in the dense head")
        ->capture_default_str();
}

}  // namespace halo3d::apps
