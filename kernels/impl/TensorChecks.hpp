#pragma once
// The shape and box checks of the kernels, each written once and thrown at the kernel boundary as a
// ShapeError naming the kernel, the tensors' labels and shapes and the boxes; and the global ->
// local index shift that every kernel applies.
//
// - Boxes: requireOwned (an output box), requireAllocated (cells read or written), requireInVolume
//   (a pull-form gradient box: allocated and inside the global volume), requireClippedWindow (the
//   input cells a window reads, clipped to the volume: pooling and transposed convolution).
// - Tensor pairs: requireSameSamples, requireSameShape, requireChannels, requireCellwise (the
//   common checks of a cell-by-cell kernel), requireLabelsFor (labels (N, 1, D, H, W) of logits).
// - Parameters: requireExtent, requireWeightShape, requireBiasShape.
// - Windows: requireOutputVolume (the output volume a geometry gives).
//
// A check that passes builds no message: the messages (describe(), concat) cost more than the
// kernels of small tensors.

#include <algorithm>
#include <array>
#include <string>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/HaloTensor.hpp"

namespace halo3d::kernels::impl {

// "'label' of global shape (N, C, D, H, W) holding samples [..) and cells [..) with halo ..": how
// errors name a tensor.
template <class Tensor>
std::string describe(const Tensor& t) {
  const TensorBlock& b = t.block();
  return concat("'", t.label(), "' of global shape ", b.globalShape(), " holding samples [",
                b.sampleBegin(), ", ", b.sampleEnd(), ") and cells ", b.owned(), " with halo ",
                b.halo());
}

// "'label' of shape (e0, e1, ...)": how errors name a parameter View.
template <class View>
std::string describeView(const View& v) {
  std::array<index_t, View::rank> e{};
  for (unsigned k = 0; k < View::rank; ++k)
    e[k] = index_t(v.extent(k));
  return concat("'", v.label(), "' of shape ", e);
}

// Local index = global index + shift, per spatial dimension (LayoutRight allocation with ghosts).
template <class Tensor>
std::array<index_t, 3> localShift(const Tensor& t) {
  const TensorBlock& b = t.block();
  return {b.halo().lo[0] - b.owned().min(0), b.halo().lo[1] - b.owned().min(1),
          b.halo().lo[2] - b.owned().min(2)};
}

// Global cells held by the allocation (owned + ghosts).
template <class Tensor>
Box allocatedBox(const Tensor& t) {
  const TensorBlock& b = t.block();
  return b.owned().grown(b.halo().loExtents(), b.halo().hiExtents());
}

// `box` must lie in the owned cells of output tensor `t`.
template <class Tensor>
void requireOwned(const char* kernel, const Tensor& t, const Box& box) {
  if (!t.block().owned().contains(box))
    throw ShapeError(
        concat(kernel, ": output box ", box, " is not inside the owned cells of ", describe(t)));
}

// `box` (cells to be read or written) must lie in the allocation of `t`.
template <class Tensor>
void requireAllocated(const char* kernel, const Tensor& t, const Box& box, const char* why) {
  if (!allocatedBox(t).contains(box))
    throw ShapeError(
        concat(kernel, ": ", why, " ", box, " reaches past the ghost region of ", describe(t),
               " (the ghost region is too thin for this kernel, or the box is wrong)"));
}

// `box` lies inside the global volume of `t` and in its allocation: a box of a pull-form gradient,
// which may cover ghost cells that have a neighbour but never the zero padding past the volume.
template <class Tensor>
void requireInVolume(const char* kernel, const Tensor& t, const Box& box, const char* what) {
  if (!Box::fromExtents(t.block().globalExtents()).contains(box))
    throw ShapeError(concat(kernel, ": ", what, " ", box, " reaches past the volume ",
                            t.block().globalExtents(), " of ", describe(t)));
  requireAllocated(kernel, t, box, what);
}

// The input cells that output cells `out_box` read through geometry `g` (anything with
// inputWindow(dim, o0, o1)), clipped to the input volume, must be allocated in x. For kernels that
// never read past the volume (pooling, transposed convolution): a block needs ghosts only toward
// its neighbours.
template <class Geometry, class Tensor>
void requireClippedWindow(const char* kernel, const Geometry& g, const Tensor& x,
                          const Box& out_box) {
  if (out_box.empty()) return;
  const Extents3 e = x.block().globalExtents();
  Extents3 lo, hi;
  for (int d = 0; d < 3; ++d) {
    const auto win = g.inputWindow(d, out_box.min(d), out_box.max(d));
    lo[d] = std::max<index_t>(win[0], 0);
    hi[d] = std::max(lo[d], std::min(win[1], e[d]));
  }
  const Box read(lo, hi);
  if (!allocatedBox(x).contains(read))
    requireAllocated(kernel, x, read,
                     concat("input cells read by output box ", out_box, ":").c_str());
}

// Both tensors hold the same samples.
template <class A, class B>
void requireSameSamples(const char* kernel, const A& a, const B& b) {
  if (a.block().sampleBegin() != b.block().sampleBegin() ||
      a.block().sampleEnd() != b.block().sampleEnd())
    throw ShapeError(
        concat(kernel, ": sample mismatch between ", describe(a), " and ", describe(b)));
}

// Tensors paired cell by cell: same global (N, C, D, H, W) and the same samples.
template <class A, class B>
void requireSameShape(const char* kernel, const A& a, const B& b) {
  if (!(a.block().globalShape() == b.block().globalShape()))
    throw ShapeError(
        concat(kernel, ": global shapes differ between ", describe(a), " and ", describe(b)));
  requireSameSamples(kernel, a, b);
}

// Tensor `t` has `channels` channels (`what` says where the number comes from).
template <class Tensor>
void requireChannels(const char* kernel, const Tensor& t, index_t channels, const char* what) {
  if (t.block().channels() != channels)
    throw ShapeError(concat(kernel, ": ", describe(t), " has ", t.block().channels(),
                            " channels but ", what, " has ", channels));
}

// The common checks of a cell-by-cell kernel: `box` is owned by the output and held by every input.
template <class Out, class... In>
void requireCellwise(const char* kernel, const Out& out, const Box& box, const In&... in) {
  requireOwned(kernel, out, box);
  (requireSameShape(kernel, in, out), ...);
  (requireAllocated(kernel, in, box, "input box"), ...);
}

// Labels of `logits`: global shape (N, 1, D, H, W) of the logits' N, D, H, W, the same samples,
// `box` allocated.
template <class Logits, class Labels>
void requireLabelsFor(const char* kernel, const Logits& logits, const Labels& labels,
                      const Box& box) {
  const Shape5& g = logits.block().globalShape();
  const Shape5 expected{g[0], 1, g[2], g[3], g[4]};
  if (!(labels.block().globalShape() == expected))
    throw ShapeError(concat(kernel, ": labels ", describe(labels), " should have global shape ",
                            expected, " to match logits ", describe(logits)));
  requireSameSamples(kernel, labels, logits);
  requireAllocated(kernel, labels, box, "box");
}

// View `v` has extent `expected` along `dim` (`what` says where the number comes from).
template <class View>
void requireExtent(const char* kernel, const View& v, int dim, index_t expected, const char* what) {
  if (index_t(v.extent(dim)) != expected)
    throw ShapeError(concat(kernel, ": View '", v.label(), "' has extent ", v.extent(dim),
                            " along dimension ", dim, " but ", what, " is ", expected));
}

// A rank-5 weight View (`name`, e.g. "weights") has the extents `expected`, laid out as `layout`
// (e.g. "(O, I, kD, kH, kW)"), which come from the tensors' channels and the kernel.
template <class WeightView>
void requireWeightShape(const char* kernel, const char* name, const WeightView& w,
                        const std::array<index_t, 5>& expected, const char* layout) {
  bool ok = true;
  for (int k = 0; k < 5; ++k)
    ok = ok && index_t(w.extent(k)) == expected[k];
  if (!ok)
    throw ShapeError(concat(kernel, ": ", name, " ", describeView(w), " do not match the expected ",
                            layout, " = ", expected,
                            " (from the tensors' channels and the kernel)"));
}

// A bias (`name`) has extent 0 (no bias) or one entry per output channel.
template <class BiasView>
void requireBiasShape(const char* kernel, const char* name, const BiasView& b,
                      index_t out_channels) {
  if (b.extent(0) != 0 && index_t(b.extent(0)) != out_channels)
    throw ShapeError(concat(kernel, ": ", name, " '", b.label(), "' has extent ", b.extent(0),
                            " but must have extent 0 (no bias) or ", out_channels,
                            " (output channels)"));
}

// The volume of `out` is `expected`, the volume that `window` (e.g. "pooling (kernel ..)") gives
// for the volume of `in`.
template <class In, class Out>
void requireOutputVolume(const char* kernel, const In& in, const Out& out, const Extents3& expected,
                         const std::string& window) {
  if (!(out.block().globalExtents() == expected))
    throw ShapeError(concat(kernel, ": ", describe(out), " has volume ",
                            out.block().globalExtents(), " but ", window, " of the volume ",
                            in.block().globalExtents(), " of ", describe(in), " gives ", expected));
}

}  // namespace halo3d::kernels::impl
