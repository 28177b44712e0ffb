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

// `inner` (inside `outer`) with its W bounds moved inward where they differ from outer's, until
// each W slab between the two is at least `cells` wide (inner may become empty). The host kernels
// vectorise along W: a slab one cell wide runs every row at one lane of 16, which made the shell of
// a W-split block cost as much as its interior.
Box narrowAlongW(const Box& outer, const Box& inner, index_t cells);

// W cells per vector of the host kernels (AVX-512 floats): the width the layers' overlap gives the
// W slabs of its shell, and the step model with it.
inline constexpr index_t kRowVectorCells = 16;

// The smallest box holding both.
Box hull(const Box& a, const Box& b);

}  // namespace halo3d::nn
