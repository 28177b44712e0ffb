#pragma once
// The flags of `cosmoflow train` and `cosmoflow eval` (docs/cosmoflow.md lists them with their
// meaning).

#include <cstdint>
#include <string>

#include "core/Types.hpp"

namespace halo3d::apps {

struct CosmoFlowOptions {
  std::string grid;  // NxDxHxW; default 1xPx1x1
  std::string data, val_data;
  index_t input_size = 0;  // 0: from the data
  double width = 1.0;
  bool batchnorm = false;
  std::string bn_stats = "spatial";  // spatial | global
  double dropout = 0.0;
  index_t batch = 2;  // global mini-batch
  long epochs = 1;
  long steps = 0;  // total optimizer steps (counted across resumes); overrides epochs
  std::string optimizer = "adam";
  double lr = 1e-3, momentum = 0.9;
  long warmup_steps = 0;
  std::string lr_decay = "none";  // none | step | poly
  long lr_step_every = 1000;
  double lr_gamma = 0.1;
  std::string init_weights;  // FILE.h5[:/group]
  bool no_shuffle = false;
  std::uint64_t seed = 1;
  std::string checkpoint_dir;
  long checkpoint_every = 0;  // steps; 0: at the end (and at each epoch end)
  int keep_checkpoints = 3;
  bool resume = false;
  std::string metrics;
  bool no_overlap = false;
  bool no_prefetch = false;
  double data_store_gib = 0.0;
  std::string mpiio = "independent";  // independent | collective
  std::string transform = "none";     // InputTransform::parse syntax
};

}  // namespace halo3d::apps
