// The performance model on cases computed by hand: the halo bytes of a known plan, the gradient
// allreduce for given alpha-beta-gamma, the lateness of ranks that time-share a core, the memory
// of a small model against what its build allocates, and calibration feeding the compute term.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/MemoryTracker.hpp"
#include "halo3d/nn/Init.hpp"
#include "halo3d/nn/Loss.hpp"
#include "halo3d/nn/layers/Conv3d.hpp"
#include "halo3d/nn/models/CosmoFlow.hpp"
#include "halo3d/nn/plan/Calibration.hpp"
#include "halo3d/nn/plan/GridChoice.hpp"
#include "halo3d/nn/plan/StepModel.hpp"

namespace halo3d::nn {
namespace {

// A calibrated machine whose every link costs alpha + bytes * beta, with no layer timings yet.
Machine linksOnly(double alpha, double beta, double gamma) {
  Machine m;
  m.name = "test";
  m.cores_per_node = 64;
  m.shared_memory = m.network = Link{alpha, beta};
  m.reduction_gamma_s_per_byte = gamma;
  m.io_read_bytes_per_s = 1e12;
  return m;
}

std::unique_ptr<Model> oneConv(index_t c_in, index_t c_out, index_t edge) {
  auto m = std::make_unique<Model>();
  m->input({c_in, edge, edge, edge});
  m->add(std::make_unique<Conv3d>("conv", c_in, c_out, WindowGeometry::cubic(3, 1, 1), false));
  return m;
}

// One timed run per layer, no scheduler slice, and `loss` timed (none if empty).
CalibrationOptions quickCalibration(const std::string& loss = {}) {
  CalibrationOptions o;
  o.repetitions = 1;
  o.scheduler_slice = false;
  o.loss = loss;
  return o;
}

// Writes a minimal valid machine file to `path`, with `extra` (", key: value" pairs) added.
void writeMachineFile(const std::string& path, const std::string& extra = {}) {
  std::ofstream f(path);
  f << R"({"name": "x", "cores_per_node": 2, "devices_per_node": 0,
           "links": {"shared_memory": {"alpha_s": 1e-6, "beta_s_per_byte": 1e-10},
                     "network": {"alpha_s": 1e-6, "beta_s_per_byte": 1e-10}},
           "reduction": {"gamma_s_per_byte": 1e-10}, "io": {"read_bytes_per_s": 1e9},
           "compute": {"kind": "calibrated"})"
    << extra << "}";
}

// One 3^3 convolution on 1 x 2 x 8^3 split in two along D: each rank sends its face of 2 channels x
// 8 x 8 cells, packed (rows of 8 floats are far below the direct path's 8 KiB runs), once, forward
// only (the data has no gradient).
TEST(StepModel, HaloBytesOfAKnownPlan) {
  auto model = oneConv(2, 3, 8);
  const ModelPlan plan = model->plan(GridShape(1, 2, 1, 1), 1);
  Machine m = linksOnly(1e-6, 1e-9, 0);
  const ProcessGrid self(MPI_COMM_SELF, GridShape(1, 1, 1, 1));
  CalibrationOptions o;
  o.repetitions = 1;
  EXPECT_GT(calibrate(*model, {plan}, m, o), 0);
  RunShape run;
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = run.trainable_parameters;
  const StepPrediction p = predictStep(plan, m, run);
  ASSERT_EQ(p.layers.size(), 1u);
  EXPECT_EQ(p.layers[0].halo_bytes, 2.0 * 8 * 8 * 4);
  EXPECT_EQ(p.layers[0].halo_messages, 1.0);
  // Its cost: one message, at most; overlap may hide it behind the interior (6 of 8 planes).
  EXPECT_LE(p.layers[0].halo_s, 1e-6 + 512 * 1e-9 + 1e-15);
  EXPECT_GT(p.compute_s, 0.0);
}

// The gradient allreduce of n bytes: Open MPI's choice for GradientReducer's MPI_Iallreduce (into a
// receive buffer). Under 64 KiB, a binomial reduce and broadcast: ceil(log2 P) rounds of
// 2 (alpha + n beta) + n gamma. Larger, on P = 4: reduce-scatter + allgather, 2 log2 P alpha +
// 2 (P-1)/P n beta + (P-1)/P n gamma. Plus the loss's and the step's small allreduces (3 log2 P
// alpha).
TEST(StepModel, GradientAllreduceForGivenAlphaBetaGamma) {
  const double alpha = 2e-6, beta = 3e-10, gamma = 5e-10;
  Machine m = linksOnly(alpha, beta, gamma);
  const auto predict = [&](index_t out) {
    auto model = oneConv(4, out, 8);
    const ModelPlan plan = model->plan(GridShape(4, 1, 1, 1), 4);
    CalibrationOptions o;
    o.repetitions = 1;
    calibrate(*model, {plan}, m, o);
    RunShape run;
    run.trainable_parameters = out * 4 * 27;
    run.all_parameters = run.trainable_parameters;
    return predictStep(plan, m, run).allreduce_s;
  };
  for (const index_t out : {8, 128}) {  // 3.4 KiB and 55 KiB of gradients
    const double n = double(out * 4 * 27) * 4;
    EXPECT_NEAR(predict(out), 2 * (2 * (alpha + n * beta) + n * gamma) + 3 * 2 * alpha, 1e-15);
  }
  const double n = double(256 * 4 * 27) * 4, p = 4;  // 110 KiB
  const double rabenseifner = 2 * 2 * alpha + 2 * (p - 1) / p * n * beta + (p - 1) / p * n * gamma;
  EXPECT_NEAR(predict(256), rabenseifner + 3 * 2 * alpha, 1e-15);
}

// A bf16 wire (--allreduce-precision bf16): half the bytes, reduced in place, which Open MPI's
// libnbc does with its binomial algorithm at every size: ceil(log2 P) rounds of 2 (alpha + n/2
// beta) + n/2 gamma; and no receive buffer in the memory.
TEST(StepModel, Bf16WireHalvesTheAllreduceAndItsBuffer) {
  const double alpha = 2e-6, beta = 3e-10, gamma = 5e-10;
  Machine m = linksOnly(alpha, beta, gamma);
  auto model = oneConv(4, 256, 8);
  const ModelPlan plan = model->plan(GridShape(4, 1, 1, 1), 4);
  CalibrationOptions o;
  o.repetitions = 1;
  calibrate(*model, {plan}, m, o);
  RunShape run;
  run.trainable_parameters = 256 * 4 * 27;
  run.all_parameters = run.trainable_parameters;
  const auto buffers = [](const StepPrediction& p) {
    for (const MemoryTerm& t : p.memory)
      if (t.what == "gradient allreduce buffers") return t.bytes;
    ADD_FAILURE() << "no gradient allreduce term";
    return std::size_t(0);
  };
  EXPECT_EQ(buffers(predictStep(plan, m, run)), std::size_t(256 * 4 * 27 * 4));
  run.gradient_wire_bytes = 2;
  const StepPrediction p = predictStep(plan, m, run);
  const double half = double(256 * 4 * 27) * 2;  // 55 KiB on the wire
  EXPECT_NEAR(p.allreduce_s, 2 * (2 * (alpha + half * beta) + half * gamma) + 3 * 2 * alpha, 1e-15);
  EXPECT_EQ(buffers(p), 0u);
}

// The memory of a small CosmoFlow on 1 rank: the activations and gradients its build allocates, and
// the parameters, are what the model predicts (the other terms come from other owners).
TEST(StepModel, MemoryOfASmallModelAgainstItsAllocations) {
  MemoryTracker::install();
  CosmoFlowConfig c;
  c.input_size = 32;
  c.width = 0.125;
  auto model = makeCosmoFlow(c);
  const std::size_t before = MemoryTracker::usage("Host").current;
  model->parameters().finalize();
  const std::size_t params = MemoryTracker::usage("Host").current - before;
  const ProcessGrid self(MPI_COMM_SELF, GridShape(1, 1, 1, 1));
  model->build(self, 2, std::size_t(1) << 30);
  const std::size_t activations = MemoryTracker::usage("Host").current - before - params;
  Machine m = linksOnly(1e-6, 1e-9, 1e-9);
  CalibrationOptions o;
  o.repetitions = 1;
  auto fresh = makeCosmoFlow(c);
  const ModelPlan plan = fresh->plan(GridShape(1, 1, 1, 1), 2);
  calibrate(*fresh, {plan}, m, o);
  RunShape run;
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = index_t(model->parameters().values().size());
  const StepPrediction p = predictStep(plan, m, run);
  ASSERT_GE(p.memory.size(), 2u);
  EXPECT_EQ(p.memory[0].what, "activations and gradients");
  EXPECT_EQ(p.memory[0].bytes, activations);
  EXPECT_EQ(p.memory[1].bytes, params);
  EXPECT_GE(p.peak_bytes, activations + params);
}

// The batch read of a prefetching loader: hidden behind the step when a core is free for the
// loader's thread, the whole read when the ranks' threads fill the cores (it then runs on a rank's
// own core). One conv on 1 x 2 x 8^3 at grid 2x1x1x1: each rank reads 1 x 2 x 8^3 floats, 4 KiB.
TEST(StepModel, PrefetchHidesTheReadOnlyWithAFreeCore) {
  auto model = oneConv(2, 3, 8);
  const ModelPlan plan = model->plan(GridShape(2, 1, 1, 1), 2);
  Machine m = linksOnly(1e-6, 1e-9, 1e-9);
  m.io_read_bytes_per_s = 4096.0 / 10;  // the read takes 10 s, far longer than the step
  CalibrationOptions o;
  o.repetitions = 1;
  calibrate(*model, {plan}, m, o);
  RunShape run;
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = run.trainable_parameters;
  run.ranks_per_node = 2;
  const auto io = [&](int cores, bool prefetch) {
    m.cores_per_node = cores;
    run.prefetch = prefetch;
    const StepPrediction p = predictStep(plan, m, run);
    const double busy = p.compute_s + p.halo_s + p.redistribute_s + p.allreduce_s + p.timeshare_s;
    EXPECT_DOUBLE_EQ(p.step_s, busy + p.io_s);
    return std::make_pair(p.io_s, busy);
  };
  const auto [free_core, busy] = io(4, true);
  EXPECT_NEAR(free_core, 10.0 - busy, 1e-9);
  EXPECT_NEAR(io(2, true).first, 10.0, 1e-9);  // 2 ranks fill 2 cores: nothing hides the read
  EXPECT_NEAR(io(4, false).first, 10.0, 1e-9);
}

// The batch read calibrated on the run's data (RunShape::batch_read): the machine file's timing of
// the largest rank's block of one sample replaces the bytes over the read rate, stretched when
// ranks share cores; a file without it, or a run that names none, falls back to the rate, with a
// note.
TEST(StepModel, BatchReadTimingReplacesTheReadRate) {
  auto model = oneConv(2, 3, 8);
  const ModelPlan plan = model->plan(GridShape(1, 2, 1, 1), 1);
  Machine m = linksOnly(1e-6, 1e-9, 1e-9);
  m.io_read_bytes_per_s = 2048.0 / 3;  // rank 0's 1 x 2 x 4 x 8 x 8 floats (2 KiB) in 3 s
  CalibrationOptions o;
  o.repetitions = 1;
  o.scheduler_slice = false;
  calibrate(*model, {plan}, m, o);
  RunShape run;
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = run.trainable_parameters;
  run.ranks_per_node = 2;
  run.prefetch = false;  // the read adds to the step whole
  m.cores_per_node = 2;
  const auto noted = [](const StepPrediction& p) {
    for (const std::string& n : p.notes)
      if (n.find("priced at io.read_bytes_per_s") != std::string::npos) return true;
    return false;
  };
  EXPECT_NEAR(predictStep(plan, m, run).io_s, 3.0, 1e-9);
  EXPECT_FALSE(noted(predictStep(plan, m, run)));  // no timing named: the rate, as before
  run.batch_read = "batch read cosmoflow int16";
  const StepPrediction untimed = predictStep(plan, m, run);
  EXPECT_NEAR(untimed.io_s, 3.0, 1e-9);
  EXPECT_TRUE(noted(untimed));
  const LayerTiming key = batchReadKey(plan, run.batch_read, 1);
  EXPECT_EQ(key.input, (Shape5{1, 2, 4, 8, 8}));   // rank 0's half along D
  EXPECT_EQ(key.output, (Shape5{1, 2, 8, 8, 8}));  // one sample
  LayerTiming t = key;
  t.forward_s = 0.25;
  m.record(t);
  const StepPrediction timed = predictStep(plan, m, run);
  EXPECT_NEAR(timed.io_s, 0.25, 1e-12);
  EXPECT_FALSE(noted(timed));
  EXPECT_NEAR(untimed.step_s - timed.step_s, 3.0 - 0.25, 1e-9);
  m.cores_per_node = 1;  // two ranks on one core: stretched twice
  EXPECT_NEAR(predictStep(plan, m, run).io_s, 0.5, 1e-12);
  run.batch_read = "batch read cosmoflow float32";  // other data: not this timing
  EXPECT_TRUE(noted(predictStep(plan, m, run)));
}

// The same in bf16: the activations and gradients are priced at 2 bytes and are what the build
// allocates, the parameters stay 4 bytes, and the bridge's float scratch is a term of its own; a
// training step's measured peak (no optimizer, loader or allreduce here) stays within the
// predicted peak.
TEST(StepModel, MemoryOfASmallBf16ModelAgainstItsAllocations) {
  MemoryTracker::install();
  CosmoFlowConfig c;
  c.input_size = 32;
  c.width = 0.125;
  auto model = makeCosmoFlow(c);
  const std::size_t before = MemoryTracker::usage("Host").current;
  model->parameters().finalize();
  const std::size_t params = MemoryTracker::usage("Host").current - before;
  const ProcessGrid self(MPI_COMM_SELF, GridShape(1, 1, 1, 1));
  model->build(self, 2, std::size_t(1) << 30, Precision::bf16);
  const std::size_t activations = MemoryTracker::usage("Host").current - before - params;
  Machine m = linksOnly(1e-6, 1e-9, 1e-9);
  CalibrationOptions o;
  o.repetitions = 1;
  auto fresh = makeCosmoFlow(c);
  const ModelPlan plan = fresh->plan(GridShape(1, 1, 1, 1), 2);
  calibrate(*fresh, {plan}, m, o);
  RunShape run;
  run.element_bytes = elementBytes(Precision::bf16);
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = index_t(model->parameters().values().size());
  const StepPrediction p = predictStep(plan, m, run);
  ASSERT_GE(p.memory.size(), 2u);
  EXPECT_EQ(p.memory[0].bytes, activations);
  EXPECT_EQ(p.memory[0].bytes, model->activationBytes());
  EXPECT_EQ(p.memory[1].bytes, params);
  EXPECT_EQ(p.memory.back().what, "bf16 fallback scratch (largest layer)");
  EXPECT_GT(p.memory.back().bytes, 0u);
  MemoryTracker::resetPeak();
  RunContext ctx;
  ctx.grid = &self;
  model->forward(ctx);
  std::vector<float> targets(8, 0.5f);
  MseLoss().compute(self, model->output(), targets, &model->outputGradient());
  model->backward(ctx);
  const std::size_t step_peak = MemoryTracker::usage("Host").peak - before;
  std::printf("bf16 CosmoFlow 32^3 x 1/8: step peak %zu bytes, predicted peak %zu\n", step_peak,
              p.peak_bytes);
  EXPECT_LE(step_peak, p.peak_bytes);
}

// Grid choice at 4 ranks, batch 2: 4 sample groups cannot share 2 samples, every other grid of a
// 32^3 CosmoFlow plans; the valid ones come fastest first; a limit below every plan is refused with
// the smallest requirement.
TEST(StepModel, GridChoiceOrdersTheValidGridsAndExplainsTheOthers) {
  CosmoFlowConfig c;
  c.input_size = 32;
  c.width = 0.125;
  auto model = makeCosmoFlow(c);
  Machine m = linksOnly(1e-6, 1e-9, 1e-9);
  std::vector<ModelPlan> plans;
  for (const GridShape& g : allGrids(4))
    if (g.n() <= 2) plans.push_back(model->plan(g, 2));
  CalibrationOptions o;
  o.repetitions = 1;
  calibrate(*model, plans, m, o);
  RunShape run;
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = run.trainable_parameters;
  const auto all = candidateGrids(*model, 4, 2, m, run, 0);
  ASSERT_EQ(all.size(), allGrids(4).size());
  int valid = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].valid()) {
      ++valid;
      EXPECT_GT(all[i].prediction.step_s, 0.0);
      // Fastest first, except that grids within 0.1% of each other are ties (ordered by split
      // dimension, GridChoice.cpp): the live calibration can put two grids that close.
      if (i > 0) {
        EXPECT_LE(all[i - 1].prediction.step_s, all[i].prediction.step_s * (1 + 1e-3));
      }
    } else {
      EXPECT_EQ(all[i].grid.n(), 4) << all[i].grid.str() << ": " << all[i].why_not;
      EXPECT_NE(all[i].why_not.find("does not divide"), std::string::npos);
    }
  }
  EXPECT_EQ(valid, int(all.size()) - 1);
  EXPECT_EQ(&bestGrid(all, 0), &all.front());
  const auto tight = candidateGrids(*model, 4, 2, m, run, 1000);
  try {
    bestGrid(tight, 1000);
    FAIL() << "a 1000-byte limit was met";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the smallest requirement is"), std::string::npos)
        << e.what();
  }
}

