#include "halo3d/nn/plan/Calibration.hpp"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/Elementwise.hpp"
#include "halo3d/nn/Init.hpp"
#include "halo3d/nn/Layer.hpp"
#include "halo3d/nn/Loss.hpp"
#include "halo3d/nn/PrecisionBridge.hpp"
#include "halo3d/nn/layers/WindowLayer.hpp"

namespace halo3d::nn {

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

Shape5 ownedShape(const TensorBlock& b) {
  return {b.localSamples(), b.channels(), b.owned().extent(0), b.owned().extent(1),
          b.owned().extent(2)};
}

// Values in [-1, 1) in the owned cells, different per tensor; ghosts stay zero.
void fill(const Activation& a, unsigned seed) {
  auto owned = a.tensor.owned();
  auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), owned);
  unsigned x = seed * 2654435761u + 1;
  for (std::size_t n = 0; n < h.extent(0); ++n)
    for (std::size_t c = 0; c < h.extent(1); ++c)
      for (std::size_t d = 0; d < h.extent(2); ++d)
        for (std::size_t y = 0; y < h.extent(3); ++y)
          for (std::size_t w = 0; w < h.extent(4); ++w) {
            x = x * 1664525u + 1013904223u;
            h(n, c, d, y, w) = real(double(x >> 8) / double(1u << 23) - 1.0);
          }
  Kokkos::deep_copy(owned, h);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The timing kept of a layer's runs: their median, or the least of them (CalibrationOptions::
// keep_least); 0 without runs.
double kept(const std::vector<double>& runs, bool least) {
  if (runs.empty()) return 0.0;
  return least ? *std::min_element(runs.begin(), runs.end()) : median(runs);
}

// Seconds of `run` outside the layers (the input store, the loss, the optimizer step): the median
// of `reps` fenced runs after one that warms up.
double fencedMedian(int reps, const std::function<void()>& run) {
  std::vector<double> s;
  for (int r = 0; r <= reps; ++r) {
    fence("calibration: before a part of the step");
    const auto t0 = Clock::now();
    run();
    fence("calibration: part of the step done");
    if (r > 0) s.push_back(seconds(t0, Clock::now()));
  }
  return median(s);
}

// An activation of node `i` laid out as the rank at `coords` holds it (its block of the global
// volume, the plan's ghost widths), zeroed.
Activation runActivation(const std::string& label, const ModelPlan& plan, int i,
                         const GridCoords& coords) {
  Activation a;
  a.spec = plan.node(i).spec;
  a.tensor = Tensor(label, plan.block(i, coords));
  return a;
}

