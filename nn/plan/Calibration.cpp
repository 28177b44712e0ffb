#include "halo3d/nn/plan/Calibration.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/nn/Init.hpp"
#include "halo3d/nn/Layer.hpp"

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

// Forward and backward seconds of `layer` alone on the blocks rank `coords` holds in `plan`.
std::array<double, 2> timeLayer(Layer& layer, const ModelPlan& plan, int id,
                                const GridCoords& coords, const ProcessGrid& self, int reps) {
  const PlanNode& n = plan.node(id);
  std::vector<TensorSpec> specs;
  for (int i : n.inputs) {
    TensorSpec s;
    s.shape = ownedShape(plan.block(i, coords));
    s.dist = plan.node(i).spec.dist;
    specs.push_back(s);
  }
  const GridShape one(1, 1, 1, 1);
  std::vector<Activation> x, dx;
  for (std::size_t j = 0; j < specs.size(); ++j) {
    const HaloWidths h = layer.inputHalo(specs, int(j), one);
    x.push_back(makeActivation("halo3d::calibration::x", specs[j], self, h));
    fill(x.back(), unsigned(j + 1));
    // The data has no gradient: the first layer does no backward-data, as in a model.
    if (n.inputs[j] != 0)
      dx.push_back(makeActivation("halo3d::calibration::dx", specs[j], self, h));
  }
  const TensorSpec out = layer.outputSpec(specs);
  Activation y = makeActivation("halo3d::calibration::y", out, self, {});
  Activation dy = makeActivation("halo3d::calibration::dy", out, self, {});
  fill(dy, 7);
  std::vector<const Activation*> in;
  std::vector<Activation*> din;
  for (std::size_t j = 0, k = 0; j < x.size(); ++j) {
    in.push_back(&x[j]);
    din.push_back(n.inputs[j] != 0 ? &dx[k++] : nullptr);
  }
  layer.setup(self, in, y);
  RunContext ctx;
  ctx.grid = &self;
  ctx.training = true;
  std::vector<double> fwd, bwd;
  for (int r = 0; r <= reps; ++r) {  // the first run warms up
    fence("calibration: before the layer");
    const auto t0 = Clock::now();
    layer.forward(ctx, in, y);
    fence("calibration: forward done");
    const auto t1 = Clock::now();
    layer.backward(ctx, in, y, dy, din);
    fence("calibration: backward done");
    const auto t2 = Clock::now();
    if (r == 0) continue;
    fwd.push_back(seconds(t0, t1));
    bwd.push_back(seconds(t1, t2));
  }
  return {median(fwd), median(bwd)};
}

}  // namespace

LayerTiming timingKey(const ModelPlan& plan, int id, const GridCoords& coords, int threads) {
  const PlanNode& n = plan.node(id);
  LayerTiming t;
  t.layer = n.kind;
  t.input = ownedShape(plan.block(n.inputs.at(0), coords));
  t.output = ownedShape(plan.block(id, coords));
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
  int timed = 0;
  for (const ModelPlan& plan : plans)
    for (const GridCoords& c : plan.representativeRanks())
      for (int id : plan.order()) {
        const PlanNode& n = plan.node(id);
        if (!n.layer) continue;  // the input, and replications (priced as communication)
        LayerTiming t = timingKey(plan, id, c, o.threads);
        if (!o.retime && machine.find(t.layer, t.input, t.output, t.threads)) continue;
        Layer* layer = model.declaredLayer(id);
        require(layer == n.layer, "calibrate: plan of another model (layer '", n.name, "')");
        const auto s = timeLayer(*layer, plan, id, c, self, o.repetitions);
        t.forward_s = s[0];
        t.backward_s = s[1];
        machine.record(t);
        ++timed;
        if (o.progress)
          o.progress(concat(n.name, " ", n.kind, " on ", t.input, ": forward ", s[0] * 1e3,
                            " ms, backward ", s[1] * 1e3, " ms"));
      }
  // The optimizer step, on the model's parameters.
  LayerTiming t;
  t.layer = concat("optimizer ", optimizerKindName(o.optimizer));
  t.input = {index_t(model.parameters().trainableSize()), 0, 0, 0, 0};
  t.threads = o.threads;
  if (o.retime || !machine.find(t.layer, t.input, t.output, t.threads)) {
    OptimizerConfig oc;
    oc.kind = o.optimizer;
    auto opt = makeOptimizer(model.parameters(), oc);
    std::vector<double> s;
    for (int r = 0; r <= o.repetitions; ++r) {
      fence("calibration: before the optimizer");
      const auto t0 = Clock::now();
      opt->step(1e-6);
      fence("calibration: optimizer step done");
      if (r > 0) s.push_back(seconds(t0, Clock::now()));
    }
    t.forward_s = median(s);
    machine.record(t);
    ++timed;
  }
  return timed;
}

}  // namespace halo3d::nn
