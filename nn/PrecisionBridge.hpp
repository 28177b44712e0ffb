#pragma once
// The one explicit fallback that lets every layer run in bf16 before it has native bf16 kernels:
// convert the bf16 cells a kernel reads into a float scratch laid out like the activation (same
// block, ghosts included where the kernel reads them), run the fp32 kernel, and round what it
// wrote back to bf16 once. A float result rounded once is what a native kernel that accumulates in
// float produces, so swapping a native kernel in changes at most the float summation order.
//
// Two granularities, both built on FloatStandIn:
//   - a box (WindowLayer: transposed convolution; every sliding-window layer with native kernels
//     off), so the halo overlap keeps its shape: the layer widens the window each piece of output
//     reads, after its ghosts arrived, and narrows the piece it computed;
//   - a whole pass of a layer (forwardInFloat / backwardInFloat: dense, and every other layer with
//     native kernels off; and the MSE loss): every input widened whole, the layer's own fp32 code
//     run on the stand-ins, its outputs narrowed on their owned cells.
// Layer::bridgesBf16 says which layers still use it with native kernels on.
// The scratch is transient (freed when the stand-in goes out of scope, at the end of the pass) and
// is an ordinary Kokkos allocation, so MemoryTracker counts it. A float activation passes through
// untouched: a stand-in of it is the activation itself, so fp32 runs convert and allocate nothing.

#include <optional>
#include <vector>

#include "halo3d/nn/Activation.hpp"

namespace halo3d::nn {

class Layer;
struct RunContext;

// Every cell a tensor of block `b` holds (owned and ghosts), in global coordinates.
Box heldBox(const TensorBlock& b);

// dst = float(src) on global box `box` clipped to what both hold (all samples and channels).
void widenBox(const TensorBf16& src, const Tensor& dst, const Box& box);
// dst = bf16(src) (round to nearest even) on global box `box` clipped to what both hold.
void narrowBox(const Tensor& src, const TensorBf16& dst, const Box& box);

// A float activation standing in for `a` during one pass (see the file comment).
class FloatStandIn {
 public:
  // For a bf16 `a`: a zeroed float copy of its block, whose cells in `fill` (clipped to the
  // allocation; an empty box: none) are a's, widened. For a float `a`: `a` itself.
  FloatStandIn(const Activation& a, const Box& fill);
  // Fills everything a holds (owned and ghosts).
  explicit FloatStandIn(const Activation& a) : FloatStandIn(a, heldBox(a.block())) {}

  bool bridged() const { return _original.isAllocated(); }
  // The float activation (a shallow copy of `a` when it holds float: views share their cells, so
  // writing into it writes into `a`).
  const Activation& operator*() const { return _float; }
  const Activation* operator->() const { return &_float; }
  Activation& get() { return _float; }
  // Copies the original's cells of `box` into the float copy again (after a halo exchange).
  void widen(const Box& box) const;
  // Rounds the float copy's cells of `box` into the original.
  void narrow(const Box& box) const;

 private:
  TensorBf16 _original;  // unallocated when `a` holds float
  Activation _float;
};

// Whether layers run their native bf16 kernels where they have one (the default), or the bridge
// for every pass: process-wide, for tests that compare a bf16 run with an emulation built on the
// fp32 kernels, and for benchmarks that compare a native kernel with the fallback.
void setNativeBf16Kernels(bool enabled);
bool nativeBf16Kernels();

// Whether any of these activations holds bf16.
bool anyBf16(const std::vector<const Activation*>& a);

// Runs `layer`'s fp32 forward on float stand-ins of `in` and `out`, and rounds out's owned cells.
void forwardInFloat(Layer& layer, RunContext& ctx, const std::vector<const Activation*>& in,
                    Activation& out);
// Runs `layer`'s fp32 backward on float stand-ins, and rounds the owned cells of every din.
void backwardInFloat(Layer& layer, RunContext& ctx, const std::vector<const Activation*>& in,
                     const Activation& out, const Activation& dout,
                     const std::vector<Activation*>& din);

// For callers outside the layers (data loaders, predictions, tests):
// The cells of `a` as float: a's own tensor when it holds float, else a widened copy (ghosts
// included).
Tensor floatCopyOf(const Activation& a);
// Stores src's cells of global box `box` into `dst` (rounded to bf16 when dst holds bf16); both
// must hold the box.
void storeBox(const Tensor& src, const Activation& dst, const Box& box);
// The same from bf16 cells (a bf16 data loader's batch): copied as they are into a bf16 `dst` (no
// float copy and no second rounding), widened into a float one.
void storeBox(const TensorBf16& src, const Activation& dst, const Box& box);

}  // namespace halo3d::nn