// E[max of k standard normals] in closed form for k = 2 and 3: 1/sqrt(pi) and 3/(2 sqrt(pi)).
TEST(StepModel, ExpectedMaxOfNormals) {
  EXPECT_EQ(expectedMaxOfNormals(1), 0.0);
  EXPECT_NEAR(expectedMaxOfNormals(2), 0.5641895835477563, 1e-7);
  EXPECT_NEAR(expectedMaxOfNormals(3), 0.8462843753216345, 1e-7);
  EXPECT_GT(expectedMaxOfNormals(8), expectedMaxOfNormals(4));
}

// Two ranks time-sharing one core (s = 2) at grid 1x2x1x1 of one conv on 1 x 2 x 8^3: they meet at
// the forward halo gather (the data has no gradient, so no backward scatter) and at the step's
// allreduces after backward. Each meeting costs E[max of 2 normals] sqrt(D min(D, q) (s - 1)) / s
// for the D seconds of stretched compute since the previous one: the conv's forward, then its
// backward (a walk of D / q slices of the scheduler, or one step no longer than D under a slice).
// Nothing without a measured slice or with one rank per core and no loader thread beside it.
TEST(StepModel, TimeSharingRanksMeetLateBySliceRandomWalk) {
  auto model = oneConv(2, 3, 8);
  const ModelPlan plan = model->plan(GridShape(1, 2, 1, 1), 1);
  Machine m = linksOnly(1e-6, 1e-9, 0);
  const CalibrationOptions o = quickCalibration();
  calibrate(*model, {plan}, m, o);
  EXPECT_EQ(m.scheduler_slice_s, 0.0);
  RunShape run;
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = run.trainable_parameters;
  run.ranks_per_node = 2;
  m.cores_per_node = 1;
  m.io_read_bytes_per_s = 1e15;                           // a negligible read
  EXPECT_EQ(predictStep(plan, m, run).timeshare_s, 0.0);  // no slice measured
  // Round timings: the convolution's forward longer than a slice once stretched, its backward
  // shorter, so that both regimes of the walk are priced.
  const auto roundTimings = [&] {
    for (LayerTiming& t : m.layers) {
      if (t.layer.rfind("Conv3d(", 0) == 0) {
        t.forward_s = 5e-3;
        t.backward_s = 1e-3;
      }
      if (t.layer == kInputStore) t.forward_s = 1e-3;
    }
  };
  roundTimings();
  const double q = 4e-3, z2 = 0.5641895835;
  // sigma of a stretch of d seconds with s runnable threads per core: a walk of d / q slices, or
  // one step no longer than d itself.
  const auto sigma = [&](double d, double s) {
    return std::sqrt(d * std::min(d, q) * (s - 1)) / s;
  };
  m.scheduler_slice_s = q;
  const StepPrediction p = predictStep(plan, m, run);
  ASSERT_EQ(p.layers.size(), 1u);
  // The batch is stored into the input before forward: compute before the first meeting. Two
  // ranks on one core stretch it twice: 12 ms before the forward's meeting (over a slice), 2 ms
  // before the backward's (under one).
  const double f = p.input_s + p.layers[0].forward_s, b = p.layers[0].backward_s;
  EXPECT_NEAR(f, 12e-3, 1e-12);
  EXPECT_NEAR(b, 2e-3, 1e-12);
  EXPECT_NEAR(p.layers[0].timeshare_s, z2 * std::sqrt(f * q) / 2, 1e-9);
  EXPECT_NEAR(p.timeshare_s, z2 * std::sqrt(f * q) / 2 + z2 * b / 2, 1e-9);
  EXPECT_NEAR(p.timeshare_s, z2 * (sigma(f, 2) + sigma(b, 2)), 1e-9);
  EXPECT_DOUBLE_EQ(
      p.step_s, p.compute_s + p.halo_s + p.redistribute_s + p.allreduce_s + p.timeshare_s + p.io_s);
  m.cores_per_node = 2;  // one rank per core, the loader's read negligible
  EXPECT_LT(predictStep(plan, m, run).timeshare_s, 1e-3 * p.timeshare_s);
  run.prefetch = false;  // the read runs on the rank's own thread
  EXPECT_EQ(predictStep(plan, m, run).timeshare_s, 0.0);
  // A loader thread busy for half the step's work on each rank's core: s = 2 (1 + 0.5) / 2 = 1.5,
  // sqrt(s - 1) / s = sqrt(0.5) / 1.5.
  run.prefetch = true;
  const StepPrediction one = predictStep(plan, m, run);  // unstretched
  const double f1 = one.input_s + one.layers[0].forward_s, b1 = one.layers[0].backward_s;
  run.read_bytes_per_rank = 1000;
  m.io_read_bytes_per_s =
      1000 / (0.5 * (one.compute_s + one.halo_s + one.redistribute_s + one.allreduce_s));
  const StepPrediction l = predictStep(plan, m, run);
  EXPECT_NEAR(l.timeshare_s, z2 * (std::sqrt(f1 * q * 0.5) + b1 * std::sqrt(0.5)) / 1.5, 1e-9);
  run.read_bytes_per_rank = 0;
  m.io_read_bytes_per_s = 1e15;
  // Sample groups alone (2x1x1x1) meet only at the step's allreduces, after all of the compute.
  const ModelPlan data = model->plan(GridShape(2, 1, 1, 1), 2);
  calibrate(*model, {data}, m, o);
  roundTimings();
  m.cores_per_node = 1;
  const StepPrediction d = predictStep(data, m, run);
  const double all = d.input_s + d.layers[0].forward_s + d.layers[0].backward_s;
  EXPECT_NEAR(all, 14e-3, 1e-12);
  EXPECT_NEAR(d.timeshare_s, z2 * std::sqrt(all * q) / 2, 1e-9);
  // Shorter than a slice: the lateness is the stretch itself times the prefactor, not sqrt(D q).
  for (LayerTiming& t : m.layers)
    if (t.layer.rfind("Conv3d(", 0) == 0) t.forward_s = t.backward_s = 0.25e-3;
  const StepPrediction shortStep = predictStep(data, m, run);
  const double brief = shortStep.input_s + 2 * shortStep.layers[0].forward_s;
  EXPECT_NEAR(brief, 3e-3, 1e-12);
  EXPECT_NEAR(shortStep.timeshare_s, z2 * brief / 2, 1e-9);
}