// Forward and backward seconds of `layer` alone on the blocks rank `coords` holds in `plan`; and,
// with `paired` for a rank that runs pieces, those of the same block run whole, alternated with
// them.
std::array<double, 4> timeLayer(Layer& layer, const ModelPlan& plan, int id,
                                const GridCoords& coords, const ProcessGrid& self, int reps,
                                CalibrationLayout layout, bool least, bool paired) {
  const PlanNode& n = plan.node(id);
  std::vector<Activation> x, dx;
  Activation y, dy;
  if (layout == CalibrationLayout::Legacy) {
    // The owned block as a one-rank volume: ghosts where the layer pads it, none in the output.
    std::vector<TensorSpec> specs;
    for (int i : n.inputs) {
      TensorSpec s;
      s.shape = ownedShape(plan.block(i, coords));
      s.dist = plan.node(i).spec.dist;
      specs.push_back(s);
    }
    const GridShape one(1, 1, 1, 1);
    for (std::size_t j = 0; j < specs.size(); ++j) {
      const HaloWidths h = layer.inputHalo(specs, int(j), one);
      x.push_back(makeActivation("halo3d::calibration::x", specs[j], self, h));
      // The data has no gradient: the first layer does no backward-data, as in a model.
      if (n.inputs[j] != 0)
        dx.push_back(makeActivation("halo3d::calibration::dx", specs[j], self, h));
    }
    const TensorSpec out = layer.outputSpec(specs);
    y = makeActivation("halo3d::calibration::y", out, self, {});
    dy = makeActivation("halo3d::calibration::dy", out, self, {});
  } else {
    for (int i : n.inputs) {
      x.push_back(runActivation("halo3d::calibration::x", plan, i, coords));
      if (i != 0) dx.push_back(runActivation("halo3d::calibration::dx", plan, i, coords));
    }
    y = runActivation("halo3d::calibration::y", plan, id, coords);
    dy = runActivation("halo3d::calibration::dy", plan, id, coords);
  }
  for (std::size_t j = 0; j < x.size(); ++j)
    fill(x[j], unsigned(j + 1));
  fill(dy, 7);
  std::vector<const Activation*> in;
  std::vector<Activation*> din;
  for (std::size_t j = 0, k = 0; j < x.size(); ++j) {
    in.push_back(&x[j]);
    din.push_back(n.inputs[j] != 0 ? &dx[k++] : nullptr);
  }
  layer.setup(self, in, y);
  // A layer that exchanges runs in the overlap's pieces, as the rank does (its exchanges are not
  // timed: the step model prices them).
  auto* window = dynamic_cast<WindowLayer*>(&layer);
  const bool pieces = layout == CalibrationLayout::Run && window &&
                      exchangeNeighbours(plan, id, coords) != std::array<int, 3>{0, 0, 0};
  RunContext ctx;
  ctx.grid = &self;
  ctx.training = true;
  // Seconds of forward and backward, run whole (one piece) or in the overlap's pieces.
  const auto once = [&](bool as_pieces) {
    if (window) window->calibrateAsExchanging(as_pieces);
    fence("calibration: before the layer");
    const auto t0 = Clock::now();
    layer.forward(ctx, in, y);
    fence("calibration: forward done");
    const auto t1 = Clock::now();
    layer.backward(ctx, in, y, dy, din);
    fence("calibration: backward done");
    const auto t2 = Clock::now();
    if (window) window->calibrateAsExchanging(false);
    return std::array<double, 2>{seconds(t0, t1), seconds(t1, t2)};
  };
  // With `paired`, each repetition also runs the block whole just before its pieces, so that
  // the two compare in the same machine state.
  std::vector<double> fwd, bwd, whole_fwd, whole_bwd;
  for (int r = 0; r <= reps; ++r) {  // the first run warms up
    if (paired && pieces) {
      const auto w = once(false);
      if (r > 0) {
        whole_fwd.push_back(w[0]);
        whole_bwd.push_back(w[1]);
      }
    }
    const auto t = once(pieces);
    if (r == 0) continue;
    fwd.push_back(t[0]);
    bwd.push_back(t[1]);
  }
  const auto pick = [&](const std::vector<double>& v) { return kept(v, least); };
  if (whole_fwd.empty()) return {pick(fwd), pick(bwd), 0, 0};
  // The whole block as the pieces' time times the median of the run-by-run ratios: a burst of
  // other work slows both runs of a pair alike, so that ratio is steadier than either time.
  std::vector<double> rf, rb;
  for (std::size_t i = 0; i < fwd.size(); ++i) {
    rf.push_back(whole_fwd[i] / fwd[i]);
    rb.push_back(whole_bwd[i] / bwd[i]);
  }
  return {pick(fwd), pick(bwd), pick(fwd) * median(rf), pick(bwd) * median(rb)};
}

