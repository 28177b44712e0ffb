// Whether a convolution hides its halo exchange behind its interior compute (the overlap of
// nn/layers/WindowLayer.hpp: start, interior, finish, shell), one layer at a time.
//
// The model is input -> conv "a" -> conv "b" (C -> C channels, 3^3, padding 1, batch 2), split
// over the ranks like bench_cosmoflow_step (2 ranks 1x2x1x1, 4 ranks 1x2x2x1, 8 ranks 1x2x2x2).
// Layer "b" is measured: its forward exchanges the ghosts of its input, its backward scatter-sums
// the ghosts of its input gradient. Every iteration runs, in turn and on the same tensors,
//   - the two exchanges alone (HaloExchange gather of b's input, scatter-sum of its input
//     gradient): what there is to hide;
//   - forward + backward without overlap (exchange, then compute);
//   - forward + backward with overlap (start, interior in slabs with MPI progress, finish, shell),
// so that drift on a shared machine hits all three alike. The ranks meet at a barrier before each.
//
// Counters, seconds per iteration on the slowest rank: exchange_s; layer_s / wait_s for each
// variant (suffix _overlap / _plain; layer_s is the time in b's timers over forward + backward,
// compute and halo wait, wait_s the halo wait alone); hidden = 1 - wait_overlap / wait_plain.
#include <benchmark/benchmark.h>

#include <mpi.h>

#include "halo3d/nn/Init.hpp"
#include "halo3d/nn/Model.hpp"
#include "halo3d/nn/layers/Conv3d.hpp"
#include "support/MpiTiming.hpp"
#include "support/SplitGrid.hpp"
#include "support/StepRegistration.hpp"

namespace halo3d::bench {
namespace {

void convOverlap(benchmark::State& state) {
  ProcessGrid grid(MPI_COMM_WORLD, splitGridFor(worldSize()));
  const index_t size = state.range(0), channels = state.range(1), batch = 2;
  const auto g = WindowGeometry::cubic(3, 1, 1);
  nn::Model model;
  model.input({channels, size, size, size});
  model.add(std::make_unique<nn::Conv3d>("a", channels, channels, g, false));
  model.add(std::make_unique<nn::Conv3d>("b", channels, channels, g, false));
  model.build(grid, batch);
  nn::initializeParameters(model.parameters(), 1);
  Kokkos::deep_copy(model.input().tensor.owned(), 1.0f);
  Kokkos::deep_copy(model.outputGradient().tensor.owned(), 1.0f);

  const nn::Tensor& x = model.activation("a").tensor;  // b's input
  const nn::Tensor& dx = model.gradient("a").tensor;   // b's input gradient
  HaloExchange<nn::real> exchange(grid, x.block());

  nn::LayerTimers plain_timers, overlap_timers;
  nn::RunContext ctx;
  ctx.grid = &grid;
  auto pass = [&](bool overlap, nn::LayerTimers& timers) {
    ctx.overlap = overlap;
    ctx.timers = &timers;
    model.forward(ctx);
    model.backward(ctx);
    Kokkos::fence();
  };
  pass(true, overlap_timers);  // warm-up: first touch, weight repacking
  pass(false, plain_timers);
  plain_timers.reset();
  overlap_timers.reset();

  double exchange_s = 0, plain_s = 0, overlap_s = 0;
  const auto timed = [](auto&& f) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    f();
    return maxOverRanks(MPI_Wtime() - t0);
  };
  for (auto _ : state) {
    const double e = timed([&] {
      exchange.gather(x);
      exchange.scatter(dx);
    });
    const double p = timed([&] { pass(false, plain_timers); });
    const double o = timed([&] { pass(true, overlap_timers); });
    exchange_s += e;
    plain_s += p;
    overlap_s += o;
    state.SetIterationTime(e + p + o);
  }
  const double n = double(state.iterations());
  using nn::Phase;
  const auto layerTime = [&](const nn::LayerTimers& t) {
    return maxOverRanks(t.get("b", Phase::Compute) + t.get("b", Phase::HaloWait)) / n;
  };
  const double wait_plain = maxOverRanks(plain_timers.get("b", Phase::HaloWait)) / n;
  const double wait_overlap = maxOverRanks(overlap_timers.get("b", Phase::HaloWait)) / n;
  state.counters["exchange_s"] = exchange_s / n;
  state.counters["layer_s_plain"] = layerTime(plain_timers);
  state.counters["layer_s_overlap"] = layerTime(overlap_timers);
  state.counters["wait_s_plain"] = wait_plain;
  state.counters["wait_s_overlap"] = wait_overlap;
  state.counters["hidden"] = wait_plain > 0 ? 1 - wait_overlap / wait_plain : 0;
  state.counters["model_s_plain"] = plain_s / n;
  state.counters["model_s_overlap"] = overlap_s / n;
  state.SetLabel(grid.shape().str() + " " +
                 std::to_string(exchange.receivedBytes(HaloDirection::Gather)) + " B/gather");
}

// {global size, channels}: the first three convolutions of bench_cosmoflow_step's model (64^3,
// width 0.25: 4, 8, 16 channels at 64^3, 32^3, 16^3, approximated as C -> C), CosmoFlow's first
// stage at width 1 (16 channels) at 64^3 and 128^3, and wider layers.
const bool registered = [] {
  registerTimed("conv_overlap", convOverlap, {"size", "C"},
                {{64, 4}, {32, 8}, {16, 16}, {64, 16}, {128, 16}, {64, 32}, {32, 64}});
  registerSmoke("conv_overlap_smoke", convOverlap, {"size", "C"}, {16, 4});
  return true;
}();

}  // namespace
}  // namespace halo3d::bench
