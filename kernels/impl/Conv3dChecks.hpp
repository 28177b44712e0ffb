#pragma once
// Shape checks of the three conv3d passes, shared by every implementation (optimized, team, generic
// and reference), so that a bad call fails the same way whichever code would have run it. Each
// check throws ShapeError at the kernel boundary, naming the tensors' labels, shapes and boxes.

#include <Kokkos_Core.hpp>

#include <array>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels::impl {

// Weights must be (O, I, kD, kH, kW) with O, I the channels of the output and input tensors.
template <class WeightView>
void requireConv3dWeights(const char* kernel, const WeightView& w, index_t out_channels,
                          index_t in_channels, const WindowGeometry& g) {
  requireWeightShape(kernel, "weights", w,
                     {out_channels, in_channels, g.kernel[0], g.kernel[1], g.kernel[2]},
                     "(O, I, kD, kH, kW)");
}

// The output volume of tensor `out` must be the window output of the volume of `in`.
template <class In, class Out>
void requireConv3dVolume(const char* kernel, const In& in, const Out& out,
                         const WindowGeometry& g) {
  requireOutputVolume(kernel, in, out, g.outputExtents(in.block().globalExtents()),
                      concat("the window ", g.kernel, " (stride ", g.stride, ", dilation ",
                             g.dilation, ", padding ", g.padding, ")"));
}

// The global input cells that the output cells `out_box` read (empty if out_box is empty),
// padding included: conv3d reads the zero ghosts past the volume as its padding.
inline Box inputWindowOf(const WindowGeometry& g, const Box& out_box) {
  if (out_box.empty()) return Box();
  Box::point_type lo, hi;
  for (int d = 0; d < 3; ++d) {
    const auto win = g.inputWindow(d, out_box.min(d), out_box.max(d));
    lo[d] = win[0];
    hi[d] = win[1];
  }
  return Box(lo, hi);
}

// Every check of the two passes that walk the output cells out_box of `out` (owned) and read their
// input window of `in`: forward (x, w, b, y) and backward-filter (x, dw, db, dy).
template <class In, class WeightView, class BiasView, class Out>
void checkOutputBoxPass(const char* k, const In& in, const WeightView& w, const char* bias_name,
                        const BiasView& b, const WindowGeometry& g, const Out& out,
                        const Box& out_box) {
  g.validate();
  requireSameSamples(k, in, out);
  requireConv3dWeights(k, w, out.block().channels(), in.block().channels(), g);
  requireBiasShape(k, bias_name, b, out.block().channels());
  requireConv3dVolume(k, in, out, g);
  requireOwned(k, out, out_box);
  requireAllocated(k, in, inputWindowOf(g, out_box), "the input window");
}

// Every check of conv3dForward(x, w, b, g, y, out_box).
template <class XT, class WeightView, class BiasView, class YT>
void checkForward(const XT& x, const WeightView& w, const BiasView& b, const WindowGeometry& g,
                  const YT& y, const Box& out_box) {
  checkOutputBoxPass("conv3dForward", x, w, "bias", b, g, y, out_box);
}

// Every check of conv3dBackwardData(dy, w, g, dx, dx_box, dy_box). dx_box may hold ghost cells of
// dx, but not cells past the volume: those ghosts are the zero padding and must stay zero.
template <class DyT, class WeightView, class DxT>
void checkBackwardData(const DyT& dy, const WeightView& w, const WindowGeometry& g, const DxT& dx,
                       const Box& dx_box, const Box& dy_box) {
  const char* k = "conv3dBackwardData";
  g.validate();
  requireSameSamples(k, dy, dx);
  requireConv3dWeights(k, w, dy.block().channels(), dx.block().channels(), g);
  requireConv3dVolume(k, dx, dy, g);
  requireInVolume(k, dx, dx_box, "the dx box");
  requireAllocated(k, dy, dy_box, "the dy box");
}

// Every check of conv3dBackwardFilter(x, dy, g, dw, db, out_box).
template <class XT, class DyT, class WeightView, class BiasView>
void checkBackwardFilter(const XT& x, const DyT& dy, const WindowGeometry& g, const WeightView& dw,
                         const BiasView& db, const Box& out_box) {
  checkOutputBoxPass("conv3dBackwardFilter", x, dw, "bias gradient", db, g, dy, out_box);
}

}  // namespace halo3d::kernels::impl
