#pragma once
// The flags of `cosmoflow train` and `cosmoflow eval` (docs/cosmoflow.md lists them with their
// meaning): the shared training flags and the model's.

#include <string>

#include "halo3d/apps/common/TrainingOptions.hpp"
#include "halo3d/core/Types.hpp"

namespace halo3d::apps {

struct CosmoFlowOptions : TrainingOptions {
  index_t input_size = 0;  // 0: from the data
  double width = 1.0;
  bool batchnorm = false;
  std::string bn_stats = "spatial";  // spatial | global
  double dropout = 0.0;
};

}  // namespace halo3d::apps
