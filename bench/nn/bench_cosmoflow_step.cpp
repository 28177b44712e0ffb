// One CosmoFlow training step (forward, MSE loss, backward with the gradient allreduce, Adam
// update), at input 64^3, width 0.25, global batch 2 unless the arguments say otherwise, on a grid
// chosen from the rank count: 1 rank 1x1x1x1, 2 ranks 1x2x1x1, 4 ranks 1x2x2x1, 8 ranks 1x2x2x2.
// Time is the slowest rank's.
//
// Arguments: {input size, overlap (1/0)}. Counters: samples_per_s, and the slowest rank's seconds
// per step in compute, halo_wait and allreduce (nn::LayerTimers): with overlap, halo_wait is what
// the interior compute did not hide.
#include <benchmark/benchmark.h>

#include <mpi.h>
#include <cstdio>
#include <cstdlib>

#include "comm/Allreduce.hpp"
#include "nn/GradientReducer.hpp"
#include "nn/Init.hpp"
#include "nn/Loss.hpp"
#include "nn/Optimizer.hpp"
#include "nn/layers/Conv3d.hpp"
#include "nn/models/CosmoFlow.hpp"
#include "support/MpiTiming.hpp"

namespace halo3d::bench {
namespace {

GridShape gridFor(int ranks) {
  switch (ranks) {
    case 2:
      return GridShape(1, 2, 1, 1);
    case 4:
      return GridShape(1, 2, 2, 1);
    case 8:
      return GridShape(1, 2, 2, 2);
  }
  return GridShape(1, ranks, 1, 1);
}

void cosmoflowStep(benchmark::State& state) {
  ProcessGrid grid(MPI_COMM_WORLD, gridFor(worldSize()));
  nn::CosmoFlowConfig c;
  c.input_size = state.range(0);
  c.width = 0.25;
  const index_t batch = 2;
  auto model = nn::makeCosmoFlow(c);
  model->build(grid, batch);
  nn::initializeParameters(model->parameters(), 1);
  Kokkos::deep_copy(model->input().tensor.owned(), 1.0f);
  nn::OptimizerConfig oc;
  auto opt = nn::makeOptimizer(model->parameters(), oc);
  nn::GradientReducer reducer(grid.comm(), model->parameters());
  nn::LayerTimers timers;
  nn::RunContext ctx;
  ctx.grid = &grid;
  ctx.reducer = &reducer;
  ctx.timers = &timers;
  ctx.overlap = state.range(1) != 0;
  nn::MseLoss mse;
  const std::vector<float> targets(std::size_t(model->output().tensor.block().localSamples() * 4),
                                   0.5f);
  auto step = [&] {
    model->forward(ctx);
    mse.compute(grid, model->output(), targets, &model->outputGradient());
    model->backward(ctx);
    opt->step(1e-4);
    Kokkos::fence();
  };
  step();  // warm-up: first-touch allocations, weight repacking
  timers.reset();
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    step();
    state.SetIterationTime(maxOverRanks(MPI_Wtime() - t0));
  }
  const double n = double(state.iterations());
  state.counters["samples_per_s"] =
      benchmark::Counter(double(batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["compute_s"] = maxOverRanks(timers.total(nn::Phase::Compute)) / n;
  state.counters["halo_wait_s"] = maxOverRanks(timers.total(nn::Phase::HaloWait)) / n;
  state.counters["allreduce_s"] = maxOverRanks(timers.total(nn::Phase::Allreduce)) / n;
  // The halo wait of the convolutions alone (the overlap claim is about them) and of everything
  // else that exchanges halos (pooling) or redistributes.
  double conv_wait = 0;
  for (const nn::Layer* l : model->layers())
    if (dynamic_cast<const nn::Conv3d*>(l)) conv_wait += timers.get(l->name(), nn::Phase::HaloWait);
  state.counters["conv_halo_wait_s"] = maxOverRanks(conv_wait) / n;
  // HALO3D_BENCH_LAYERS=1: rank 0 lists every layer's compute and halo wait per step (ms) on
  // stderr.
  if (std::getenv("HALO3D_BENCH_LAYERS") && grid.isRoot())
    for (const nn::Layer* l : model->layers())
      std::fprintf(stderr, "%-28s compute %8.3f ms  halo wait %7.3f ms  %s\n", l->name().c_str(),
                   1e3 * timers.get(l->name(), nn::Phase::Compute) / n,
                   1e3 * timers.get(l->name(), nn::Phase::HaloWait) / n, l->kind().c_str());
  state.counters["ranks"] = worldSize();
  state.SetLabel(grid.shape().str() + (ctx.overlap ? " overlap" : " no-overlap"));
}

BENCHMARK(cosmoflowStep)
    ->Name("cosmoflow_step/W0.25_N2")
    ->ArgNames({"size", "overlap"})
    ->Args({64, 1})
    ->Args({64, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(cosmoflowStep)
    ->Name("cosmoflow_step_smoke")
    ->ArgNames({"size", "overlap"})
    ->Args({32, 1})
    ->UseManualTime()
    ->Iterations(2);

}  // namespace
}  // namespace halo3d::bench