// Forward and backward seconds of every layer of `plan` on the rank at `coords`, timed where a step
// runs them: forward in the plan's order, then backward in reverse, each layer reading what the
// layers before it wrote, over all of the rank's activations and gradients at once (as
// nn::Model::build lays them out, with a gradient part per consumer, summed before the node's
// backward as Model::backward does, untimed). Timed alone and repeated, a layer finds its
// tensors in the caches; in a step the layers between its passes have evicted them, and its
// input comes from the layer before. Measured on CosmoFlow 64^3 at one rank, the step's layers took
// 1.10 (batch 2) and 1.20 (batch 1) times their lone timings (docs/scaling.md, "The first opens,
// and the layers timed in step order"). Replications are not run (their copies and messages are
// priced as communication): their outputs keep the values filled in. The first pass warms up; the
// median (or least) of the `reps` after it is kept per node.
std::map<int, std::array<double, 2>> timeInStepOrder(Model& model, const ModelPlan& plan,
                                                     const GridCoords& coords,
                                                     const ProcessGrid& self, int reps,
                                                     bool least) {
  struct Node {
    Activation act, grad;
    std::vector<Activation> parts;
  };
  std::map<int, Node> nodes;
  unsigned seed = 1;
  for (int id : plan.order()) {
    const PlanNode& pn = plan.node(id);
    Node& n = nodes[id];
    n.act = runActivation("halo3d::calibration::act", plan, id, coords);
    fill(n.act, seed++);
    if (id == 0) continue;
    n.grad = runActivation("halo3d::calibration::grad", plan, id, coords);
    fill(n.grad, seed++);
    if (pn.consumers.size() > 1)
      for (std::size_t c = 0; c < pn.consumers.size(); ++c) {
        n.parts.push_back(runActivation("halo3d::calibration::grad_part", plan, id, coords));
        fill(n.parts.back(), seed++);
      }
  }
  const auto inputsOf = [&](int id) {
    std::vector<const Activation*> in;
    for (int i : plan.node(id).inputs)
      in.push_back(&nodes.at(i).act);
    return in;
  };
  std::map<int, Layer*> layers;
  for (int id : plan.order()) {
    const PlanNode& pn = plan.node(id);
    if (!pn.layer) continue;
    Layer* layer = model.declaredLayer(id);
    require(layer == pn.layer, "calibrate: plan of another model (layer '", pn.name, "')");
    layer->setup(self, inputsOf(id), nodes.at(id).act);
    layers[id] = layer;
  }
  // A layer that exchanges runs in the overlap's pieces, as the rank does (the exchanges are not
  // timed: the step model prices them).
  const auto asPieces = [&](int id, bool on) {
    auto* window = dynamic_cast<WindowLayer*>(layers.at(id));
    if (window)
      window->calibrateAsExchanging(on && exchangeNeighbours(plan, id, coords) !=
                                              std::array<int, 3>{0, 0, 0});
  };
  RunContext ctx;
  ctx.grid = &self;
  ctx.training = true;
  std::map<int, std::array<std::vector<double>, 2>> runs;
  for (int r = 0; r <= reps; ++r) {  // the first pass warms up
    for (int id : plan.order()) {
      if (!layers.count(id)) continue;
      asPieces(id, true);
      fence("calibration: before the layer");
      const auto t0 = Clock::now();
      layers.at(id)->forward(ctx, inputsOf(id), nodes.at(id).act);
      fence("calibration: forward done");
      if (r > 0) runs[id][0].push_back(seconds(t0, Clock::now()));
      asPieces(id, false);
    }
    const std::vector<int>& order = plan.order();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const int id = *it;
      if (!layers.count(id)) continue;
      Node& n = nodes.at(id);
      if (n.parts.size() > 1) {
        const Box& box = n.grad.owned();
        kernels::copy(n.parts[0].tensor, n.grad.tensor, box);
        for (std::size_t c = 1; c < n.parts.size(); ++c)
          kernels::add(n.grad.tensor, n.parts[c].tensor, n.grad.tensor, box);
      }
      const PlanNode& pn = plan.node(id);
      std::vector<Activation*> din;
      for (std::size_t j = 0; j < pn.inputs.size(); ++j) {
        const int i = pn.inputs[j];
        Node& src = nodes.at(i);
        din.push_back(i == 0              ? nullptr  // the data has no gradient
                      : src.parts.empty() ? &src.grad
                                          : &src.parts[std::size_t(pn.input_part[j])]);
      }
      asPieces(id, true);
      fence("calibration: before the layer");
      const auto t0 = Clock::now();
      layers.at(id)->backward(ctx, inputsOf(id), n.act, n.grad, din);
      fence("calibration: backward done");
      if (r > 0) runs[id][1].push_back(seconds(t0, Clock::now()));
      asPieces(id, false);
    }
  }
  const auto pick = [&](const std::vector<double>& v) { return kept(v, least); };
  std::map<int, std::array<double, 2>> out;
  for (const auto& [id, v] : runs)
    out[id] = {pick(v[0]), pick(v[1])};
  return out;
}