// Ranks on separate cores (one per core, none time-sharing) add Machine::core_pacing times the
// step's compute as lateness: on the layer by its own compute, the rest on the step. Nothing at
// one rank, with ranks sharing a core (timeshare() prices those), or on a device machine.
TEST(StepModel, RanksOnSeparateCoresArePacedByTheMeasuredFraction) {
  auto model = oneConv(2, 3, 8);
  const ModelPlan plan = model->plan(GridShape(1, 2, 1, 1), 1);
  Machine m = linksOnly(1e-6, 1e-9, 0);
  const CalibrationOptions o = quickCalibration();
  calibrate(*model, {plan}, m, o);
  for (LayerTiming& t : m.layers)
    if (t.layer.rfind("Conv3d(", 0) == 0) {
      t.forward_s = 5e-3;
      t.backward_s = 1e-3;
    }
  RunShape run;
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = run.trainable_parameters;
  run.ranks_per_node = 2;
  run.prefetch = false;
  m.cores_per_node = 2;
  m.io_read_bytes_per_s = 1e15;
  const StepPrediction plain = predictStep(plan, m, run);
  EXPECT_EQ(plain.timeshare_s, 0.0);
  m.core_pacing = 0.1;
  const StepPrediction p = predictStep(plan, m, run);
  ASSERT_EQ(p.layers.size(), 1u);
  EXPECT_NEAR(p.layers[0].timeshare_s, 0.1 * 6e-3, 1e-15);
  EXPECT_NEAR(p.timeshare_s, 0.1 * plain.compute_s, 1e-15);
  EXPECT_GT(plain.compute_s, 6e-3);  // the input store and the optimizer are paced too
  EXPECT_NEAR(p.step_s, plain.step_s + 0.1 * plain.compute_s, 1e-15);
  m.cores_per_node = 1;  // two ranks on one core: time-sharing, no slice measured, no pacing
  EXPECT_EQ(predictStep(plan, m, run).timeshare_s, 0.0);
  m.cores_per_node = 2;
  const ModelPlan one = model->plan(GridShape(1, 1, 1, 1), 1);
  calibrate(*model, {one}, m, o);
  EXPECT_EQ(predictStep(one, m, run).timeshare_s, 0.0);
  m.devices_per_node = 2;
  EXPECT_EQ(predictStep(plan, m, run).timeshare_s, 0.0);
}

