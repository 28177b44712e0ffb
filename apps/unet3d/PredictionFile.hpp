#pragma once
// The output of `unet3d predict`: one serial HDF5 file, written by one process.
//
//   /labels          (D, H, W) uint8        argmax class of every voxel
//   /probabilities   (C, D, H, W) float32   softmax (or blended softmax) per class; only with
//   --probabilities / attribute "prediction": JSON string   source file, sample id, mode, tile,
//   overlap, model
//
// Written to a temporary name beside `path` and renamed, so a failure never leaves a partial file.

#include <cstdint>
#include <string>
#include <vector>

#include "halo3d/core/Types.hpp"

namespace halo3d::apps {

struct Prediction {
  Extents3 extents{0, 0, 0};
  index_t classes = 0;
  std::vector<std::int32_t> labels;  // D * H * W, C order
  std::vector<float> probabilities;  // C * D * H * W, or empty
  std::string info_json;             // the "prediction" attribute
};

// Throws IoError naming the file on failure, InputError on inconsistent sizes or labels outside [0,
// 255].
void writePrediction(const std::string& path, const Prediction& p);

// Reads /labels of a prediction file (tests and tools). Throws IoError naming the file.
std::vector<std::int32_t> readPredictionLabels(const std::string& path, Extents3& extents);

}  // namespace halo3d::apps
