// One 3D U-Net training step (forward, voxel-wise cross-entropy, backward with the gradient
// allreduce, SGD with momentum) on the grid 1xPx1x1 (P ranks split D; 1x2x2x2 on 8 ranks), as
// `unet3d train` runs it. bench/nn/unet_torch.py times the same step in PyTorch;
// bench/nn/compare_unet_torch.py runs both in turns.
//
// Arguments: {input edge, base channels, depth, global batch}. Counters: samples_per_s (the global
// batch over the slowest rank's step time), ranks, and threads (OpenMP threads per rank).
//
// unetStepVsIdeal, the same arguments: every iteration runs one step, then oneDNN's passes of the
// same convolutions (the transposed ones as deconvolutions); the ideal step is those plus the
// step's compulsory memory traffic at the STREAM bandwidth measured at set-up
// (support/IdealStepAnchor.hpp). Counters as unetStep's, plus step_s, ideal_s, ideal_conv_s,
// ideal_memory_s, stream_GBps, step_over_ideal; HALO3D_BENCH_IDEAL_LAYERS=1 prints the per-layer
// breakdown.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstdint>

#include "halo3d/nn/GradientReducer.hpp"
#include "halo3d/nn/Init.hpp"
#include "halo3d/nn/Loss.hpp"
#include "halo3d/nn/Optimizer.hpp"
#include "halo3d/nn/models/UNet3d.hpp"
#include "support/IdealStepAnchor.hpp"
#include "support/MpiTiming.hpp"

namespace halo3d::bench {
namespace {

GridShape gridFor(int ranks) {
  if (ranks == 8) return GridShape(1, 2, 2, 2);
  return GridShape(1, ranks, 1, 1);
}

// A value in [-1, 1) from a global index, the same on every grid.
KOKKOS_INLINE_FUNCTION float hashed(std::uint64_t i) {
  i = (i ^ (i >> 33)) * 0xff51afd7ed558ccdULL;
  i = (i ^ (i >> 33)) * 0xc4ceb9fe1a85ec53ULL;
  return float((i ^ (i >> 33)) >> 40) / float(1 << 23) - 1.0f;
}

// Calls f(n, d, h, w, g) on every owned cell of the first `samples` local samples of `xb`: (d, h,
// w) relative to the owned box, g the cell's global index. The fills are free functions: CUDA
// allows no extended lambda in a constructor.
template <class F>
void forOwnedCells(const char* label, const TensorBlock& xb, index_t samples, index_t edge,
                   const F& f) {
  // Plain integers in the lambda: Box's accessors are host functions.
  const Box o = xb.owned();
  const index_t n0 = xb.sampleBegin(), d0 = o.min(0), h0 = o.min(1), w0 = o.min(2);
  Kokkos::parallel_for(
      label,
      Kokkos::MDRangePolicy<Kokkos::Rank<4>, Kokkos::IndexType<index_t>>(
          {0, d0, h0, w0}, {samples, o.max(0), o.max(1), o.max(2)}),
      KOKKOS_LAMBDA(index_t n, index_t d, index_t h, index_t w) {
        const std::uint64_t g = std::uint64_t((((n0 + n) * edge + d) * edge + h) * edge + w);
        f(n, d - d0, h - h0, w - w0, g);
      });
}

void fillInput(const HaloTensor<float>& x, index_t edge) {
  const TensorBlock& xb = x.block();
  const Extents3 lo = xb.toLocal(xb.owned().min());
  const index_t ld = lo[0], lh = lo[1], lw = lo[2];  // std::array's operator[] is host-only
  auto xv = x.view();
  forOwnedCells(
      "bench::unet_input", xb, xb.localSamples(), edge,
      KOKKOS_LAMBDA(index_t n, index_t d, index_t h, index_t w, std::uint64_t g) {
        xv(n, 0, d + ld, h + lh, w + lw) = hashed(g);
      });
}

void fillLabels(const HaloTensor<std::int32_t>& labels, const TensorBlock& xb,
                const TensorBlock& yb, index_t edge) {
  auto lv = labels.view();
  forOwnedCells(
      "bench::unet_labels", xb, yb.localSamples(), edge,
      KOKKOS_LAMBDA(index_t n, index_t d, index_t h, index_t w, std::uint64_t g) {
        lv(n, 0, d, h, w) = std::int32_t((hashed(g + 7) + 1.0f) * 1.5f) % 3;
      });
}

struct Step {
  ProcessGrid grid;
  std::unique_ptr<nn::Model> model;
  HaloTensor<std::int32_t> labels;
  std::unique_ptr<nn::Optimizer> optimizer;
  std::unique_ptr<nn::GradientReducer> reducer;
  nn::CrossEntropyLoss loss;
  nn::RunContext ctx;