// The pacing is read from the machine file, and refused outside [0, 1] naming the key.
TEST(StepModel, CorePacingIsReadFromTheMachineFile) {
  const std::string path = "halo3d_test_machine_pacing.json";
  writeMachineFile(path);
  EXPECT_EQ(Machine::load(path).core_pacing, 0.0);
  writeMachineFile(path, R"(, "core_pacing": {"fraction": 0.05, "source": "test"})");
  Machine m = Machine::load(path);
  EXPECT_EQ(m.core_pacing, 0.05);
  m.save(path);  // kept with the rest of the document
  EXPECT_EQ(Machine::load(path).core_pacing, 0.05);
  for (const std::string bad :
       {R"(, "core_pacing": {"fraction": 1.5})", R"(, "core_pacing": {"fraction": "high"})",
        R"(, "core_pacing": {})"}) {
    writeMachineFile(path, bad);
    try {
      Machine::load(path);
      FAIL() << "loaded" << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("core_pacing.fraction"), std::string::npos) << e.what();
    }
  }
  std::remove(path.c_str());
}

// Storing the batch into the model's input (outside every layer's timer in a step) is timed by the
// calibration on each representative rank's input block and added to the step's compute, stretched
// like the layers when ranks share cores; a block that was not timed is scaled from the nearest by
// its cells; without any timing it is left out with a note.
TEST(StepModel, InputStoreIsCalibratedAndPriced) {
  auto model = oneConv(2, 3, 8);
  const ModelPlan plan = model->plan(GridShape(1, 2, 1, 1), 1);
  Machine m = linksOnly(1e-6, 1e-9, 0);
  const CalibrationOptions o = quickCalibration();
  calibrate(*model, {plan}, m, o);
  const Shape5 first{1, 2, 4, 8, 8};  // rank 0's half of 1 x 2 x 8^3 along D
  LayerTiming* store = nullptr;
  for (LayerTiming& t : m.layers)
    if (t.layer == kInputStore && t.input == first) store = &t;
  ASSERT_NE(store, nullptr) << "no input store timed on rank 0's block";
  EXPECT_GT(store->forward_s, 0.0);
  EXPECT_EQ(store->output, first);
  RunShape run;
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = run.trainable_parameters;
  run.ranks_per_node = 2;
  store->forward_s = 0.01;
  const StepPrediction p = predictStep(plan, m, run);
  EXPECT_DOUBLE_EQ(p.input_s, 0.01);
  m.cores_per_node = 1;  // two ranks on one core: stretched twice
  const StepPrediction shared = predictStep(plan, m, run);
  EXPECT_DOUBLE_EQ(shared.input_s, 0.02);
  m.cores_per_node = 64;
  // Only a block of a quarter of the cells timed: a copy scales with its cells.
  std::vector<LayerTiming> others;
  for (const LayerTiming& t : m.layers)
    if (t.layer != kInputStore) others.push_back(t);
  m.layers = others;
  const StepPrediction none = predictStep(plan, m, run);
  EXPECT_EQ(none.input_s, 0.0);
  EXPECT_NEAR(p.compute_s - none.compute_s, 0.01, 1e-12);
  EXPECT_NEAR(p.step_s - none.step_s, 0.01, 1e-12);
  bool noted = false;
  for (const std::string& n : none.notes)
    noted = noted || n.find("no 'input store' timing") != std::string::npos;
  EXPECT_TRUE(noted);
  LayerTiming quarter;
  quarter.layer = kInputStore;
  quarter.input = quarter.output = {1, 2, 2, 4, 8};
  quarter.forward_s = 0.004;
  m.record(quarter);
  EXPECT_DOUBLE_EQ(predictStep(plan, m, run).input_s, 0.016);
}

