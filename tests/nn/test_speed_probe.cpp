// The speed probe and what it feeds (nn/plan/SpeedProbe.hpp): a calibration stamps every timing
// with the probe's time of its moment, the machine file keeps that stamp, and the step model prices
// a stamped timing at probe_now_s / probe_s, leaving unstamped ones (older files) as recorded.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/layers/Conv3d.hpp"
#include "halo3d/nn/plan/Calibration.hpp"
#include "halo3d/nn/plan/SpeedProbe.hpp"
#include "halo3d/nn/plan/StepModel.hpp"

namespace halo3d::nn {
namespace {

Machine linksOnly() {
  Machine m;
  m.name = "test";
  m.cores_per_node = 64;
  m.shared_memory = m.network = Link{1e-6, 1e-9};
  m.io_read_bytes_per_s = 1e12;
  return m;
}

std::unique_ptr<Model> oneConv() {
  auto m = std::make_unique<Model>();
  m->input({2, 8, 8, 8});
  m->add(std::make_unique<Conv3d>("conv", 2, 3, WindowGeometry::cubic(3, 1, 1), false));
  return m;
}

TEST(SpeedProbe, TimesBothPartsAndRefusesNoRepetitions) {
  const SpeedProbe p = timeSpeedProbe(2);
  std::printf("speed probe: %.3f ms (convolution %.3f ms, LeakyReLU %.3f ms)\n", p.seconds * 1e3,
              p.compute_s * 1e3, p.memory_s * 1e3);
  EXPECT_EQ(p.repetitions, 2);
  EXPECT_GT(p.compute_s, 0.0);
  EXPECT_GT(p.memory_s, 0.0);
  EXPECT_GT(p.seconds, 0.0);
  EXPECT_THROW(timeSpeedProbe(0), InputError);
}

// Every timing a calibration records carries the probe's time (the layer, the input store, the
// optimizer); without the probe, none does. Priced with the probe twice as slow now as then, every
// stamped compute term doubles; a timing without a stamp is priced as recorded.
TEST(SpeedProbe, CalibrationStampsTimingsAndTheModelScalesThem) {
  auto model = oneConv();
  const ModelPlan plan = model->plan(GridShape(1, 2, 1, 1), 1);
  CalibrationOptions o;
  o.repetitions = 1;
  o.scheduler_slice = false;
  Machine unstamped = linksOnly();
  o.speed_probe = false;
  calibrate(*model, {plan}, unstamped, o);
  ASSERT_FALSE(unstamped.layers.empty());
  EXPECT_FALSE(unstamped.hasProbedTimings());
  Machine m = linksOnly();
  o.speed_probe = true;
  calibrate(*model, {plan}, m, o);
  ASSERT_EQ(m.layers.size(), unstamped.layers.size());
  bool layer = false, store = false, optimizer = false;
  for (LayerTiming& t : m.layers) {
    EXPECT_GT(t.probe_s, 0.0) << t.layer;
    layer = layer || t.layer.rfind("Conv3d(", 0) == 0;
    store = store || t.layer == kInputStore;
    optimizer = optimizer || t.layer.rfind("optimizer ", 0) == 0;
    t.probe_s = 0.01;  // round figures from here on
  }
  EXPECT_TRUE(layer && store && optimizer);
  RunShape run;
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = run.trainable_parameters;
  run.ranks_per_node = 2;
  const StepPrediction then = predictStep(plan, m, run);
  m.probe_now_s = 0.02;
  const StepPrediction now = predictStep(plan, m, run);
  ASSERT_GT(then.compute_s, 0.0);
  EXPECT_NEAR(now.compute_s, 2 * then.compute_s, 1e-12 * then.compute_s);
  EXPECT_NEAR(now.input_s, 2 * then.input_s, 1e-15);
  ASSERT_EQ(now.layers.size(), then.layers.size());
  for (std::size_t i = 0; i < now.layers.size(); ++i) {
    EXPECT_DOUBLE_EQ(now.layers[i].forward_s, 2 * then.layers[i].forward_s);
    EXPECT_DOUBLE_EQ(now.layers[i].backward_s, 2 * then.layers[i].backward_s);
  }
  // The communication terms are not compute: the probe leaves them alone.
  EXPECT_DOUBLE_EQ(now.halo_s, then.halo_s);
  EXPECT_DOUBLE_EQ(now.allreduce_s, then.allreduce_s);
  // Unstamped timings: as recorded, whatever the probe says now.
  for (LayerTiming& t : m.layers)
    t.probe_s = 0;
  EXPECT_DOUBLE_EQ(predictStep(plan, m, run).compute_s, then.compute_s);
}

TEST(SpeedProbe, StampRoundTripsThroughTheMachineFileAndABadOneNamesTheKey) {
  const std::string path = "halo3d_test_machine_probe.json";
  const auto write = [&](const std::string& probe) {
    std::ofstream f(path);
    f << R"({"name": "x", "cores_per_node": 2, "devices_per_node": 0,
             "links": {"shared_memory": {"alpha_s": 1e-6, "beta_s_per_byte": 1e-10},
                       "network": {"alpha_s": 1e-6, "beta_s_per_byte": 1e-10}},
             "reduction": {"gamma_s_per_byte": 1e-10}, "io": {"read_bytes_per_s": 1e9},
             "compute": {"kind": "calibrated"},
             "layers": [{"layer": "a", "input": [1, 1, 4, 4, 4], "output": [1, 1, 4, 4, 4],
                         "threads": 1, "forward_s": 0.001, "backward_s": 0.002},
                        {"layer": "b", "input": [1, 1, 4, 4, 4], "output": [1, 1, 4, 4, 4],
                         "threads": 1, "forward_s": 0.001, "backward_s": 0.002)"
      << probe << "}]}";
  };
  write(R"(, "probe_s": 0.0075)");
  Machine m = Machine::load(path);
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[0].probe_s, 0.0);
  EXPECT_EQ(m.layers[1].probe_s, 0.0075);
  EXPECT_TRUE(m.hasProbedTimings());
  m.probe_now_s = 0.015;
  EXPECT_DOUBLE_EQ(m.speedFactor(m.layers[0]), 1.0);
  EXPECT_DOUBLE_EQ(m.speedFactor(m.layers[1]), 2.0);
  m.save(path);
  const Machine again = Machine::load(path);
  EXPECT_EQ(again.layers[0].probe_s, 0.0);
  EXPECT_EQ(again.layers[1].probe_s, 0.0075);
  EXPECT_EQ(again.probe_now_s, 0.0);  // a run's measurement, not the file's
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  EXPECT_EQ(text.str().find("probe_now"), std::string::npos);
  for (const char* bad : {R"(, "probe_s": "fast")", R"(, "probe_s": 0)", R"(, "probe_s": -1)"}) {
    write(bad);
    try {
      Machine::load(path);
      ADD_FAILURE() << "loaded a probe time of " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("layers[1].probe_s"), std::string::npos) << e.what();
    }
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace halo3d::nn