// Seconds of storing a batch block into the model's input on the rank at `coords` (what
// apps/common/ModelCache::feed does each step): the loader's ghost-free block copied into the
// input activation, whose ghosts (the first layers' halo) make its rows strided.
double timeInputStore(const ModelPlan& plan, const GridCoords& coords, const ProcessGrid& self,
                      int reps) {
  TensorSpec spec = plan.node(0).spec;
  spec.shape = ownedShape(plan.block(0, coords));
  const Activation batch = makeActivation("halo3d::calibration::batch", spec, self, {});
  fill(batch, 11);
  const Activation input =
      makeActivation("halo3d::calibration::input", spec, self, plan.node(0).halo);
  return fencedMedian(reps, [&] { storeBox(batch.tensor, input, input.owned()); });
}

// Seconds of the loss `loss` (CalibrationOptions::loss) and its gradient on the rank at `coords`:
// what the step runs between forward and backward (TrainingTask::loss), on random outputs and
// targets (labels in [0, channels) for the segmentation losses), over a one-rank grid (its
// allreduce then moves nothing; the step model prices the loss's allreduces apart).
double timeLoss(const ModelPlan& plan, const GridCoords& coords, const std::string& loss,
                const ProcessGrid& self, int reps) {
  const int id = plan.order().back();
  TensorSpec spec = plan.node(id).spec;
  spec.shape = ownedShape(plan.block(id, coords));
  const Activation out = makeActivation("halo3d::calibration::output", spec, self, {});
  Activation dout = makeActivation("halo3d::calibration::doutput", spec, self, {});
  fill(out, 13);
  std::function<void()> run;
  std::vector<float> targets;
  HaloTensor<std::int32_t> labels;
  if (loss == "mse") {
    targets.assign(std::size_t(spec.shape[0] * spec.shape[1]), 0.25f);
    run = [&] { MseLoss().compute(self, out, targets, &dout); };
  } else if (loss == "ce" || loss == "dice") {
    const TensorBlock& b = out.block();
    Shape5 g = b.globalShape();
    g[1] = 1;
    labels =
        HaloTensor<std::int32_t>("halo3d::calibration::labels",
                                 TensorBlock(g, b.sampleBegin(), b.sampleEnd(), b.owned(), {}));
    auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), labels.owned());
    const std::int32_t classes = std::int32_t(spec.shape[1]);
    std::uint32_t x = 17;
    for (std::size_t n = 0; n < h.extent(0); ++n)
      for (std::size_t d = 0; d < h.extent(2); ++d)
        for (std::size_t y = 0; y < h.extent(3); ++y)
          for (std::size_t w = 0; w < h.extent(4); ++w) {
            x = x * 1664525u + 1013904223u;
            h(n, 0, d, y, w) = std::int32_t((x >> 8) % std::uint32_t(classes));
          }
    Kokkos::deep_copy(labels.owned(), h);
    if (loss == "ce")
      run = [&] { CrossEntropyLoss().compute(self, out, labels, &dout); };
    else
      run = [&] { DiceLoss().compute(self, out, labels, &dout); };
  } else {
    throw InputError(concat("calibration: unknown loss '", loss, "' (mse, ce or dice)"));
  }
  return fencedMedian(reps, run);
}

}  // namespace

std::array<int, 3> exchangeNeighbours(const ModelPlan& plan, int id, const GridCoords& coords) {
  const PlanNode& n = plan.node(id);
  std::array<int, 3> sides{0, 0, 0};
  if (!dynamic_cast<const WindowLayer*>(n.layer) || n.inputs.empty() ||
      plan.node(n.inputs[0]).spec.dist != Distribution::Spatial)
    return sides;
  const std::array<int, 3> parts = plan.grid().spatial(), at = coords.spatial();
  for (int d = 0; d < 3; ++d)
    if (parts[d] > 1) sides[d] = (at[d] > 0 ? 1 : 0) | (at[d] < parts[d] - 1 ? 2 : 0);
  return sides;
}