// The loss and its gradient run between forward and backward, outside every layer: timed on each
// representative rank's output block, priced on the largest rank's, scaled by the cells from the
// nearest block where that one was not timed, left out (with a note) where nothing was timed.
TEST(StepModel, LossIsCalibratedAndPriced) {
  auto model = oneConv(2, 3, 8);  // 3 output channels: 3 classes
  const ModelPlan plan = model->plan(GridShape(1, 2, 1, 1), 1);
  Machine m = linksOnly(1e-6, 1e-9, 0);
  calibrate(*model, {plan}, m, quickCalibration("ce"));
  const Shape5 first{1, 3, 4, 8, 8};  // rank 0's half of the 1 x 3 x 8^3 output along D
  LayerTiming* ce = nullptr;
  for (LayerTiming& t : m.layers)
    if (t.layer == "loss ce" && t.input == first) ce = &t;
  ASSERT_NE(ce, nullptr) << "no loss timed on rank 0's output block";
  EXPECT_GT(ce->forward_s, 0.0);
  EXPECT_EQ(ce->output, first);
  EXPECT_EQ(lossKey(plan, ModelPlan::largestRank(), "ce", 1).input, first);
  RunShape run;
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = run.trainable_parameters;
  run.ranks_per_node = 2;
  ce->forward_s = 0.01;
  const StepPrediction without = predictStep(plan, m, run);  // no loss named: not priced
  EXPECT_EQ(without.loss_s, 0.0);
  run.loss = "ce";
  const StepPrediction p = predictStep(plan, m, run);
  EXPECT_DOUBLE_EQ(p.loss_s, 0.01);
  EXPECT_NEAR(p.compute_s - without.compute_s, 0.01, 1e-12);
  EXPECT_NEAR(p.step_s - without.step_s, 0.01, 1e-12);
  m.cores_per_node = 1;  // two ranks on one core: stretched twice
  EXPECT_DOUBLE_EQ(predictStep(plan, m, run).loss_s, 0.02);
  m.cores_per_node = 64;
  run.loss = "dice";  // another loss's timing does not price this one
  const StepPrediction none = predictStep(plan, m, run);
  EXPECT_EQ(none.loss_s, 0.0);
  bool noted = false;
  for (const std::string& n : none.notes)
    noted = noted || n.find("no 'loss dice' timing") != std::string::npos;
  EXPECT_TRUE(noted);
  LayerTiming quarter;
  quarter.layer = "loss dice";
  quarter.input = quarter.output = {1, 3, 2, 4, 8};
  quarter.forward_s = 0.004;
  m.record(quarter);
  EXPECT_DOUBLE_EQ(predictStep(plan, m, run).loss_s, 0.016);
}

