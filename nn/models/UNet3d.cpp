#include "halo3d/nn/models/UNet3d.hpp"

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/layers/Conv3d.hpp"
#include "halo3d/nn/layers/ConvTranspose3d.hpp"
#include "halo3d/nn/layers/Elementwise.hpp"
#include "halo3d/nn/layers/Pool3d.hpp"
#include "halo3d/nn/layers/Structural.hpp"

namespace halo3d::nn {

void UNetConfig::validate() const {
  require<InputError>(
      in_channels >= 1 && base >= 1 && classes >= 2 && depth >= 1,
      "U-Net needs in_channels >= 1, base >= 1, classes >= 2 and depth >= 1; got in_channels ",
      in_channels, ", base ", base, ", classes ", classes, ", depth ", depth);
  const index_t factor = index_t(1) << depth;
  const Extents3 e = extents();
  for (index_t x : e)
    require<InputError>(x >= factor && x % factor == 0, "U-Net input volume ", e[0], "x", e[1], "x",
                        e[2], " is not divisible by 2^depth = ", factor, " (depth ", depth,
                        "): pad or crop the volume to a multiple of ", factor);
}

Extents3 UNetConfig::extents() const {
  return input_extents[0] > 0 ? input_extents : Extents3{input_size, input_size, input_size};
}

namespace {
// conv 3^3 pad 1 (no bias) -> BatchNorm -> ReLU, named <prefix>.{0,1,2}. Returns the ReLU's node.
int block(Model& m, int input, const std::string& prefix, index_t in, index_t out,
          StatsGroup group) {
  int n =
      m.add(std::make_unique<Conv3d>(prefix + ".0", in, out, WindowGeometry::cubic(3, 1, 1), false),
            {input});
  n = m.add(std::make_unique<BatchNorm3d>(prefix + ".1", out, group), {n});
  return m.add(std::make_unique<LeakyRelu>(prefix + ".2", 0.0), {n});
}
}  // namespace

std::unique_ptr<Model> makeUNet3d(const UNetConfig& c, std::shared_ptr<ParameterStore> store) {
  c.validate();
  auto m = store ? std::make_unique<Model>(std::move(store)) : std::make_unique<Model>();
  const Extents3 e = c.extents();
  int node = m->input({c.in_channels, e[0], e[1], e[2]});
  index_t channels = c.in_channels;
  std::vector<int> skips;
  std::vector<index_t> skip_channels;
  for (int l = 0; l < c.depth; ++l) {
    const std::string p = "down." + std::to_string(l);
    const index_t mid = c.base << l, out = c.base << (l + 1);
    node = block(*m, node, p + ".0", channels, mid, c.bn_group);
    node = block(*m, node, p + ".1", mid, out, c.bn_group);
    skips.push_back(node);
    skip_channels.push_back(out);
    node =
        m->add(std::make_unique<Pool3d>(p + ".pool", PoolKind::Max, WindowGeometry::cubic(2, 2, 0)),
               {node});
    channels = out;
  }
  node = block(*m, node, "bottom.0", channels, channels, c.bn_group);
  node = block(*m, node, "bottom.1", channels, 2 * channels, c.bn_group);
  channels *= 2;
  for (int j = 0; j < c.depth; ++j) {
    const int level = c.depth - 1 - j;
    node = m->add(
        std::make_unique<ConvTranspose3d>("up." + std::to_string(j), channels, channels,
                                          kernels::ConvTranspose3dGeometry::cubic(2, 2, 0), false),
        {node});
    node = m->add(std::make_unique<Concat>("cat." + std::to_string(j)),
                  {skips[std::size_t(level)], node});
    const std::string p = "dec." + std::to_string(j);
    const index_t out = skip_channels[std::size_t(level)];
    node = block(*m, node, p + ".0", skip_channels[std::size_t(level)] + channels, out, c.bn_group);
    node = block(*m, node, p + ".1", out, out, c.bn_group);
    channels = out;
  }
  m->add(std::make_unique<Conv3d>("out", channels, c.classes, WindowGeometry::cubic(1, 1, 0), true),
         {node});
  return m;
}

}  // namespace halo3d::nn
