#include "halo3d/nn/models/CosmoFlow.hpp"

#include <cmath>

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/layers/Conv3d.hpp"
#include "halo3d/nn/layers/Dense.hpp"
#include "halo3d/nn/layers/Elementwise.hpp"
#include "halo3d/nn/layers/Pool3d.hpp"
#include "halo3d/nn/layers/Structural.hpp"

namespace halo3d::nn {

namespace {
constexpr int kConvChannels[7] = {16, 32, 64, 128, 256, 256, 256};
constexpr int kDense[2] = {2048, 256};
constexpr double kSlope = 0.01;

index_t scaled(int c, double width) {
  return index_t(std::lround(double(c) * width));
}

// Whether a pool follows conv i (0-based) at the current volume, and the volume it leaves.
bool poolAfter(int i, index_t input_size, index_t volume) {
  const bool scheduled = i < 5 || (i == 5 && input_size >= 256) || (i == 6 && input_size >= 512);
  return scheduled && volume > 2;
}
index_t pooled(index_t e) {
  return (e + 2 - 3) / 2 + 1;
}
index_t afterConv(int i, index_t e) {
  return i == 3 ? (e + 2 - 3) / 2 + 1 : e;
}

index_t finalVolume(index_t input_size) {
  index_t e = input_size;
  for (int i = 0; i < 7; ++i) {
    e = afterConv(i, e);
    if (poolAfter(i, input_size, e)) e = pooled(e);
  }
  return e;
}
}  // namespace

index_t CosmoFlowConfig::convChannels(int i) const {
  return scaled(kConvChannels[i], width);
}
index_t CosmoFlowConfig::denseWidth(int j) const {
  return scaled(kDense[j], width);
}

void CosmoFlowConfig::validate() const {
  require<InputError>(input_size >= 8 && input_size <= 1024,
                      "CosmoFlow input size must be in [8, 1024], got ", input_size);
  require<InputError>(input_channels >= 1, "CosmoFlow input channels must be >= 1, got ",
                      input_channels);
  require<InputError>(width > 0 && convChannels(0) >= 1 && denseWidth(1) >= 1, "CosmoFlow width ",
                      width,
                      " leaves a layer without channels (the smallest layer has 16 * width)");
  require<InputError>(dropout >= 0 && dropout < 1, "dropout must be in [0, 1), got ", dropout);
  const index_t last = finalVolume(input_size);
  require<InputError>(last == 2, "CosmoFlow input size ", input_size,
                      " leaves a final convolution volume of ", last,
                      "^3, but the model needs 2^3 (use 32, 64, 128, 256 or 512)");
}

std::unique_ptr<Model> makeCosmoFlow(const CosmoFlowConfig& c,
                                     std::shared_ptr<ParameterStore> store) {
  c.validate();
  auto m = store ? std::make_unique<Model>(std::move(store)) : std::make_unique<Model>();
  m->input({c.input_channels, c.input_size, c.input_size, c.input_size});
  int index = 0;
  auto next = [&] { return "features." + std::to_string(index++); };
  index_t channels = c.input_channels, volume = c.input_size;
  for (int i = 0; i < 7; ++i) {
    const index_t out = c.convChannels(i);
    const WindowGeometry g = WindowGeometry::cubic(3, i == 3 ? 2 : 1, 1);
    m->add(std::make_unique<Conv3d>(next(), channels, out, g, false));
    if (c.batchnorm) m->add(std::make_unique<BatchNorm3d>(next(), out, c.bn_group));
    m->add(std::make_unique<LeakyRelu>(next(), kSlope));
    volume = afterConv(i, volume);
    if (poolAfter(i, c.input_size, volume)) {
      m->add(std::make_unique<Pool3d>(next(), PoolKind::Average, WindowGeometry::cubic(3, 2, 1)));
      volume = pooled(volume);
    }
    channels = out;
  }
  index = 0;
  auto head = [&] { return "head." + std::to_string(index++); };
  m->add(std::make_unique<Flatten>(head()));
  index_t features = channels * volume * volume * volume;
  for (int j = 0; j < 2; ++j) {
    m->add(std::make_unique<Dense>(head(), features, c.denseWidth(j)));
    m->add(std::make_unique<LeakyRelu>(head(), kSlope));
    if (c.dropout > 0) m->add(std::make_unique<Dropout>(head(), c.dropout, std::uint32_t(100 + j)));
    features = c.denseWidth(j);
  }
  m->add(std::make_unique<Dense>(head(), features, c.outputs));
  return m;
}

}  // namespace halo3d::nn
