#include "halo3d/core/HaloWidths.hpp"

#include <algorithm>

#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d {

HaloWidths max(const HaloWidths& a, const HaloWidths& b) {
  HaloWidths m;
  for (int d = 0; d < 3; ++d) {
    m.lo[d] = std::max(a.lo[d], b.lo[d]);
    m.hi[d] = std::max(a.hi[d], b.hi[d]);
  }
  return m;
}

std::ostream& operator<<(std::ostream& os, const HaloWidths& h) {
  return os << "lo(" << h.lo[0] << ',' << h.lo[1] << ',' << h.lo[2] << ") hi(" << h.hi[0] << ','
            << h.hi[1] << ',' << h.hi[2] << ')';
}

void WindowGeometry::validate() const {
  for (int d = 0; d < 3; ++d) {
    require<ShapeError>(kernel[d] >= 1 && stride[d] >= 1 && dilation[d] >= 1 && padding[d] >= 0,
                        "window geometry along ", dimName(d), ": kernel ", kernel[d], ", stride ",
                        stride[d], ", dilation ", dilation[d], ", padding ", padding[d],
                        " (need kernel, stride, dilation >= 1 and padding >= 0)");
  }
}

index_t WindowGeometry::outputExtent(int dim, index_t input_extent) const {
  validate();
  require<ShapeError>(input_extent > 0, "window input extent along ", dimName(dim),
                      " must be positive, got ", input_extent);
  const index_t span = index_t(dilation[dim]) * (kernel[dim] - 1) + 1;
  const index_t padded = input_extent + 2 * index_t(padding[dim]);
  require<ShapeError>(padded >= span, "window of kernel ", kernel[dim], " (dilation ",
                      dilation[dim], ") does not fit input extent ", input_extent, " with padding ",
                      padding[dim], " along ", dimName(dim));
  return (padded - span) / stride[dim] + 1;
}

Extents3 WindowGeometry::outputExtents(const Extents3& input_extents) const {
  return {outputExtent(0, input_extents[0]), outputExtent(1, input_extents[1]),
          outputExtent(2, input_extents[2])};
}

std::array<index_t, 2> WindowGeometry::inputWindow(int dim, index_t o0, index_t o1) const {
  const index_t s = stride[dim], p = padding[dim];
  const index_t span = index_t(dilation[dim]) * (kernel[dim] - 1) + 1;
  return {o0 * s - p, (o1 - 1) * s - p + span};
}

namespace {

// The 1D rule: widths {lo, hi} that input block [i0, i1) needs to compute output block [o0, o1)
// along dim.
std::array<int, 2> widthsAlong(const WindowGeometry& g, int dim, index_t i0, index_t i1, index_t o0,
                               index_t o1) {
  if (o1 <= o0) return {0, 0};
  const auto window = g.inputWindow(dim, o0, o1);
  // The window must touch the owned block: a block that reads only other blocks' cells needs a
  // redistribution, not a halo.
  require<ShapeError>(window[0] < i1 && window[1] > i0, "output cells [", o0, ", ", o1, ") along ",
                      dimName(dim), " read input window [", window[0], ", ", window[1],
                      "), disjoint from the owned input cells [", i0, ", ", i1, ")");
  return {int(std::max<index_t>(0, i0 - window[0])), int(std::max<index_t>(0, window[1] - i1))};
}

}  // namespace

HaloWidths haloWidthsForBlock(const WindowGeometry& g, const Box& input_block,
                              const Box& output_block) {
  HaloWidths h;
  for (int d = 0; d < 3; ++d) {
    const auto w = widthsAlong(g, d, input_block.min(d), input_block.max(d), output_block.min(d),
                               output_block.max(d));
    h.lo[d] = w[0];
    h.hi[d] = w[1];
  }
  return h;
}

HaloWidths haloWidthsForGrid(const WindowGeometry& g, const Extents3& input_extents,
                             const std::array<int, 3>& parts) {
  const Extents3 out = g.outputExtents(input_extents);
  HaloWidths widths;
  for (int d = 0; d < 3; ++d) {
    checkDecomposable(dimName(d), input_extents[d], parts[d]);
    require<ShapeError>(out[d] >= parts[d], "window output extent ", out[d], " along ", dimName(d),
                        " cannot be split over ", parts[d], " blocks");
    for (int i = 0; i < parts[d]; ++i) {
      const index_t i0 = blockOffset(input_extents[d], parts[d], i);
      const index_t o0 = blockOffset(out[d], parts[d], i);
      const auto w = widthsAlong(g, d, i0, i0 + blockExtent(input_extents[d], parts[d], i), o0,
                                 o0 + blockExtent(out[d], parts[d], i));
      widths.lo[d] = std::max(widths.lo[d], w[0]);
      widths.hi[d] = std::max(widths.hi[d], w[1]);
    }
  }
  return widths;
}

}  // namespace halo3d
