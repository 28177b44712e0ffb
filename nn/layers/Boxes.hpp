#pragma once
// Box arithmetic for halo overlap, in global coordinates.

#include <vector>

#include "halo3d/core/TensorBlock.hpp"

namespace halo3d::nn {

// Cells of `x` valid before any exchange: its owned block plus its ghosts past the global volume
// (the zero padding, never exchanged).
Box validWithoutExchange(const TensorBlock& x);

// `outer` minus `inner` (inner inside outer, or empty) as at most six disjoint slabs, D slabs
// first.
std::vector<Box> shellSlabs(const Box& outer, const Box& inner);

// `box` cut along D into at most `parts` slabs of nearly equal thickness (fewer when it is
// thinner).
std::vector<Box> splitAlongD(const Box& box, int parts);

// The smallest box holding both.
Box hull(const Box& a, const Box& b);

}  // namespace halo3d::nn
