#pragma once
// Optional transforms applied to every input voxel as it is read, before it is cached or handed on:
//   y = scale(log1p(x))   with log1p optional and scale one of
//   none: y = v;  constant: y = v * factor;  mean/std: y = (v - mean[c]) / std[c]   (per channel c)
// Pure host code, independent of the grid, so cached tiles and read tiles match.

#include <string>
#include <vector>

#include "halo3d/core/Types.hpp"

namespace halo3d {

struct InputTransform {
  enum class Scaling { None, Constant, MeanStd };
  bool log1p = false;
  Scaling scaling = Scaling::None;
  float factor = 1.0f;           // Constant
  std::vector<float> mean, std;  // MeanStd: one value per channel, or one for all channels

  bool isIdentity() const { return !log1p && scaling == Scaling::None; }
  // Throws InputError unless the parameters suit `channels` (non-zero std, sizes 1 or channels).
  void validate(index_t channels) const;
  // Applies the transform to `count` values of channel `c`, in place. log1p requires values > -1.
  void apply(index_t c, float* values, std::size_t count) const;

  // Parses the command-line forms "none", "log1p", "constant:F", "meanstd:M1,M2,...:S1,S2,..." and
  // "log1p+constant:F", "log1p+meanstd:...". Throws InputError naming the text otherwise.
  static InputTransform parse(const std::string& text);
};

}  // namespace halo3d
