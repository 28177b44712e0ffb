#include "halo3d/apps/unet3d/SlidingWindow.hpp"

#include <algorithm>
#include <cmath>

#include "halo3d/core/Error.hpp"

namespace halo3d::apps {

std::vector<index_t> tileStarts(index_t extent, index_t tile, double overlap) {
  require<InputError>(tile >= 1, "--tile must be >= 1, got ", tile);
  require<InputError>(overlap >= 0 && overlap < 1, "--overlap must be in [0, 1), got ", overlap);
  require<InputError>(extent >= 1, "volume extent ", extent, " must be >= 1");
  if (extent <= tile) return {0};
  const index_t step = std::max<index_t>(1, index_t(std::floor(double(tile) * (1.0 - overlap))));
  const index_t count = (extent - tile + step - 1) / step + 1;
  std::vector<index_t> starts;
  for (index_t k = 0; k < count; ++k)
    starts.push_back(std::min(k * step, extent - tile));
  return starts;
}

std::vector<Extents3> tileOrigins(const Extents3& volume, index_t tile, double overlap) {
  const std::vector<index_t> d = tileStarts(volume[0], tile, overlap),
                             h = tileStarts(volume[1], tile, overlap),
                             w = tileStarts(volume[2], tile, overlap);
  std::vector<Extents3> origins;
  for (index_t a : d)
    for (index_t b : h)
      for (index_t c : w)
        origins.push_back({a, b, c});
  return origins;
}

std::vector<double> gaussianProfile(index_t tile, double sigma_scale) {
  require<InputError>(sigma_scale > 0, "the Gaussian sigma scale must be positive, got ",
                      sigma_scale);
  const double sigma = sigma_scale * double(tile), centre = double(tile - 1) / 2;
  std::vector<double> w(static_cast<std::size_t>(tile));
  for (index_t i = 0; i < tile; ++i)
    w[std::size_t(i)] = std::exp(-(i - centre) * (i - centre) / (2 * sigma * sigma));
  const double top = *std::max_element(w.begin(), w.end());
  for (double& v : w)
    v /= top;
  return w;
}

}  // namespace halo3d::apps
