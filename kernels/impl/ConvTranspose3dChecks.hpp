#pragma once
// Shape checks of the transposed-convolution passes, shared by the kernels and the reference, on
// top of TensorChecks.hpp.

#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/ConvTranspose3dGeometry.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels::impl {

// `input`'s volume maps to `output`'s volume through g, and both hold the same samples.
template <class In, class Out>
void requireTransposedShapes(const char* kernel, const ConvTranspose3dGeometry& g, const In& input,
                             const Out& output) {
  g.validate();
  requireSameSamples(kernel, input, output);
  requireOutputVolume(kernel, input, output, g.outputExtents(input.block().globalExtents()),
                      concat("a transposed convolution (kernel ", g.window.kernel, ", stride ",
                             g.window.stride, ", padding ", g.window.padding, ", dilation ",
                             g.window.dilation, ", output_padding ", g.output_padding, ")"));
}

// Weights (or their gradient, `name`) are (I, O, kD, kH, kW) for the input and output channels.
template <class Weights>
void requireTransposedWeights(const char* kernel, const char* name, const Weights& w,
                              index_t in_channels, index_t out_channels,
                              const ConvTranspose3dGeometry& g) {
  requireWeightShape(
      kernel, name, w,
      {in_channels, out_channels, g.window.kernel[0], g.window.kernel[1], g.window.kernel[2]},
      "(I, O, kD, kH, kW)");
}

// Every check of forward and backward-filter, whose `out_box` of output cells of y (or dy) reads
// x through g: `w_name`, `b_name` name the weights and the bias or their gradients.
template <class In, class Out, class Weights, class Bias>
void requireTransposedWindow(const char* kernel, const ConvTranspose3dGeometry& g, const In& x,
                             const Out& y, const char* w_name, const Weights& w, const char* b_name,
                             const Bias& b, const Box& out_box) {
  requireTransposedShapes(kernel, g, x, y);
  requireTransposedWeights(kernel, w_name, w, x.block().channels(), y.block().channels(), g);
  requireBiasShape(kernel, b_name, b, y.block().channels());
  requireOwned(kernel, y, out_box);
  requireClippedWindow(kernel, g, x, out_box);
}

// Every check of backward-data.
template <class In, class Out, class Weights>
void requireTransposedBackwardData(const char* kernel, const ConvTranspose3dGeometry& g,
                                   const In& dx, const Out& dy, const Weights& w, const Box& dx_box,
                                   const Box& dy_box) {
  requireTransposedShapes(kernel, g, dx, dy);
  requireTransposedWeights(kernel, "weights", w, dx.block().channels(), dy.block().channels(), g);
  requireInVolume(kernel, dx, dx_box, "input-gradient box");
  requireInVolume(kernel, dy, dy_box, "output-gradient box dy_box");
}

}  // namespace halo3d::kernels::impl
