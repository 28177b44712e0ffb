#pragma once
// The flags of `unet3d train`, `unet3d eval` and `unet3d predict` (docs/unet3d.md lists them with
// their meaning).

#include <cstdint>
#include <string>

#include "core/Types.hpp"

namespace halo3d::apps {

struct UNetOptions {
  std::string grid;  // NxDxHxW; default 1xPx1x1
  std::string data, val_data;
  // Model.
  index_t input_size = 0;   // 0: from the data (train, eval); the volume is checked against it
  index_t in_channels = 0;  // 0: from the data
  index_t base = 16;
  int depth = 3;
  index_t classes = 3;
  std::string bn_stats = "spatial";  // spatial | global
  // Optimisation.
  std::string loss = "ce";  // ce | dice
  index_t batch = 2;        // global mini-batch
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
  long checkpoint_every = 0;  // steps; 0: at each epoch end
  int keep_checkpoints = 3;
  bool resume = false;
  std::string metrics;
  bool no_overlap = false;
  bool no_prefetch = false;
  double data_store_gib = 0.0;
  std::string mpiio = "independent";  // independent | collective
  std::string transform = "none";     // InputTransform::parse syntax
  // Prediction.
  index_t sample = 0;  // sample id in --data
  std::string out;     // output HDF5 file
  bool probabilities = false;
  bool pad = false;            // pad the volume with zeros to a multiple of 2^depth
  index_t tile = 0;            // sliding-window tile edge (0: the whole volume at once)
  double overlap = 0.5;        // sliding-window overlap, in [0, 1)
  double sigma_scale = 0.125;  // Gaussian blending: sigma = sigma_scale * tile
};

}  // namespace halo3d::apps
