#pragma once
// Distributed activations. The global tensor is (N, C, D, H, W) with N the global mini-batch; the N
// axis is always split over the Pn sample groups (BlockDecomposition, as TensorBlock::forGrid
// does). Within a sample group the volume is
//   - Spatial: block-partitioned over the Pd x Ph x Pw ranks, with ghost cells for the
//     consumers' halos;
//   - Replicated: held whole by every rank of the spatial group (used once a volume is too small
//     to split, and by the dense head, which runs replicated). Its ghosts are the zero padding
//     its consumers read past the volume.
//
// Precision (nn/Precision.hpp): an activation holds its cells in ONE of two tensors, `tensor`
// (the library's scalar, fp32 runs) or `tensor_bf16` (bf16 runs); the other stays empty. Two
// members rather than a variant or a template keep fp32 code as it was (it reads `tensor`
// directly, at the same speed), while bf16 code asks for the storage it needs with the accessors,
// which throw naming the activation when it holds the other one. The block, owned box and spec do
// not depend on the precision.

#include <string>

#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/nn/Precision.hpp"
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

using TensorBf16 = HaloTensor<bf16>;

struct Activation {
  TensorSpec spec;
  Tensor tensor;           // the cells in fp32 runs; empty in bf16 runs
  TensorBf16 tensor_bf16;  // the cells in bf16 runs; empty in fp32 runs
  Precision precision = Precision::fp32;

  bool isBf16() const { return precision == Precision::bf16; }
  const TensorBlock& block() const { return isBf16() ? tensor_bf16.block() : tensor.block(); }
  // Global output cells this rank computes: its owned block (Spatial) or the whole volume
  // (Replicated).
  const Box& owned() const { return block().owned(); }
  // The storage of each precision; InputError naming the activation if it holds the other.
  const Tensor& floatTensor() const;
  const TensorBf16& bf16Tensor() const;
};

// Allocates an activation in `precision` (zeroed, so ghosts past the volume are the zero padding).
Activation makeActivation(const std::string& label, const TensorSpec& spec, const ProcessGrid& grid,
                          const HaloWidths& halo, Precision precision = Precision::fp32);

}  // namespace halo3d::nn