// Each loss the apps name is timed, gradient included; another name is refused naming the choices.
TEST(StepModel, LossCalibrationKnowsTheAppsLosses) {
  auto model = oneConv(2, 3, 8);
  const ModelPlan plan = model->plan(GridShape(1, 1, 1, 1), 1);
  Machine m = linksOnly(1e-6, 1e-9, 0);
  calibrate(*model, {plan}, m, quickCalibration("dice"));
  const LayerTiming* dice = m.find(lossKey(plan, ModelPlan::largestRank(), "dice", 1));
  ASSERT_NE(dice, nullptr);
  EXPECT_GT(dice->forward_s, 0.0);
  try {
    calibrate(*model, {plan}, m, quickCalibration("hinge"));
    FAIL() << "an unknown loss was timed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown loss 'hinge' (mse, ce or dice)"),
              std::string::npos)
        << e.what();
  }
}

// Two threads pinned to one core take turns: the measured slice is a positive length shorter than
// the measurement (0 only where threads cannot be pinned).
TEST(StepModel, SchedulerSliceIsMeasured) {
  const double q = measureSchedulerSlice(0.2);
  std::printf("scheduler slice: %.3f ms\n", q * 1e3);
#ifdef __linux__
  EXPECT_GT(q, 0.0);
#endif
  EXPECT_LT(q, 0.2);
}

