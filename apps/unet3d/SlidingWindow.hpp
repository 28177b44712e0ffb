#pragma once
// Sliding-window inference geometry, as MONAI's sliding_window_inference: tiles of edge T step by
// max(1, floor(T (1 - overlap))) along each dimension, the last tile is moved back to end at the
// volume's edge, and a volume smaller than T gets one tile at 0 (reaching past the volume, which
// reads as zero). The tiles' predictions are blended with a Gaussian importance map centred on the
// tile, sigma = sigma_scale * T, normalised to a maximum of 1: voxels near a tile's centre, which
// saw the most context, weigh the most.
//
// Example: a 64 volume, T = 32, overlap 0.25: step 24, tiles start at 0, 24 and 32 (the last moved
// back from 48 so that it ends at 64).
//
// Pure functions, tested without MPI.

#include <vector>

#include "halo3d/core/Types.hpp"

namespace halo3d::apps {

// Tile starts along one dimension of `extent` cells. Requires tile >= 1 and 0 <= overlap < 1
// (InputError otherwise).
std::vector<index_t> tileStarts(index_t extent, index_t tile, double overlap);

// Every tile origin of a volume, D slowest.
std::vector<Extents3> tileOrigins(const Extents3& volume, index_t tile, double overlap);

// The 1D factor of the importance map: w(i) = exp(-(i - (T-1)/2)^2 / (2 sigma^2)) / max, i in [0,
// T). The map of voxel (d, h, w) of a tile is the product of the three factors. Requires
// sigma_scale > 0.
std::vector<double> gaussianProfile(index_t tile, double sigma_scale);

}  // namespace halo3d::apps