LayerTiming timingKey(const ModelPlan& plan, int id, const GridCoords& coords, int threads) {
  const PlanNode& n = plan.node(id);
  LayerTiming t;
  t.layer = n.kind;
  t.input = ownedShape(plan.block(n.inputs.at(0), coords));
  t.output = ownedShape(plan.block(id, coords));
  t.threads = threads;
  t.neighbours = exchangeNeighbours(plan, id, coords);
  return t;
}

LayerTiming inputStoreKey(const ModelPlan& plan, const GridCoords& coords, int threads) {
  LayerTiming t;
  t.layer = kInputStore;
  t.input = t.output = ownedShape(plan.block(0, coords));
  t.threads = threads;
  return t;
}

LayerTiming lossKey(const ModelPlan& plan, const GridCoords& coords, const std::string& loss,
                    int threads) {
  LayerTiming t;
  t.layer = concat(kLossPrefix, loss);
  t.input = t.output = ownedShape(plan.block(plan.order().back(), coords));
  t.threads = threads;
  return t;
}

LayerTiming batchReadKey(const ModelPlan& plan, const std::string& name, int threads) {
  LayerTiming t;
  t.layer = name;
  const TensorBlock b = plan.block(0, ModelPlan::largestRank());
  t.input = ownedShape(b);
  const Shape5& g = b.globalShape();
  t.output = {1, g[1], g[2], g[3], g[4]};
  t.threads = threads;
  return t;
}

