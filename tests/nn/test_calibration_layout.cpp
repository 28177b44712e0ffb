// The calibration times a layer as the rank runs it: on the rank's own block layout and, where the
// layer exchanges halos, in the overlap's pieces, keyed by the rank's neighbours; the machine file
// keeps that key, and the step model prices a split rank with the timing of its pieces.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <fstream>

#include "CalibrationTestSupport.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/nn/Init.hpp"
#include "halo3d/nn/LayerTimers.hpp"
#include "halo3d/nn/layers/Conv3d.hpp"
#include "halo3d/nn/layers/Elementwise.hpp"
#include "halo3d/nn/plan/Calibration.hpp"
#include "halo3d/nn/plan/StepModel.hpp"

namespace halo3d::nn {
namespace {

// A 3^3 convolution (padding 1) and a LeakyReLU on 2 x 16^3.
std::unique_ptr<Model> convRelu() {
  auto m = std::make_unique<Model>();
  m->input({2, 16, 16, 16});
  m->add(std::make_unique<Conv3d>("conv", 2, 3, WindowGeometry::cubic(3, 1, 1), false));
  m->add(std::make_unique<LeakyRelu>("relu", 0.01));
  return m;
}

using testing::calibratedMachine;

using Sides = std::array<int, 3>;

TEST(CalibrationLayout, NeighboursAreTheSidesAWindowLayerExchangesWith) {
  auto model = convRelu();
  const ModelPlan w4 = model->plan(GridShape(1, 1, 1, 4), 1);
  EXPECT_EQ(exchangeNeighbours(w4, 1, GridCoords{0, 0, 0, 0}), (Sides{0, 0, 2}));
  EXPECT_EQ(exchangeNeighbours(w4, 1, GridCoords{0, 0, 0, 1}), (Sides{0, 0, 3}));
  EXPECT_EQ(exchangeNeighbours(w4, 1, GridCoords{0, 0, 0, 3}), (Sides{0, 0, 1}));
  // The elementwise layer exchanges nothing, whatever the split.
  EXPECT_EQ(exchangeNeighbours(w4, 2, GridCoords{0, 0, 0, 1}), (Sides{0, 0, 0}));
  const ModelPlan dw = model->plan(GridShape(1, 2, 1, 2), 1);
  EXPECT_EQ(exchangeNeighbours(dw, 1, GridCoords{0, 1, 0, 0}), (Sides{1, 0, 2}));
  // Sample groups alone: no spatial neighbour.
  EXPECT_EQ(exchangeNeighbours(model->plan(GridShape(2, 1, 1, 1), 2), 1, GridCoords{1, 0, 0, 0}),
            (Sides{0, 0, 0}));
  EXPECT_EQ(timingKey(w4, 1, GridCoords{0, 0, 0, 1}, 1).neighbours, (Sides{0, 0, 3}));
}

// Forward and backward in the overlap's pieces (no exchange) produce what one piece produces:
// every output cell and every input-gradient cell (owned and ghost) is computed, so the pieces
// timed are the whole work of the rank.
TEST(CalibrationLayout, OverlapPiecesComputeWhatTheWholeBlockComputes) {
  auto model = convRelu();
  model->parameters().finalize();
  initializeParameters(model->parameters(), 3);
  const ModelPlan plan = model->plan(GridShape(1, 1, 1, 4), 1);
  const ProcessGrid self(MPI_COMM_SELF, GridShape(1, 1, 1, 1));
  const GridCoords middle{0, 0, 0, 1};  // neighbours on both W sides
  auto* conv = dynamic_cast<WindowLayer*>(model->declaredLayer(1));
  ASSERT_NE(conv, nullptr);
  const auto activation = [&](int node) {
    Activation a;
    a.spec = plan.node(node).spec;
    a.tensor = Tensor("t", plan.block(node, middle));
    return a;
  };
  const auto fillAll = [](const Activation& a, unsigned seed) {
    auto h = Kokkos::create_mirror_view(a.tensor.view());
    float* p = h.data();
    unsigned x = seed;
    for (std::size_t i = 0; i < h.size(); ++i) {
      x = x * 1664525u + 1013904223u;
      p[i] = float(x >> 8) / float(1u << 24) - 0.5f;
    }
    Kokkos::deep_copy(a.tensor.view(), h);
  };
  // In a model the data gets no gradient; here the conv computes one, as a later conv would.
  Activation x = activation(0);
  fillAll(x, 1);  // ghosts included: they stand for what the exchange delivered
  Activation dy = activation(1);
  fillAll(dy, 2);
  std::array<std::vector<float>, 2> ys, dxs;
  for (int pieces = 0; pieces < 2; ++pieces) {
    Activation y = activation(1), dx = activation(0);
    std::vector<const Activation*> in{&x};
    std::vector<Activation*> din{&dx};
    conv->setup(self, in, y);
    conv->calibrateAsExchanging(pieces == 1);
    LayerTimers timers;
    RunContext ctx;
    ctx.grid = &self;
    ctx.training = true;
    ctx.timers = &timers;
    conv->forward(ctx, in, y);
    conv->backward(ctx, in, y, dy, din);
    fence("test: passes done");
    conv->calibrateAsExchanging(false);
    // The overlap's path ran (its exchange phases, empty here, are timed) only when asked for.
    if (pieces == 1)
      EXPECT_GT(timers.get("conv", Phase::HaloWait), 0.0);
    else
      EXPECT_EQ(timers.get("conv", Phase::HaloWait), 0.0);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.tensor.view());
    auto hdx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dx.tensor.view());
    ys[pieces].assign(hy.data(), hy.data() + hy.size());
    dxs[pieces].assign(hdx.data(), hdx.data() + hdx.size());
  }
  ASSERT_EQ(ys[0].size(), ys[1].size());
  double ymax = 0, dxmax = 0;
  for (std::size_t i = 0; i < ys[0].size(); ++i) {
    ymax = std::max(ymax, double(std::abs(ys[0][i])));
    EXPECT_NEAR(ys[1][i], ys[0][i], 1e-5) << "output cell " << i;
  }
  for (std::size_t i = 0; i < dxs[0].size(); ++i) {
    dxmax = std::max(dxmax, double(std::abs(dxs[0][i])));
    EXPECT_NEAR(dxs[1][i], dxs[0][i], 1e-5) << "input-gradient cell " << i;
  }
  EXPECT_GT(ymax, 0.0);  // something was computed
  EXPECT_GT(dxmax, 0.0);
}

