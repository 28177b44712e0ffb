#pragma once
// Distributed activations. The global tensor is (N, C, D, H, W) with N the global mini-batch; the N
// axis is always split over the Pn sample groups (BlockDecomposition, as TensorBlock::forGrid
// does). Within a sample group the volume is
//   - Spatial: block-partitioned over the Pd x Ph x Pw ranks, with ghost cells for the
//     consumers' halos;
//   - Replicated: held whole by every rank of the spatial group (used once a volume is too small
//     to split, and by the dense head, which runs replicated). Its ghosts are the zero padding
//     its consumers read past the volume.

#include <string>

#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/nn/Real.hpp"

namespace halo3d::nn {

enum class Distribution { Spatial, Replicated };

inline const char* toString(Distribution d) {
  return d == Distribution::Spatial ? "spatial" : "replicated";
}

// What every rank knows about a tensor at planning time.
struct TensorSpec {
  Shape5 shape{0, 0, 0, 0, 0};
  Distribution dist = Distribution::Spatial;
  Extents3 volume() const { return {shape[2], shape[3], shape[4]}; }
};

using Tensor = HaloTensor<real>;

// The block that the rank at `coords` of `grid` holds of a tensor of `spec` with ghost widths
// `halo`.
TensorBlock blockFor(const TensorSpec& spec, const GridShape& grid, const GridCoords& coords,
                     const HaloWidths& halo);
// This rank's block.
TensorBlock blockFor(const TensorSpec& spec, const ProcessGrid& grid, const HaloWidths& halo);

struct Activation {
  TensorSpec spec;
  Tensor tensor;
  // Global output cells this rank computes: its owned block (Spatial) or the whole volume
  // (Replicated).
  const Box& owned() const { return tensor.block().owned(); }
};

// Allocates an activation (zeroed, so ghosts past the volume are the zero padding).
Activation makeActivation(const std::string& label, const TensorSpec& spec, const ProcessGrid& grid,
                          const HaloWidths& halo);

}  // namespace halo3d::nn
