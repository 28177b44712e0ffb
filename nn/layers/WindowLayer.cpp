#include "halo3d/nn/layers/WindowLayer.hpp"

#include <algorithm>
#include <optional>

#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/nn/PrecisionBridge.hpp"
#include "halo3d/nn/layers/Boxes.hpp"

namespace halo3d::nn {

namespace {
// The computation that overlaps a halo round runs in D slabs, with MPI progress between them (see
// HaloExchange::progress): up to kOverlapPieces, enough for rendezvous-size transfers to move
// early, each at least kMinPlanesPerPiece planes thick, because thinner slabs cost more in tile
// edges and launches than they hide (bench_conv_overlap, 16^3 x 16 channels over 2 ranks: 4
// slabs of 4 planes made the layer ~9% slower, 2 slabs of 8 did not).
constexpr index_t kOverlapPieces = 4;
constexpr index_t kMinPlanesPerPiece = 8;

std::vector<Box> overlapPieces(const Box& box) {
  return splitAlongD(
      box, int(std::clamp<index_t>(box.extent(0) / kMinPlanesPerPiece, 1, kOverlapPieces)));
}
}  // namespace

TensorSpec WindowLayer::outputSpec(const std::vector<TensorSpec>& inputs) const {
  require<ShapeError>(inputs.size() == 1, name(), ": expects one input, got ", inputs.size());
  const TensorSpec& x = inputs[0];
  checkInputChannels(x.shape[1]);
  Extents3 out;
  try {
    for (int d = 0; d < 3; ++d)
      out[d] = outputExtent(d, x.shape[2 + d]);
  } catch (const ShapeError& e) {
    throw ShapeError(concat(name(), ": input volume ", x.volume(), ": ", e.what()));
  }
  TensorSpec y = x;
  y.shape = {x.shape[0], outputChannels(x.shape[1]), out[0], out[1], out[2]};
  return y;
}

HaloWidths WindowLayer::haloFor(const Extents3& input, const std::array<int, 3>& parts) const {
  HaloWidths h;
  for (int d = 0; d < 3; ++d) {
    const index_t out = outputExtent(d, input[d]);
    checkDecomposable(dimName(d), input[d], parts[d]);
    checkDecomposable(dimName(d), out, parts[d]);
    for (int i = 0; i < parts[d]; ++i) {
      const index_t i0 = blockOffset(input[d], parts[d], i),
                    i1 = i0 + blockExtent(input[d], parts[d], i);
      const index_t o0 = blockOffset(out, parts[d], i), o1 = o0 + blockExtent(out, parts[d], i);
      const auto r = inputRange(d, o0, o1);
      require<ShapeError>(r[0] < i1 && r[1] > i0, name(), ": outputs [", o0, ", ", o1, ") along ",
                          dimName(d), " read inputs [", r[0], ", ", r[1],
                          "), disjoint from the block's own [", i0, ", ", i1, ")");
      h.lo[d] = std::max(h.lo[d], int(std::max<index_t>(0, i0 - r[0])));
      h.hi[d] = std::max(h.hi[d], int(std::max<index_t>(0, r[1] - i1)));
    }
  }
  return h;
}

bool WindowLayer::acceptsSpatial(const std::vector<TensorSpec>& inputs,
                                 const GridShape& grid) const {
  const Extents3 in = inputs[0].volume();
  const std::array<int, 3> parts = grid.spatial();
  try {
    const HaloWidths h = haloFor(in, parts);
    for (int d = 0; d < 3; ++d)
      if (parts[d] > 1 && in[d] / parts[d] < std::max(h.lo[d], h.hi[d])) return false;
  } catch (const ShapeError&) {
    return false;
  }
  return true;
}

HaloWidths WindowLayer::inputHalo(const std::vector<TensorSpec>& inputs, int,
                                  const GridShape& grid) const {
  return haloFor(inputs[0].volume(), grid.spatial());
}

Box WindowLayer::inputWindow(const Box& out) const {
  Extents3 lo, hi;
  for (int d = 0; d < 3; ++d) {
    const auto r = inputRange(d, out.min(d), out.max(d));
    lo[d] = r[0];
    hi[d] = std::max(r[0], r[1]);
  }
  return Box(lo, hi);
}

Box WindowLayer::interiorOutputs(const Box& avail, const Box& out) const {
  // inputRange is monotone in the output cell: the interior along d is a contiguous run, found by
  // scanning from both ends (blocks are small compared to the work of one output plane).
  Extents3 lo, hi;
  for (int d = 0; d < 3; ++d) {
    index_t a = out.min(d), b = out.max(d);
    const auto inside = [&](index_t o) {
      const auto r = inputRange(d, o, o + 1);
      return r[0] >= avail.min(d) && r[1] <= avail.max(d);
    };
    while (a < b && !inside(a))
      ++a;
    while (b > a && !inside(b - 1))
      --b;
    lo[d] = a;
    hi[d] = b;
  }
  return Box(lo, hi);
}

void WindowLayer::setup(const ProcessGrid& grid, const std::vector<const Activation*>& in,
                        const Activation&) {
  _exchange.reset();
  _exchange_bf16.reset();
  if (in[0]->spec.dist != Distribution::Spatial || grid.shape().spatialSize() == 1) return;
  if (in[0]->isBf16())
    _exchange_bf16 = std::make_unique<HaloExchange<bf16>>(grid, in[0]->block());
  else
    _exchange = std::make_unique<HaloExchange<real>>(grid, in[0]->block());
}

void WindowLayer::recordTraffic(RunContext& ctx, HaloDirection dir) const {
  if (!ctx.timers || !(_exchange || _exchange_bf16)) return;
  if (_exchange_bf16)
    ctx.timers->addTraffic(name(), double(_exchange_bf16->sentBytes(dir)),
                           double(_exchange_bf16->sentMessages(dir)));
  else
    ctx.timers->addTraffic(name(), double(_exchange->sentBytes(dir)),
                           double(_exchange->sentMessages(dir)));
}

void WindowLayer::startExchange(const Activation& a, HaloDirection dir) {
  if (_exchange_bf16)
    _exchange_bf16->start(a.bf16Tensor(), dir);
  else if (_exchange)
    _exchange->start(a.floatTensor(), dir);
}

void WindowLayer::progressExchange() {
  if (_exchange_bf16)
    _exchange_bf16->progress();
  else if (_exchange)
    _exchange->progress();
}

void WindowLayer::finishExchange() {
  if (_exchange_bf16)
    _exchange_bf16->finish();
  else if (_exchange)
    _exchange->finish();
}

void WindowLayer::forwardWithOverlap(RunContext& ctx, const Activation& x, const Activation& y) {
  const Box& out = y.owned();
  // Without a native bf16 kernel, each piece runs on float stand-ins (nothing to convert in fp32).
  const bool bridge = (x.isBf16() || y.isBf16()) && !(nativeBf16Forward() && nativeBf16Kernels());
  std::optional<FloatStandIn> xf, yf;
  if (bridge) {
    xf.emplace(x, Box());
    yf.emplace(y, Box());
  }
  const Box held = heldBox(x.block());
  const auto compute = [&](const Box& box) {
    if (!bridge) return computeForward(x, y, box);
    xf->widen(intersect(inputWindow(box), held));
    computeForward(**xf, **yf, box);
    yf->narrow(box);
  };
  if (!exchanges()) {
    ScopedTimer t(ctx.timers, name(), Phase::Compute);
    compute(out);
    return;
  }
  if (!ctx.overlap) {
    {
      ScopedTimer t(ctx.timers, name(), Phase::HaloWait);
      startExchange(x, HaloDirection::Gather);
      finishExchange();
      recordTraffic(ctx, HaloDirection::Gather);
    }
    ScopedTimer t(ctx.timers, name(), Phase::Compute);
    compute(out);
    fence("window layer forward done");
    return;
  }
  {
    // Posting (and, off the direct path, packing) is exchange time too.
    ScopedTimer t(ctx.timers, name(), Phase::HaloWait);
    startExchange(x, HaloDirection::Gather);
    recordTraffic(ctx, HaloDirection::Gather);
  }
  const Box interior =
      narrowAlongW(out, interiorOutputs(validWithoutExchange(x.block()), out), kRowVectorCells);
  {
    ScopedTimer t(ctx.timers, name(), Phase::Compute);
    for (const Box& piece : overlapPieces(interior)) {
      compute(piece);
      progressExchange();
    }
    fence("interior outputs done");
  }
  {
    ScopedTimer t(ctx.timers, name(), Phase::HaloWait);
    finishExchange();
  }
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  for (const Box& slab : shellSlabs(out, interior))
    compute(slab);
  fence("boundary shell done");
}

void WindowLayer::backwardDataWithOverlap(RunContext& ctx, const Activation& dy,
                                          const Activation& dx) {
  const TensorBlock& xb = dx.block();
  const Box volume = Box::fromExtents(xb.globalExtents());
  const Box owned = xb.owned();
  const Box& dy_box = dy.owned();
  // Without a native bf16 kernel, each piece runs on float stand-ins; every piece reads dy on the
  // owned outputs, widened once.
  const bool bridge =
      (dy.isBf16() || dx.isBf16()) && !(nativeBf16BackwardData() && nativeBf16Kernels());
  std::optional<FloatStandIn> dyf, dxf;
  if (bridge) {
    dyf.emplace(dy, dy_box);
    dxf.emplace(dx, Box());
  }
  const auto compute = [&](const Box& box) {
    if (!bridge) return computeBackwardData(dy, dx, box, dy_box);
    computeBackwardData(**dyf, **dxf, box, dy_box);
    dxf->narrow(box);
  };
  // Every owned cell is assigned (zero where no output reads it); ghost cells only where owned
  // outputs read.
  const Box region = hull(owned, intersect(inputWindow(dy_box), volume));
  if (!exchanges()) {
    ScopedTimer t(ctx.timers, name(), Phase::Compute);
    compute(region);
    fence("window layer backward done");
    return;
  }
  // The ghost cells first (they are sent), with the owned cells of W strips as wide as a vector;
  // the core of the owned block overlaps the scatter.
  const Box core = narrowAlongW(region, owned, kRowVectorCells);
  {
    ScopedTimer t(ctx.timers, name(), Phase::Compute);
    for (const Box& slab : shellSlabs(region, core))
      compute(slab);
    if (!ctx.overlap) compute(core);
    fence("ghost contributions ready to scatter");
  }
  {
    ScopedTimer t(ctx.timers, name(), Phase::HaloWait);
    startExchange(dx, HaloDirection::ScatterSum);
    recordTraffic(ctx, HaloDirection::ScatterSum);
  }
  if (ctx.overlap) {
    ScopedTimer t(ctx.timers, name(), Phase::Compute);
    for (const Box& piece : overlapPieces(core)) {
      compute(piece);
      progressExchange();
    }
    fence("owned input gradient done");
  }
  ScopedTimer t(ctx.timers, name(), Phase::HaloWait);
  finishExchange();
}

}  // namespace halo3d::nn
