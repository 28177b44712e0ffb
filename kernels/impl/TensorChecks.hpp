#pragma once
// Shape checks shared by the kernels, thrown at the kernel boundary with the tensors' labels and
// shapes, and the global -> local index shift that every kernel applies.

#include <array>
#include <string>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/HaloTensor.hpp"

namespace halo3d::kernels::impl {

// "'label' (N,C,D,H,W) owned [..) halo lo(..) hi(..)": how errors name a tensor.
template <class Tensor>
std::string describe(const Tensor& t) {
  const TensorBlock& b = t.block();
  return concat("'", t.label(), "' of global shape ", b.globalShape(), " holding samples [",
                b.sampleBegin(), ", ", b.sampleEnd(), ") and cells ", b.owned(), " with halo ",
                b.halo());
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
  require<ShapeError>(t.block().owned().contains(box), kernel, ": output box ", box,
                      " is not inside the owned cells of ", describe(t));
}

// `box` (cells to be read or written) must lie in the allocation of `t`.
template <class Tensor>
void requireAllocated(const char* kernel, const Tensor& t, const Box& box, const char* why) {
  require<ShapeError>(allocatedBox(t).contains(box), kernel, ": ", why, " ", box,
                      " reaches past the ghost region of ", describe(t),
                      " (the ghost region is too thin for this kernel, or the box is wrong)");
}

// Both tensors hold the same samples.
template <class A, class B>
void requireSameSamples(const char* kernel, const A& a, const B& b) {
  require<ShapeError>(a.block().sampleBegin() == b.block().sampleBegin() &&
                          a.block().sampleEnd() == b.block().sampleEnd(),
                      kernel, ": sample mismatch between ", describe(a), " and ", describe(b));
}

// Tensor `t` has `channels` channels (`what` says where the number comes from).
template <class Tensor>
void requireChannels(const char* kernel, const Tensor& t, index_t channels, const char* what) {
  require<ShapeError>(t.block().channels() == channels, kernel, ": ", describe(t), " has ",
                      t.block().channels(), " channels but ", what, " has ", channels);
}

}  // namespace halo3d::kernels::impl
