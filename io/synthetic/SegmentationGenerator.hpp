#pragma once
// Synthetic U-Net samples: CT-like volumes of random ellipsoid "organs" holding smaller "lesions".
//
//   background  soft tissue around 0 HU with a smooth low-frequency variation (+-20 HU)
//   organs      1 to 3 randomly placed, sized and rotated ellipsoids, about 60 HU (+15 HU per
//               channel, a later contrast phase); label 1
//   lesions     0 to 2 per organ, small ellipsoids centred inside it (semi-axes 5-12% of N),
//               about 130 HU in channel 0, fading by 35 HU per later channel (wash-out); label 2
//   noise       Gaussian, 15 HU, independent per voxel and channel
//
// A sample is a pure function of (seed, sample index, size, channels).

#include <cstdint>
#include <vector>

#include "halo3d/core/Types.hpp"

namespace halo3d {

struct SegmentationSpec {
  index_t size = 64;  // samples are (channels, N, N, N)
  index_t channels = 1;
};

struct SegmentationSample {
  std::vector<float> volume;         // (channels, N, N, N), Hounsfield-like units
  std::vector<std::int32_t> labels;  // (N, N, N): 0 background, 1 organ, 2 lesion
};

// Requires size >= 4 and channels >= 1 (InputError otherwise).
SegmentationSample generateSegmentationSample(const SegmentationSpec& spec, std::uint64_t seed,
                                              index_t index);

}  // namespace halo3d
