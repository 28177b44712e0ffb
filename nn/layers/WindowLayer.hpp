#pragma once
// The distributed algorithm shared by sliding-window layers (convolution, transposed convolution,
// pooling):
//
// forward  1. start the halo exchange of x (all 26 neighbours, one round)
//          2. compute the outputs whose windows need no exchanged ghost (the interior)
//          3. finish the exchange
//          4. compute the boundary shell (up to six slabs)
// backward (data, scatter form) dx is laid out like x. The layer computes dx on the window of
//          its owned outputs: first the ghost cells (contributions owed to neighbours), then
//          starts the scatter-sum of those ghosts, computes its owned cells, and finishes the
//          scatter, which adds what the neighbours owe. The same kernels run on every piece;
//          only the boxes differ.
//
// With overlap off (RunContext::overlap = false) the exchange completes before any compute:
// benchmarks compare the two. Replicated inputs need no exchange at all.
//
// In bf16 the exchanges move bf16 (the activation's own storage). A subclass that has a native bf16
// kernel for a pass says so (nativeBf16Forward / nativeBf16BackwardData) and receives the bf16
// activations; otherwise the pass runs its fp32 kernel through the precision bridge
// (nn/PrecisionBridge.hpp) piece by piece: each piece's input window is widened after its ghosts
// arrived and the piece's result rounded to bf16 once, so the overlap keeps its shape.
//
// A subclass gives the geometry as two monotone maps per dimension: the output extent of an input
// extent, and the input cells [lo, hi) that a run of outputs [o0, o1) reads. Ghost widths, the
// split rule, the interior and the backward window all follow from those.

#include <array>
#include <memory>

#include "halo3d/comm/HaloExchange.hpp"
#include "halo3d/nn/Layer.hpp"

namespace halo3d::nn {

class WindowLayer : public Layer {
 public:
  explicit WindowLayer(std::string name) : Layer(std::move(name)) {}

  TensorSpec outputSpec(const std::vector<TensorSpec>& inputs) const override;
  // A split works while every block, input and output, is non-empty and at least as thick as the
  // ghosts it feeds its neighbours.
  bool acceptsSpatial(const std::vector<TensorSpec>& inputs, const GridShape& grid) const override;
  HaloWidths inputHalo(const std::vector<TensorSpec>& inputs, int i,
                       const GridShape& grid) const override;
  void setup(const ProcessGrid& grid, const std::vector<const Activation*>& in,
             const Activation& out) override;
  bool bridgesBf16() const override { return !nativeBf16Forward() || !nativeBf16BackwardData(); }

  // Ghost widths an input volume split into `parts` needs: the most any block's outputs read past
  // it.
  HaloWidths haloFor(const Extents3& input, const std::array<int, 3>& parts) const;
  // Input cells read by the outputs in `out` (may reach past the volume).
  Box inputWindow(const Box& out) const;
  // The outputs of `out` whose windows lie in `avail`.
  Box interiorOutputs(const Box& avail, const Box& out) const;

  // For the calibration (nn/plan/Calibration) alone: on a one-rank grid, with activations whose
  // blocks are a split rank's, run forward and backward-data in the pieces the overlap runs
  // (interior and shell), exchanging nothing, so that one process times what a split rank computes.
  void calibrateAsExchanging(bool on) { _as_exchanging = on; }

 protected:
  virtual index_t outputExtent(int dim, index_t input_extent) const = 0;
  virtual std::array<index_t, 2> inputRange(int dim, index_t o0, index_t o1) const = 0;
  virtual index_t outputChannels(index_t input_channels) const = 0;
  virtual void checkInputChannels(index_t channels) const {}
  // y on global output box `out` (owned by y); x's ghosts are valid where the window reads them.
  virtual void computeForward(const Activation& x, const Activation& y, const Box& out) = 0;
  // dx on global input box `in_box` from the outputs in `dy_box`.
  virtual void computeBackwardData(const Activation& dy, const Activation& dx, const Box& in_box,
                                   const Box& dy_box) = 0;
  // Whether computeForward / computeBackwardData take bf16 activations themselves (else they get
  // float stand-ins from the precision bridge).
  virtual bool nativeBf16Forward() const { return false; }
  virtual bool nativeBf16BackwardData() const { return false; }

  void forwardWithOverlap(RunContext& ctx, const Activation& x, const Activation& y);
  void backwardDataWithOverlap(RunContext& ctx, const Activation& dy, const Activation& dx);
  // Adds one round of the exchange in `dir` to the layer's halo traffic.
  void recordTraffic(RunContext& ctx, HaloDirection dir) const;

  // The exchange of the input's precision (at most one exists; none for Replicated inputs or an
  // unsplit grid).
  bool exchanges() const { return _exchange || _exchange_bf16 || _as_exchanging; }
  void startExchange(const Activation& a, HaloDirection dir);
  void progressExchange();
  void finishExchange();

  std::unique_ptr<HaloExchange<real>> _exchange;
  std::unique_ptr<HaloExchange<bf16>> _exchange_bf16;
  bool _as_exchanging = false;
};

// A WindowLayer whose output extents and input windows are those of a geometry object `_g`
// (WindowGeometry, kernels::ConvTranspose3dGeometry: outputExtent(dim, extent) and
// inputWindow(dim, o0, o1)).
template <class Geometry>
class GeometryWindowLayer : public WindowLayer {
 public:
  GeometryWindowLayer(std::string name, const Geometry& g) : WindowLayer(std::move(name)), _g(g) {}

 protected:
  index_t outputExtent(int dim, index_t input_extent) const override {
    return _g.outputExtent(dim, input_extent);
  }
  std::array<index_t, 2> inputRange(int dim, index_t o0, index_t o1) const override {
    return _g.inputWindow(dim, o0, o1);
  }

  Geometry _g;
};

}  // namespace halo3d::nn