  Step(index_t edge, index_t base, int depth, index_t batch, index_t classes = 3)
      : grid(MPI_COMM_WORLD, gridFor(worldSize())) {
    nn::UNetConfig c;
    c.input_size = edge;
    c.base = base;
    c.depth = depth;
    c.classes = classes;
    model = nn::makeUNet3d(c);
    model->build(grid, batch);
    nn::initializeParameters(model->parameters(), 1);
    nn::OptimizerConfig oc;
    oc.kind = nn::OptimizerKind::Sgd;
    oc.lr = 1e-3;
    optimizer = nn::makeOptimizer(model->parameters(), oc);
    reducer = std::make_unique<nn::GradientReducer>(grid.comm(), model->parameters());
    // Inputs and labels from the global cell index: the same data on every grid.
    fillInput(model->input().tensor, edge);
    labels = HaloTensor<std::int32_t>("bench::labels", grid.blockOf({batch, 1, edge, edge, edge}));
    fillLabels(labels, model->input().tensor.block(), model->output().tensor.block(), edge);
    Kokkos::fence();
    ctx.grid = &grid;
    ctx.reducer = reducer.get();
  }

  // One step timed in pieces for the ideal's breakdown.
  void runInPieces(bench::StepPieces& p) {
    ctx.timers = &p.forward;
    model->forward(ctx);
    p.loss_s +=
        secondsOf([&] { loss.compute(grid, model->output(), labels, &model->outputGradient()); });
    ctx.timers = &p.backward;
    model->backward(ctx);
    p.optimizer_s += secondsOf([&] {
      optimizer->step(1e-3);
      Kokkos::fence();
    });
  }
  // The cross-entropy's compulsory bytes: logits read, labels (int32, one per cell) read, gradient
  // written.
  double lossBytes() const {
    const Shape5 s = model->output().spec.shape;
    const TensorBlock& b = model->output().tensor.block();
    const double cells = double(b.localSamples()) * double(b.owned().size());
    return (2.0 * double(s[1]) + 1.0) * cells * sizeof(float);
  }

  void run() {
    model->forward(ctx);
    loss.compute(grid, model->output(), labels, &model->outputGradient());
    model->backward(ctx);
    optimizer->step(1e-3);
    Kokkos::fence();
  }
};

void unetStep(benchmark::State& state) {
  const index_t batch = state.range(3);
  Step s(state.range(0), state.range(1), int(state.range(2)), batch);
  s.run();  // first touch of every buffer
  double total = 0;
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    s.run();
    const double t = maxOverRanks(MPI_Wtime() - t0);
    state.SetIterationTime(t);
    total += t;
  }
  state.counters["samples_per_s"] = double(batch) * double(state.iterations()) / total;
  state.counters["ranks"] = worldSize();
  state.counters["threads"] = Kokkos::DefaultExecutionSpace().concurrency();
}

void unetStepVsIdeal(benchmark::State& state) {
  const index_t batch = state.range(3);
  Step s(state.range(0), state.range(1), int(state.range(2)), batch);
  IdealStepAnchor ideal(*s.model, s.grid.coords(), *s.optimizer, s.lossBytes());
  StepPieces pieces;
  s.runInPieces(pieces);  // first touch of every buffer
  pieces.reset();
  double total = 0;
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    s.runInPieces(pieces);
    const double t = maxOverRanks(MPI_Wtime() - t0);
    state.SetIterationTime(t);
    total += t;
    ideal.measure();
  }
  const double n = double(state.iterations());
  state.counters["samples_per_s"] = double(batch) * n / total;
  state.counters["ranks"] = worldSize();
  state.counters["threads"] = Kokkos::DefaultExecutionSpace().concurrency();
  ideal.report(state, total / n, pieces, n, s.grid.shape().str());
}

// The configuration: 64^3, base 8, depth 3, batch 1.
BENCHMARK(unetStep)
    ->Args({64, 8, 3, 1})
    ->ArgNames({"edge", "base", "depth", "batch"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
// The CTest smoke configuration.
BENCHMARK(unetStep)
    ->Name("unetStep_smoke")
    ->Args({16, 2, 2, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(unetStepVsIdeal)
    ->Args({64, 8, 3, 1})
    ->ArgNames({"edge", "base", "depth", "batch"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(unetStepVsIdeal)
    ->Name("unetStepVsIdeal_smoke")
    ->Args({16, 2, 2, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace halo3d::bench
