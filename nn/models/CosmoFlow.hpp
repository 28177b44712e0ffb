#pragma once
// The CosmoFlow model family (the structure LBANN released with the paper; see
// tests/reference/README.md): 7 convolutions 3^3, pad 1, no bias, with 16, 32, 64, 128, 256, 256,
// 256 channels times `width` (conv4 has stride 2), each followed by [BatchNorm] and
// LeakyReLU(0.01); average pooling 3^3 / s2 / p1 after conv1..5, after conv6 for inputs >= 256^3
// and after conv7 for 512^3, skipped once the volume is 2^3 or smaller; then Flatten and a dense
// head of 2048, 256 and 4 neurons (times `width` except the last) with LeakyReLU between. Layer
// names are PyTorch's (features.<i>, head.<i>), so parameter names are the state_dict keys.

#include <memory>

#include "halo3d/nn/Model.hpp"
#include "halo3d/nn/layers/BatchNorm3d.hpp"

namespace halo3d::nn {

struct CosmoFlowConfig {
  index_t input_size = 128;  // D = H = W
  index_t input_channels = 4;
  double width = 1.0;  // channel multiplier
  bool batchnorm = false;
  StatsGroup bn_group = StatsGroup::Spatial;
  index_t outputs = 4;
  double dropout = 0.0;  // in the head, after each hidden LeakyReLU (0: none)

  // Throws InputError naming the value for sizes outside [8, 1024], a width that leaves a layer
  // without channels, or an input size whose feature extractor does not end at 2^3.
  void validate() const;
  // Channels of conv i (0-based) and of hidden dense layer j.
  index_t convChannels(int i) const;
  index_t denseWidth(int j) const;
};

// Builds the model (not yet built for a grid: call Model::build).
std::unique_ptr<Model> makeCosmoFlow(const CosmoFlowConfig& config,
                                     std::shared_ptr<ParameterStore> store = nullptr);

}  // namespace halo3d::nn
