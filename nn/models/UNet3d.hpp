#pragma once
// The 3D U-Net family (tests/reference/README.md). Each level has two blocks of
// (conv 3^3 pad 1 without bias -> BatchNorm -> ReLU). Encoder level l goes to base*2^l then
// base*2^(l+1) channels and is followed by max-pool 2/2; the bottom doubles the channels; each
// decoder level upsamples with ConvTranspose 2^3 / s2 without bias (keeping the channel count),
// concatenates [skip, upsampled] on the channel axis and runs two blocks down to the skip's channel
// count; a 1^3 conv with bias gives `classes` logits. Names are PyTorch's: down.<l>.<b>.{0,1},
// bottom.<b>.{0,1}, up.<j>, dec.<j>.<b>.{0,1}, out.

#include <memory>

#include "halo3d/nn/Model.hpp"
#include "halo3d/nn/layers/BatchNorm3d.hpp"

namespace halo3d::nn {

struct UNetConfig {
  index_t input_size = 64;  // D = H = W
  Extents3 input_extents{0, 0,
                         0};  // a non-cubic (D, H, W) instead (prediction); zero: input_size^3
  index_t in_channels = 1;
  index_t base = 32;
  int depth = 3;
  index_t classes = 3;
  StatsGroup bn_group = StatsGroup::Spatial;

  // Throws InputError naming the value unless every count is positive and every input extent is
  // divisible by 2^depth (each level halves the volume).
  void validate() const;
  // The input volume (D, H, W).
  Extents3 extents() const;
};

std::unique_ptr<Model> makeUNet3d(const UNetConfig& config,
                                  std::shared_ptr<ParameterStore> store = nullptr);

}  // namespace halo3d::nn
