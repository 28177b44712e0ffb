// One CosmoFlow training step (forward, MSE loss, backward with the gradient allreduce, Adam
// update), at input 64^3, width 0.25, global batch 2 unless the arguments say otherwise, on a grid
// chosen from the rank count: 1 rank 1x1x1x1, 2 ranks 1x2x1x1, 4 ranks 1x2x2x1, 8 ranks 1x2x2x2.
// Time is the slowest rank's.
//
// cosmoflow_step, arguments {input size, overlap (1/0)}. Counters: samples_per_s, and the slowest
// rank's seconds per step in compute, halo_wait and allreduce (nn::LayerTimers): with overlap,
// halo_wait is what the interior compute did not hide.
//
// cosmoflow_overlap_pair, argument {input size}: every iteration runs one step with overlap and one
// without, on the same model, so that drift on a shared machine hits both alike (two separate
// benchmarks run minutes apart differ by more than overlap changes on 2 cores). Counters: the
// slowest rank's step time and convolution halo wait per variant, and plain / overlap step time.
//
// cosmoflow_step_vs_ideal, arguments {input size, width in percent}: every iteration runs one step
// (with overlap), then oneDNN's passes of the same convolutions; the ideal step is those plus the
// step's compulsory memory traffic at the STREAM bandwidth measured at set-up
// (support/IdealStepAnchor.hpp). Counters: step_s, ideal_s, ideal_conv_s, ideal_memory_s,
// stream_GBps, step_over_ideal; HALO3D_BENCH_IDEAL_LAYERS=1 prints the per-layer breakdown.
#include <benchmark/benchmark.h>

#include <mpi.h>
#include <cstdio>
#include <cstdlib>

#include "halo3d/comm/Allreduce.hpp"
#include "halo3d/nn/GradientReducer.hpp"
#include "halo3d/nn/Init.hpp"
#include "halo3d/nn/Loss.hpp"
#include "halo3d/nn/Optimizer.hpp"
#include "halo3d/nn/PrecisionBridge.hpp"
#include "halo3d/nn/layers/Conv3d.hpp"
#include "halo3d/nn/models/CosmoFlow.hpp"
#include "support/IdealStepAnchor.hpp"
#include "support/MpiTiming.hpp"
#include "support/SplitGrid.hpp"
#include "support/StepRegistration.hpp"

namespace halo3d::bench {
namespace {

// A CosmoFlow model (width 0.25 unless asked), batch 2, with everything one training step needs.
struct StepRig {
  ProcessGrid grid{MPI_COMM_WORLD, splitGridFor(worldSize())};
  static constexpr index_t batch = 2;
  std::unique_ptr<nn::Model> model;
  std::unique_ptr<nn::Optimizer> opt;
  std::unique_ptr<nn::GradientReducer> reducer;
  nn::MseLoss mse;
  std::vector<float> targets;
  nn::RunContext ctx;