int calibrate(Model& model, const std::vector<ModelPlan>& plans, Machine& machine,
              const CalibrationOptions& o) {
  require<InputError>(o.repetitions >= 1, "calibration repetitions must be >= 1, got ",
                      o.repetitions);
  if (!model.parameters().finalized()) model.parameters().finalize();
  initializeParameters(model.parameters(), 1);
  const ProcessGrid self(MPI_COMM_SELF, GridShape(1, 1, 1, 1));
  const bool step_order = o.step_order && o.layout == CalibrationLayout::Run;
  int timed = 0;
  for (const ModelPlan& plan : plans)
    for (const GridCoords& c : plan.representativeRanks()) {
      const auto keyOf = [&](int id) {
        LayerTiming t = timingKey(plan, id, c, o.threads);
        if (o.layout != CalibrationLayout::Run) t.neighbours = {0, 0, 0};
        return t;
      };
      std::vector<int> todo;
      for (int id : plan.order())
        if (plan.node(id).layer && (o.retime || !machine.find(keyOf(id)))) todo.push_back(id);
      if (todo.empty()) continue;
      // In step order the whole rank's pass runs whenever one of its layers lacks a timing.
      std::map<int, std::array<double, 2>> in_step;
      if (step_order) in_step = timeInStepOrder(model, plan, c, self, o.repetitions, o.keep_least);
      for (int id : todo) {
        const PlanNode& n = plan.node(id);
        LayerTiming t = keyOf(id);
        // Another layer of this pass with the same key was recorded first.
        if (!o.retime && machine.find(t)) continue;
        Layer* layer = model.declaredLayer(id);
        require(layer == n.layer, "calibrate: plan of another model (layer '", n.name, "')");
        std::array<double, 4> s{0, 0, 0, 0};
        if (step_order) {
          s[0] = in_step.at(id)[0];
          s[1] = in_step.at(id)[1];
          // The whole block's timing beside the pieces' (below): the step-order time of the
          // pieces times the ratio of the two timed alone, alternated run by run.
          LayerTiming w = t;
          w.neighbours = {0, 0, 0};
          if (t.neighbours != w.neighbours && (o.retime || o.paired_whole || !machine.find(w))) {
            const auto alone =
                timeLayer(*layer, plan, id, c, self, o.repetitions, o.layout, o.keep_least, true);
            if (alone[0] > 0 && alone[1] > 0 && alone[2] > 0) {
              s[2] = s[0] * alone[2] / alone[0];
              s[3] = s[1] * alone[3] / alone[1];
            }
          }
        } else {
          s = timeLayer(*layer, plan, id, c, self, o.repetitions, o.layout, o.keep_least, true);
        }
        t.forward_s = s[0];
        t.backward_s = s[1];
        machine.record(t);
        ++timed;
        if (s[2] > 0) {
          // The same block run whole, paired with the pieces: kept unkeyed by neighbours in the
          // machine file (what the model takes where a file lacks the pieces' timing, and what
          // a comparison without them prices: scripts/rescore_model.py --drop-neighbours), and
          // under the rank's key in paired_whole.
          LayerTiming w = t;
          w.forward_s = s[2];
          w.backward_s = s[3];
          if (o.paired_whole) o.paired_whole->record(w);
          w.neighbours = {0, 0, 0};
          machine.record(w);
        }
        if (o.progress)
          o.progress(concat(
              n.name, " ", n.kind, " on ", t.input,
              t.neighbours == std::array<int, 3>{0, 0, 0}
                  ? std::string()
                  : concat(" (neighbours ", t.neighbours[0], t.neighbours[1], t.neighbours[2], ")"),
              ": forward ", s[0] * 1e3, " ms, backward ", s[1] * 1e3, " ms"));
      }
    }
  // The parts of the step outside every layer, on each representative rank's blocks: `key_of` its
  // key, `time_at` its seconds.
  const auto timeStepPart = [&](const auto& key_of, const auto& time_at) {
    for (const ModelPlan& plan : plans)
      for (const GridCoords& c : plan.representativeRanks()) {
        LayerTiming t = key_of(plan, c);
        if (!o.retime && machine.find(t)) continue;
        t.forward_s = time_at(plan, c);
        machine.record(t);
        ++timed;
        if (o.progress)
          o.progress(concat(t.layer, " on ", t.input, ": ", t.forward_s * 1e3, " ms"));
      }
  };
  // Storing the batch into the model's input, before forward (about 7% of a CosmoFlow step at
  // P <= 2 on this machine).
  timeStepPart(
      [&](const ModelPlan& plan, const GridCoords& c) { return inputStoreKey(plan, c, o.threads); },
      [&](const ModelPlan& plan, const GridCoords& c) {
        return timeInputStore(plan, c, self, o.repetitions);
      });
  // The loss and its gradient, between forward and backward: a softmax over every output cell for
  // the segmentation losses (about 3% of a U-Net step on this machine).
  if (!o.loss.empty())
    timeStepPart([&](const ModelPlan& plan,
                     const GridCoords& c) { return lossKey(plan, c, o.loss, o.threads); },
                 [&](const ModelPlan& plan, const GridCoords& c) {
                   return timeLoss(plan, c, o.loss, self, o.repetitions);
                 });
  // The scheduler's slice, which prices the lateness of ranks that time-share a core.
  if (o.scheduler_slice && machine.devices_per_node == 0 &&
      (o.retime || machine.scheduler_slice_s <= 0)) {
    if (const double q = measureSchedulerSlice(); q > 0) {
      machine.scheduler_slice_s = q;
      machine.scheduler_source = concat(
          "measureSchedulerSlice (nn/plan/Calibration.hpp): median run of two threads "
          "pinned to one core, ",
          q * 1e3, " ms");
      ++timed;
    }
  }
  // The optimizer step, on the model's parameters.
  LayerTiming t;
  t.layer = concat("optimizer ", optimizerKindName(o.optimizer));
  t.input = {index_t(model.parameters().trainableSize()), 0, 0, 0, 0};
  t.threads = o.threads;
  if (o.retime || !machine.find(t)) {
    OptimizerConfig oc;
    oc.kind = o.optimizer;
    auto opt = makeOptimizer(model.parameters(), oc);
    t.forward_s = fencedMedian(o.repetitions, [&] { opt->step(1e-6); });
    machine.record(t);
    ++timed;
  }
  return timed;
}