// A split plan's window layer is timed per neighbours, the elementwise layer once per block; the
// step model prices each rank with the timing of its own pieces, and without one falls back to the
// whole block's with a note.
TEST(CalibrationLayout, SplitRanksAreTimedInTheirPiecesAndPricedSo) {
  auto model = convRelu();
  const ModelPlan plan = model->plan(GridShape(1, 1, 1, 2), 1);
  Machine m = calibratedMachine();
  CalibrationOptions o;
  o.repetitions = 1;
  o.scheduler_slice = false;
  calibrate(*model, {plan}, m, o);
  const Shape5 half{1, 2, 16, 16, 8};
  int conv_keys = 0, conv_whole = 0, relu_keys = 0;
  for (const LayerTiming& t : m.layers) {
    if (t.layer.rfind("Conv3d(", 0) == 0) {
      EXPECT_EQ(t.input, half);
      EXPECT_GT(t.forward_s, 0.0);
      if (t.neighbours == Sides{0, 0, 0})
        ++conv_whole;  // the block run whole, paired with the pieces
      else
        ++conv_keys;
      EXPECT_TRUE(t.neighbours == (Sides{0, 0, 2}) || t.neighbours == (Sides{0, 0, 1}) ||
                  t.neighbours == (Sides{0, 0, 0}))
          << t.neighbours[2];
    }
    if (t.layer.rfind("LeakyReLU", 0) == 0) {
      ++relu_keys;
      EXPECT_EQ(t.neighbours, (Sides{0, 0, 0}));
    }
  }
  EXPECT_EQ(conv_keys, 2);  // first and last rank
  EXPECT_EQ(conv_whole, 1);
  EXPECT_EQ(relu_keys, 1);  // the same block on both
  RunShape run;
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = run.trainable_parameters;
  run.ranks_per_node = 2;
  for (LayerTiming& t : m.layers)
    if (t.layer.rfind("Conv3d(", 0) == 0) {
      t.forward_s = t.neighbours[2] == 2 ? 0.004 : 0.003;
      t.backward_s = 0.005;
    }
  // A whole-block timing of the same shape (what a file from before the key holds) is not used
  // while the pieces' timing exists.
  LayerTiming whole = timingKey(plan, 1, GridCoords{}, 1);
  whole.neighbours = {0, 0, 0};
  whole.forward_s = whole.backward_s = 0.001;
  m.record(whole);
  const StepPrediction p = predictStep(plan, m, run);
  ASSERT_FALSE(p.layers.empty());
  EXPECT_DOUBLE_EQ(p.layers[0].forward_s, 0.004);  // the slowest rank's pieces
  EXPECT_DOUBLE_EQ(p.layers[0].backward_s, 0.005);
  std::vector<LayerTiming> whole_only;
  for (const LayerTiming& t : m.layers)
    if (t.neighbours == Sides{0, 0, 0}) whole_only.push_back(t);
  m.layers = whole_only;
  const StepPrediction q = predictStep(plan, m, run);
  EXPECT_DOUBLE_EQ(q.layers[0].forward_s, 0.001);
  bool noted = false;
  for (const std::string& n : q.notes)
    noted = noted || n.find("other neighbours") != std::string::npos;
  EXPECT_TRUE(noted);
}

