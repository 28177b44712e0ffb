#pragma once
// Ghost widths of a block, and the rule that derives them from a sliding-window operator
// (convolution or pooling): the rule Distconv's get_halo_sizes implements, written for any kernel,
// stride, dilation and padding, odd or even kernels, and uneven block splits.
//
// The rule. Along one dimension an output block [o0, o1) reads the input window
//     [o0 * s - p,  (o1 - 1) * s - p + dil * (k - 1) + 1)
// and the input block it owns is [i0, i1). Its ghost widths are what the window reaches past the
// owned block:
//     lo = max(0, i0 - window.lo),   hi = max(0, window.hi - i1).
// Past the global volume those ghosts are the zero padding. Worked example, k = 3, s = 2, p = 1, E
// = 64 over 2 blocks: input blocks [0,32) [32,64), output 32 cells in blocks [0,16) [16,32). Block
// 1 reads [31, 64): lo = 1, hi = 0. Block 0 reads [-1, 32): lo = 1 (padding), hi = 0. Stride makes
// widths asymmetric.

#include <array>
#include <ostream>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/core/Types.hpp"

namespace halo3d {

struct HaloWidths {
  std::array<int, 3> lo{0, 0, 0};
  std::array<int, 3> hi{0, 0, 0};

  static HaloWidths uniform(int width) {
    return HaloWidths{{width, width, width}, {width, width, width}};
  }
  bool isZero() const {
    return lo == std::array<int, 3>{0, 0, 0} && hi == std::array<int, 3>{0, 0, 0};
  }
  Extents3 loExtents() const { return {lo[0], lo[1], lo[2]}; }
  Extents3 hiExtents() const { return {hi[0], hi[1], hi[2]}; }

  friend bool operator==(const HaloWidths& a, const HaloWidths& b) {
    return a.lo == b.lo && a.hi == b.hi;
  }
  friend bool operator!=(const HaloWidths& a, const HaloWidths& b) { return !(a == b); }
  // Element-wise maximum: the widths that serve both.
  friend HaloWidths max(const HaloWidths& a, const HaloWidths& b);
  friend std::ostream& operator<<(std::ostream& os, const HaloWidths& h);
};

// Kernel, stride, dilation and symmetric zero padding of a sliding-window operator, per spatial
// dimension.
struct WindowGeometry {
  std::array<int, 3> kernel{1, 1, 1};
  std::array<int, 3> stride{1, 1, 1};
  std::array<int, 3> dilation{1, 1, 1};
  std::array<int, 3> padding{0, 0, 0};

  static WindowGeometry cubic(int k, int s = 1, int p = 0, int dil = 1) {
    return WindowGeometry{{k, k, k}, {s, s, s}, {dil, dil, dil}, {p, p, p}};
  }
  // Throws ShapeError unless kernel, stride, dilation >= 1 and padding >= 0.
  void validate() const;
  // floor((E + 2p - dil (k - 1) - 1) / s) + 1 along `dim`; throws ShapeError if the window does not
  // fit.
  index_t outputExtent(int dim, index_t input_extent) const;
  Extents3 outputExtents(const Extents3& input_extents) const;
  // The global input cells [lo, hi) that output cells [o0, o1) read along `dim` (may reach past the
  // volume).
  std::array<index_t, 2> inputWindow(int dim, index_t o0, index_t o1) const;
};

// Widths a block owning `input_block` needs to compute `output_block`; both in global indices.
HaloWidths haloWidthsForBlock(const WindowGeometry& g, const Box& input_block,
                              const Box& output_block);

// Widths that serve every block when input and output are both block-decomposed over `parts`: the
// maximum over all blocks of haloWidthsForBlock. This is what a HaloTensor allocates, so that every
// rank of a grid holds the same ghost widths.
HaloWidths haloWidthsForGrid(const WindowGeometry& g, const Extents3& input_extents,
                             const std::array<int, 3>& parts);

}  // namespace halo3d