  explicit StepRig(index_t size, double width = 0.25,
                   nn::Precision precision = nn::Precision::fp32) {
    nn::CosmoFlowConfig c;
    c.input_size = size;
    c.width = width;
    model = nn::makeCosmoFlow(c);
    model->build(grid, batch, 0, precision);
    nn::initializeParameters(model->parameters(), 1);
    const nn::Tensor ones("halo3d::bench::input", model->input().block());
    Kokkos::deep_copy(ones.owned(), 1.0f);
    nn::storeBox(ones, model->input(), model->input().owned());
    opt = nn::makeOptimizer(model->parameters(), nn::OptimizerConfig{});
    reducer = std::make_unique<nn::GradientReducer>(grid.comm(), model->parameters());
    targets.assign(std::size_t(model->output().block().localSamples() * 4), 0.5f);
    ctx.grid = &grid;
    ctx.reducer = reducer.get();
  }
  void step(bool overlap, nn::LayerTimers& timers) {
    ctx.overlap = overlap;
    ctx.timers = &timers;
    model->forward(ctx);
    mse.compute(grid, model->output(), targets, &model->outputGradient());
    model->backward(ctx);
    opt->step(1e-4);
    Kokkos::fence();
  }
  // One step (with overlap) timed in pieces for the ideal's breakdown.
  void stepInPieces(StepPieces& p) {
    ctx.overlap = true;
    ctx.timers = &p.forward;
    model->forward(ctx);
    p.loss_s +=
        secondsOf([&] { mse.compute(grid, model->output(), targets, &model->outputGradient()); });
    ctx.timers = &p.backward;
    model->backward(ctx);
    p.optimizer_s += secondsOf([&] {
      opt->step(1e-4);
      Kokkos::fence();
    });
  }
  // The MSE loss's compulsory bytes: prediction and targets read, gradient written.
  double lossBytes() const { return 3.0 * double(targets.size()) * sizeof(float); }
  // The slowest rank's wall time of one step; the ranks start together.
  double timedStep(bool overlap, nn::LayerTimers& timers) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    step(overlap, timers);
    return maxOverRanks(MPI_Wtime() - t0);
  }
  // The halo wait of the convolutions alone (the overlap claim is about them), per step.
  double convHaloWait(const nn::LayerTimers& timers, double steps) const {
    double wait = 0;
    for (const nn::Layer* l : model->layers())
      if (dynamic_cast<const nn::Conv3d*>(l)) wait += timers.get(l->name(), nn::Phase::HaloWait);
    return maxOverRanks(wait) / steps;
  }
};

void cosmoflowStep(benchmark::State& state) {
  StepRig rig(state.range(0));
  const bool overlap = state.range(1) != 0;
  nn::LayerTimers timers;
  rig.step(overlap, timers);  // warm-up: first-touch allocations, weight repacking
  timers.reset();
  for (auto _ : state)
    state.SetIterationTime(rig.timedStep(overlap, timers));
  const double n = double(state.iterations());
  state.counters["samples_per_s"] =
      benchmark::Counter(double(rig.batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["compute_s"] = maxOverRanks(timers.total(nn::Phase::Compute)) / n;
  state.counters["halo_wait_s"] = maxOverRanks(timers.total(nn::Phase::HaloWait)) / n;
  state.counters["allreduce_s"] = maxOverRanks(timers.total(nn::Phase::Allreduce)) / n;
  // ... and of everything else that exchanges halos (pooling) or redistributes, in halo_wait_s.
  state.counters["conv_halo_wait_s"] = rig.convHaloWait(timers, n);
  // HALO3D_BENCH_LAYERS=1: rank 0 lists every layer's compute and halo wait per step (ms) on
  // stderr.
  if (std::getenv("HALO3D_BENCH_LAYERS") && rig.grid.isRoot())
    for (const nn::Layer* l : rig.model->layers())
      std::fprintf(stderr, "%-28s compute %8.3f ms  halo wait %7.3f ms  %s\n", l->name().c_str(),
                   1e3 * timers.get(l->name(), nn::Phase::Compute) / n,
                   1e3 * timers.get(l->name(), nn::Phase::HaloWait) / n, l->kind().c_str());
  state.counters["ranks"] = worldSize();
  state.SetLabel(rig.grid.shape().str() + (overlap ? " overlap" : " no-overlap"));
}

void cosmoflowOverlapPair(benchmark::State& state) {
  StepRig rig(state.range(0));
  nn::LayerTimers with, without;
  rig.step(true, with);
  rig.step(false, without);
  with.reset();
  without.reset();
  double t_with = 0, t_without = 0;
  for (auto _ : state) {
    const double a = rig.timedStep(true, with);
    const double b = rig.timedStep(false, without);
    t_with += a;
    t_without += b;
    state.SetIterationTime(a + b);
  }
  const double n = double(state.iterations());
  state.counters["step_s_overlap"] = t_with / n;
  state.counters["step_s_plain"] = t_without / n;
  state.counters["plain_over_overlap"] = t_without / t_with;
  state.counters["conv_wait_s_overlap"] = rig.convHaloWait(with, n);
  state.counters["conv_wait_s_plain"] = rig.convHaloWait(without, n);
  state.counters["wait_s_overlap"] = maxOverRanks(with.total(nn::Phase::HaloWait)) / n;
  state.counters["wait_s_plain"] = maxOverRanks(without.total(nn::Phase::HaloWait)) / n;
  state.SetLabel(rig.grid.shape().str());
}

// The same step in fp32 and in bf16 (issue 13), interleaved in one run: bf16_over_fp32 is the time
// ratio (below 1: bf16 is faster), and each precision's activation bytes per rank.
void cosmoflowPrecisionPair(benchmark::State& state) {
  const double width = double(state.range(1)) / 100.0;
  StepRig fp32(state.range(0), width, nn::Precision::fp32);
  StepRig bf16(state.range(0), width, nn::Precision::bf16);
  nn::LayerTimers t32, t16;
  fp32.step(true, t32);  // warm-up: first-touch allocations, weight repacking
  bf16.step(true, t16);
  double s32 = 0, s16 = 0;
  for (auto _ : state) {
    const double a = fp32.timedStep(true, t32);
    const double b = bf16.timedStep(true, t16);
    s32 += a;
    s16 += b;
    state.SetIterationTime(a + b);
  }
  const double n = double(state.iterations());
  state.counters["step_s_fp32"] = s32 / n;
  state.counters["step_s_bf16"] = s16 / n;
  state.counters["bf16_over_fp32"] = s16 / s32;
  state.counters["activation_bytes_fp32"] = double(fp32.model->activationBytes());
  state.counters["activation_bytes_bf16"] = double(bf16.model->activationBytes());
  state.SetLabel(fp32.grid.shape().str());
}

void cosmoflowStepVsIdeal(benchmark::State& state) {
  StepRig rig(state.range(0), double(state.range(1)) / 100.0);
  IdealStepAnchor ideal(*rig.model, rig.grid.coords(), *rig.opt, rig.lossBytes());
  StepPieces pieces;
  rig.stepInPieces(pieces);  // warm-up: first-touch allocations, weight repacking
  pieces.reset();
  double total = 0;
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    rig.stepInPieces(pieces);
    const double t = maxOverRanks(MPI_Wtime() - t0);
    state.SetIterationTime(t);
    total += t;
    ideal.measure();
  }
  const double n = double(state.iterations());
  state.counters["samples_per_s"] = double(rig.batch) * n / total;
  state.counters["ranks"] = worldSize();
  state.counters["threads"] = Kokkos::DefaultExecutionSpace().concurrency();
  ideal.report(state, total / n, pieces, n, rig.grid.shape().str());
}

const bool registered = [] {
  registerTimed("cosmoflow_step/W0.25_N2", cosmoflowStep, {"size", "overlap"}, {{64, 1}, {64, 0}});
  registerTimed("cosmoflow_overlap_pair/W0.25_N2", cosmoflowOverlapPair, {"size"}, {{64}});
  registerSmoke("cosmoflow_overlap_pair_smoke", cosmoflowOverlapPair, {"size"}, {32});
  registerSmoke("cosmoflow_step_smoke", cosmoflowStep, {"size", "overlap"}, {32, 1});
  registerTimed("cosmoflow_step_vs_ideal/N2", cosmoflowStepVsIdeal, {"size", "width_pct"},
                {{64, 25}, {64, 100}, {128, 100}});
  registerSmoke("cosmoflow_step_vs_ideal_smoke", cosmoflowStepVsIdeal, {"size", "width_pct"},
                {32, 25});
  registerTimed("cosmoflow_precision_pair/N2", cosmoflowPrecisionPair, {"size", "width_pct"},
                {{64, 25}, {128, 25}});
  registerSmoke("cosmoflow_precision_pair_smoke", cosmoflowPrecisionPair, {"size", "width_pct"},
                {32, 25});
  return true;
}();

}  // namespace
}  // namespace halo3d::bench
