#pragma once
// Shape checks of the pooling kernels, shared by the kernels and the reference, on top of
// TensorChecks.hpp.

#include "halo3d/core/Error.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/Pool3d.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels::impl {

// A valid pooling window, the same samples and channels, and `output`'s volume the window output
// of `input`'s.
template <class In, class Out>
void requirePoolShapes(const char* kernel, const WindowGeometry& g, const In& input,
                       const Out& output) {
  validatePool3d(g);
  requireSameSamples(kernel, input, output);
  // The messages only on failure (see TensorChecks.hpp).
  if (output.block().channels() != input.block().channels())
    requireChannels(kernel, output, input.block().channels(),
                    concat("'", input.label(), "'").c_str());
  const Extents3 expected = g.outputExtents(input.block().globalExtents());
  if (!(output.block().globalExtents() == expected))
    requireOutputVolume(kernel, input, output, expected,
                        concat("pooling (kernel ", g.kernel, ", stride ", g.stride, ", padding ",
                               g.padding, ", dilation ", g.dilation, ")"));
}

// argmax is laid out like `output` and holds `box`.
template <class Argmax, class Out>
void requireArgmax(const char* kernel, const Argmax& argmax, const Out& output, const Box& box) {
  requireSameShape(kernel, argmax, output);
  requireAllocated(kernel, argmax, box, "argmax box");
}

}  // namespace halo3d::kernels::impl
