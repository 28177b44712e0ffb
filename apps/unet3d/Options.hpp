#pragma once
// The flags of `unet3d train`, `unet3d eval` and `unet3d predict` (docs/unet3d.md lists them with
// their meaning): the shared training flags, the model's and prediction's.

#include <string>

#include "halo3d/apps/common/TrainingOptions.hpp"
#include "halo3d/core/Types.hpp"

namespace halo3d::apps {

// --loss: voxel-wise cross-entropy or soft Dice over the softmax.
enum class SegmentationLoss { CrossEntropy, Dice };
inline constexpr SegmentationLoss kSegmentationLosses[] = {SegmentationLoss::CrossEntropy,
                                                           SegmentationLoss::Dice};
// "ce", "dice": the names of the flag and of checkpoint configurations.
const char* segmentationLossName(SegmentationLoss loss);

struct UNetOptions : TrainingOptions {
  // Model.
  index_t input_size = 0;   // 0: from the data (train, eval); the volume is checked against it
  index_t in_channels = 0;  // 0: from the data
  index_t base = 16;
  int depth = 3;
  index_t classes = 3;
  std::string bn_stats = "spatial";  // spatial | global
  SegmentationLoss loss = SegmentationLoss::CrossEntropy;
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
