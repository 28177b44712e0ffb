// Transposed-convolution geometry, and the explicit instantiations of its kernels.
#include "halo3d/kernels/ConvTranspose3d.hpp"

#include <algorithm>

#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dImpl.hpp"
#include "halo3d/kernels/impl/IndexMath.hpp"

namespace halo3d::kernels {

void ConvTranspose3dGeometry::validate() const {
  window.validate();
  for (int d = 0; d < 3; ++d)
    require<ShapeError>(output_padding[d] >= 0 &&
                            output_padding[d] < std::max(window.stride[d], window.dilation[d]),
                        "transposed convolution along ", dimName(d), ": output_padding ",
                        output_padding[d], " must be >= 0 and smaller than the stride ",
                        window.stride[d], " or the dilation ", window.dilation[d]);
}

index_t ConvTranspose3dGeometry::outputExtent(int dim, index_t input_extent) const {
  validate();
  require<ShapeError>(input_extent > 0, "transposed convolution input extent along ", dimName(dim),
                      " must be positive, got ", input_extent);
  const index_t s = window.stride[dim], p = window.padding[dim];
  const index_t span = index_t(window.dilation[dim]) * (window.kernel[dim] - 1) + 1;
  const index_t extent = (input_extent - 1) * s - 2 * p + span + output_padding[dim];
  require<ShapeError>(extent >= 1, "transposed convolution along ", dimName(dim),
                      " of input extent ", input_extent, " (kernel ", window.kernel[dim],
                      ", stride ", s, ", padding ", p, ", dilation ", window.dilation[dim],
                      ", output_padding ", output_padding[dim], ") gives output extent ", extent);
  return extent;
}

namespace {

// The sizes filterGradHost and gatherHost allocate, for scalar type T.
template <class T>
std::size_t hostWorkspace(const WindowGeometry& w, index_t samples, index_t in_channels,
                          index_t out_channels, const Extents3& out) {
  using Blocking = impl::HostBlocking<T>;
  const index_t taps = index_t(w.kernel[0]) * w.kernel[1] * w.kernel[2];
  const index_t qpad = Blocking::paddedChannels(out_channels);
  const index_t grad_size = taps * in_channels * qpad + qpad;
  const index_t chunks =
      impl::filterChunks(samples * out[0] * out[1], std::size_t(grad_size) * sizeof(T));
  const std::size_t filter = std::size_t(chunks) * std::size_t(grad_size + out[2] * qpad);
  const std::size_t packed =
      std::size_t(taps) *
      std::size_t(
          std::max(in_channels * qpad, out_channels * Blocking::paddedChannels(in_channels)));
  return std::max(filter, packed) * sizeof(T);
}

}  // namespace

std::size_t ConvTranspose3dGeometry::hostWorkspaceBytes(index_t samples, index_t in_channels,
                                                        index_t out_channels,
                                                        const Extents3& out_extents,
                                                        std::size_t element_bytes) const {
  return element_bytes > sizeof(float)
             ? hostWorkspace<double>(window, samples, in_channels, out_channels, out_extents)
             : hostWorkspace<float>(window, samples, in_channels, out_channels, out_extents);
}

Extents3 ConvTranspose3dGeometry::outputExtents(const Extents3& input_extents) const {
  return {outputExtent(0, input_extents[0]), outputExtent(1, input_extents[1]),
          outputExtent(2, input_extents[2])};
}

std::array<index_t, 2> ConvTranspose3dGeometry::inputWindow(int dim, index_t o0, index_t o1) const {
  const index_t s = window.stride[dim], p = window.padding[dim];
  const index_t reach = index_t(window.dilation[dim]) * (window.kernel[dim] - 1);
  const index_t lo = impl::ceilDiv(o0 + p - reach, s);
  return {lo, std::max(lo, impl::floorDiv(o1 - 1 + p, s) + 1)};
}

std::array<index_t, 2> ConvTranspose3dGeometry::outputWindow(int dim, index_t i0,
                                                             index_t i1) const {
  const index_t s = window.stride[dim], p = window.padding[dim];
  const index_t span = index_t(window.dilation[dim]) * (window.kernel[dim] - 1) + 1;
  return {i0 * s - p, (i1 - 1) * s - p + span};
}

HaloWidths convTranspose3dHaloWidths(const ConvTranspose3dGeometry& g, const Box& input_block,
                                     const Box& output_block, const Extents3& input_extents) {
  HaloWidths h;
  if (output_block.empty()) return h;
  for (int d = 0; d < 3; ++d) {
    const auto win = g.inputWindow(d, output_block.min(d), output_block.max(d));
    const index_t lo = std::max<index_t>(win[0], 0), hi = std::min(win[1], input_extents[d]);
    if (hi <= lo) continue;
    h.lo[d] = int(std::max<index_t>(0, input_block.min(d) - lo));
    h.hi[d] = int(std::max<index_t>(0, hi - input_block.max(d)));
  }
  return h;
}

HaloWidths convTranspose3dHaloWidthsForGrid(const ConvTranspose3dGeometry& g,
                                            const Extents3& input_extents,
                                            const std::array<int, 3>& parts) {
  const Extents3 out = g.outputExtents(input_extents);
  HaloWidths widths;
  for (int d = 0; d < 3; ++d) {
    checkDecomposable(dimName(d), input_extents[d], parts[d]);
    checkDecomposable(dimName(d), out[d], parts[d]);
  }
  for (int bd = 0; bd < parts[0]; ++bd)
    for (int bh = 0; bh < parts[1]; ++bh)
      for (int bw = 0; bw < parts[2]; ++bw) {
        const std::array<int, 3> coords{bd, bh, bw};
        widths =
            max(widths, convTranspose3dHaloWidths(g, blockBox(input_extents, parts, coords),
                                                  blockBox(out, parts, coords), input_extents));
      }
  return widths;
}

HALO3D_CONV_TRANSPOSE3D_INSTANTIATE(, float, Kokkos::DefaultExecutionSpace)
HALO3D_CONV_TRANSPOSE3D_INSTANTIATE(, double, Kokkos::DefaultExecutionSpace)

}  // namespace halo3d::kernels