// Paired: each split rank's block is also timed whole, under the rank's key, in its own machine.
TEST(CalibrationLayout, PairedWholeBlocksAreRecordedPerSplitRank) {
  auto model = convRelu();
  const ModelPlan plan = model->plan(GridShape(1, 1, 1, 2), 1);
  Machine m = calibratedMachine(), whole = calibratedMachine();
  CalibrationOptions o;
  o.repetitions = 1;
  o.scheduler_slice = false;
  o.paired_whole = &whole;
  calibrate(*model, {plan}, m, o);
  ASSERT_EQ(whole.layers.size(), 2u);  // the conv on the first and on the last rank
  for (const LayerTiming& w : whole.layers) {
    EXPECT_EQ(w.layer.rfind("Conv3d(", 0), 0u);
    EXPECT_NE(m.find(w), nullptr) << "paired with a timing of the same key";
    EXPECT_GT(w.forward_s, 0.0);
    EXPECT_GT(w.backward_s, 0.0);
  }
}

// The key round-trips through the machine file (absent where all zero, so older files read the
// same), and a malformed one is refused naming it.
TEST(CalibrationLayout, NeighboursRoundTripThroughTheMachineFile) {
  const std::string path = "halo3d_test_machine_neighbours.json";
  const std::string head = R"({"name": "x", "cores_per_node": 2, "devices_per_node": 0,
             "links": {"shared_memory": {"alpha_s": 1e-6, "beta_s_per_byte": 1e-10},
                       "network": {"alpha_s": 1e-6, "beta_s_per_byte": 1e-10}},
             "reduction": {"gamma_s_per_byte": 1e-10}, "io": {"read_bytes_per_s": 1e9},
             "compute": {"kind": "calibrated"}, "layers": [)";
  const std::string old = R"({"layer": "L", "input": [1, 1, 4, 4, 4], "output": [1, 1, 4, 4, 4],
             "threads": 1, "forward_s": 0.001, "backward_s": 0.002})";
  {
    std::ofstream f(path);
    f << head << old << "]}";
  }
  Machine m = Machine::load(path);
  ASSERT_EQ(m.layers.size(), 1u);
  EXPECT_EQ(m.layers[0].neighbours, (Sides{0, 0, 0}));
  LayerTiming split = m.layers[0];
  split.neighbours = {0, 1, 3};
  split.forward_s = 0.003;
  m.record(split);  // another key: added, not replacing
  ASSERT_EQ(m.layers.size(), 2u);
  m.save(path);
  const Machine back = Machine::load(path);
  ASSERT_EQ(back.layers.size(), 2u);
  const LayerTiming* found = back.find(split);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->forward_s, 0.003);
  EXPECT_EQ(back.find("L", split.input, split.output, 1)->forward_s, 0.001);
  {
    std::ifstream f(path);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::size_t count = 0;
    for (std::size_t at = text.find("neighbours"); at != std::string::npos;
         at = text.find("neighbours", at + 1))
      ++count;
    EXPECT_EQ(count, 1u) << "written for the split timing alone";
  }
  {
    std::ofstream f(path);
    f << head << R"({"layer": "L", "input": [1, 1, 4, 4, 4], "output": [1, 1, 4, 4, 4],
             "threads": 1, "forward_s": 0.001, "backward_s": 0.002, "neighbours": [0, 4, 1]})"
      << "]}";
  }
  try {
    Machine::load(path);
    FAIL() << "a malformed neighbours key loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layers[0].neighbours"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace halo3d::nn