// The slice is read from and written to the machine file with its source.
TEST(StepModel, SchedulerSliceRoundTripsThroughTheMachineFile) {
  const std::string path = "halo3d_test_machine_slice.json";
  writeMachineFile(path);
  Machine m = Machine::load(path);
  EXPECT_EQ(m.scheduler_slice_s, 0.0);
  m.scheduler_slice_s = 3e-3;
  m.save(path);
  EXPECT_EQ(Machine::load(path).scheduler_slice_s, 0.0);  // not measured: not written
  m.scheduler_source = "test";
  m.save(path);
  EXPECT_EQ(Machine::load(path).scheduler_slice_s, 3e-3);
  writeMachineFile(path, R"(, "scheduler": {"slice_s": -1})");
  try {
    Machine::load(path);
    FAIL() << "a negative slice loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("scheduler.slice_s"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

// A machine file with a bad key is refused naming it.
TEST(StepModel, MalformedMachineFileNamesTheKey) {
  const std::string path = "halo3d_test_machine.json";
  {
    std::ofstream f(path);
    f << R"({"name": "x", "cores_per_node": 2, "devices_per_node": 0,
             "links": {"shared_memory": {"alpha_s": 1e-6, "beta_s_per_byte": 1e-10},
                       "network": {"alpha_s": "fast", "beta_s_per_byte": 1e-10}},
             "reduction": {"gamma_s_per_byte": 1e-10}, "io": {"read_bytes_per_s": 1e9},
             "compute": {"kind": "calibrated"}})";
  }
  try {
    Machine::load(path);
    FAIL() << "a malformed machine file loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("links.network.alpha_s"), std::string::npos) << e.what();
  }
  {
    std::ofstream f(path);
    f << "{ not json";
  }
  EXPECT_THROW(Machine::load(path), InputError);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace halo3d::nn