double measureSchedulerSlice(double duration_s) {
#ifdef __linux__
  const int cpu = sched_getcpu();
  if (cpu < 0) return 0;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  std::vector<double> runs[2];
  std::atomic<int> pinned{0};
  std::atomic<bool> failed{false};
  const auto spin = [&](int i) {
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) failed = true;
    ++pinned;
    while (pinned.load() < 2 && !failed.load()) {
    }
    const auto gap = std::chrono::microseconds(50);
    const auto end = Clock::now() + std::chrono::duration<double>(duration_s);
    auto last = Clock::now(), start = last;
    while (last < end && !failed.load()) {
      const auto now = Clock::now();
      if (now - last > gap) {
        runs[i].push_back(seconds(start, last));
        start = now;
      }
      last = now;
    }
  };
  std::thread a(spin, 0), b(spin, 1);
  a.join();
  b.join();
  std::vector<double> all;
  for (auto& r : runs)  // the first run of each began before both were pinned
    all.insert(all.end(), r.begin() + std::min<std::ptrdiff_t>(1, std::ptrdiff_t(r.size())),
               r.end());
  if (failed || all.size() < 8) return 0;
  return median(all);
#else
  (void)duration_s;
  return 0;
#endif
}

std::string calibrateLinks(MPI_Comm comm, Machine& machine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  require<InputError>(size >= 2, "link calibration needs at least 2 ranks, got ", size);
  const std::vector<std::size_t> sizes{8, 1 << 10, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 23};
  std::vector<char> buf(sizes.back());
  std::vector<double> x, y;  // bytes, one-way seconds
  for (std::size_t bytes : sizes) {
    const int reps = bytes < (1 << 16) ? 200 : 20;
    std::vector<double> t;
    for (int r = 0; r <= reps; ++r) {
      MPI_Barrier(comm);
      const double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buf.data(), int(bytes), MPI_CHAR, 1, 0, comm);
        MPI_Recv(buf.data(), int(bytes), MPI_CHAR, 1, 0, comm, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf.data(), int(bytes), MPI_CHAR, 0, 0, comm, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), int(bytes), MPI_CHAR, 0, 0, comm);
      }
      if (r > 0) t.push_back((MPI_Wtime() - t0) / 2);
    }
    x.push_back(double(bytes));
    y.push_back(median(t));
  }
  // Least squares of y = alpha + beta x, weighted by 1/y so that small messages (alpha) count.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double w = 1 / (y[i] * y[i]);
    sw += w;
    sx += w * x[i];
    sy += w * y[i];
    sxx += w * x[i] * x[i];
    sxy += w * x[i] * y[i];
  }
  double beta = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  double alpha = (sy - beta * sx) / sw;
  alpha = std::max(alpha, 1e-9);
  beta = std::max(beta, 1e-13);
  // Both ranks' view of the fit is rank 0's.
  double fit[2] = {alpha, beta};
  MPI_Bcast(fit, 2, MPI_DOUBLE, 0, comm);
  machine.shared_memory = Link{fit[0], fit[1]};
  // gamma from a large allreduce over all ranks (a ring in Open MPI for this size).
  const std::size_t n = std::size_t(1) << 23;
  std::vector<float> a(n / sizeof(float), 1.0f), b(a.size());
  std::vector<double> t;
  for (int r = 0; r <= 10; ++r) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    MPI_Allreduce(a.data(), b.data(), int(a.size()), MPI_FLOAT, MPI_SUM, comm);
    if (r > 0) t.push_back(MPI_Wtime() - t0);
  }
  double worst = median(t);
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
  const double p = size, frac = (p - 1) / p;
  const double comm_s = 2 * (p - 1) * fit[0] + 2 * frac * double(n) * fit[1];
  machine.reduction_gamma_s_per_byte = std::max(1e-13, (worst - comm_s) / (frac * double(n)));
  return machine.link_source = concat("halo3d-sweep --calibrate on ", size,
                                      " ranks: ping-pong 8 B - 8 MiB between ranks 0 "
                                      "and 1 (alpha ",
                                      fit[0] * 1e6, " us, beta ", 1 / fit[1] / 1e9,
                                      " GB/s); MPI_Allreduce of 8 MiB in ", worst * 1e3, " ms");
}

}  // namespace halo3d::nn
