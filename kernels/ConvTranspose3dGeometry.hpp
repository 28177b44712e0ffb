#pragma once
// The geometry of a transposed convolution (part of the ConvTranspose3d.hpp interface, kept apart
// so that the planner and the checks can use it without the kernels): output extents, the windows
// each kernel reads, and ghost widths. Defined in kernels/ConvTranspose3d.cpp.

#include <array>
#include <cstddef>

#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/core/Types.hpp"

namespace halo3d::kernels {

// Window geometry of a transposed convolution: WindowGeometry's kernel, stride, dilation and
// padding read as PyTorch's ConvTranspose3d reads them, plus output_padding (extra output cells on
// the high side).
struct ConvTranspose3dGeometry {
  WindowGeometry window;
  std::array<int, 3> output_padding{0, 0, 0};

  static ConvTranspose3dGeometry cubic(int k, int s = 1, int p = 0, int output_padding = 0,
                                       int dil = 1) {
    return ConvTranspose3dGeometry{WindowGeometry::cubic(k, s, p, dil),
                                   {output_padding, output_padding, output_padding}};
  }
  // Throws ShapeError unless the window is valid and 0 <= output_padding < max(stride, dilation)
  // (PyTorch's rule: a larger output_padding would add cells no input reaches).
  void validate() const;
  // (E - 1) s - 2p + dil (k - 1) + output_padding + 1 along `dim`; throws ShapeError unless E >= 1
  // and the result is >= 1.
  index_t outputExtent(int dim, index_t input_extent) const;
  Extents3 outputExtents(const Extents3& input_extents) const;
  // Input cells [lo, hi) that output cells [o0, o1) read along `dim`, before clipping to the
  // volume.
  std::array<index_t, 2> inputWindow(int dim, index_t o0, index_t o1) const;
  // Output cells [lo, hi) that input cells [i0, i1) feed along `dim`, before clipping to the
  // volume.
  std::array<index_t, 2> outputWindow(int dim, index_t i0, index_t i1) const;
  // Bytes of the largest buffer the host code allocates for one pass on a block of `samples`
  // samples whose output has `out_extents` cells: backward-filter's partial sums and dy rows per
  // chunk (up to 32 chunks whatever the thread count, at most 64 MiB of partial sums), or the
  // weights packed for forward and backward-data. The memory model counts it (a 128-channel layer
  // with 2x2x2 taps keeps 16 MiB of partial sums); the device code allocates no such buffer.
  std::size_t hostWorkspaceBytes(index_t samples, index_t in_channels, index_t out_channels,
                                 const Extents3& out_extents, std::size_t element_bytes) const;
};

// Ghost widths input block `input_block` needs to compute output block `output_block` (global
// indices): what inputWindow, clipped to the input volume `input_extents`, reaches past the owned
// block.
HaloWidths convTranspose3dHaloWidths(const ConvTranspose3dGeometry& g, const Box& input_block,
                                     const Box& output_block, const Extents3& input_extents);
// Widths that serve every block when input and output are both block-decomposed over `parts` (the
// maximum of convTranspose3dHaloWidths over the blocks). Throws ShapeError if an output extent
// cannot be split.
HaloWidths convTranspose3dHaloWidthsForGrid(const ConvTranspose3dGeometry& g,
                                            const Extents3& input_extents,
                                            const std::array<int, 3>& parts);

}  // namespace halo3d::kernels
