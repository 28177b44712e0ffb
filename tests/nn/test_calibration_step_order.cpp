// The calibration times a rank's layers in a step's order: forward through the plan, then backward
// in reverse, each layer on the tensors the layers before it wrote, a gradient part per consumer of
// a tensor read twice; alone (step_order off) each layer runs its passes by itself, repeated.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "CalibrationTestSupport.hpp"
#include "halo3d/nn/plan/Calibration.hpp"

namespace halo3d::nn {
namespace {

// One call of a probe layer: which layer, which pass, and the storage it read and wrote.
struct Call {
  std::string layer;
  char pass;  // 'F' forward, 'B' backward
  std::vector<const void*> in;
  const void* out;
  std::vector<const void*> din;  // backward: the input gradients it writes
  const void* dout;              // backward: the output gradient it reads
};

std::vector<Call>& calls() {
  static std::vector<Call> log;
  return log;
}

const void* storage(const Activation& a) {
  return a.tensor.view().data();
}

// A layer that computes nothing and logs its calls: output spec of its first input.
class Probe : public Layer {
 public:
  using Layer::Layer;
  std::string kind() const override { return "Probe(" + name() + ")"; }
  TensorSpec outputSpec(const std::vector<TensorSpec>& inputs) const override {
    return inputs.at(0);
  }
  void forward(RunContext&, const std::vector<const Activation*>& in, Activation& out) override {
    Call c{name(), 'F', {}, storage(out), {}, nullptr};
    for (const Activation* a : in)
      c.in.push_back(storage(*a));
    calls().push_back(c);
  }
  void backward(RunContext&, const std::vector<const Activation*>& in, const Activation& out,
                const Activation& dout, const std::vector<Activation*>& din) override {
    Call c{name(), 'B', {}, storage(out), {}, storage(dout)};
    for (const Activation* a : in)
      c.in.push_back(storage(*a));
    for (const Activation* d : din)
      c.din.push_back(d ? storage(*d) : nullptr);
    calls().push_back(c);
  }
};

// input -> a -> b, and c reads both a and b: a's gradient comes in two parts.
std::unique_ptr<Model> diamond() {
  auto m = std::make_unique<Model>();
  m->input({1, 4, 4, 4});
  const int a = m->add(std::make_unique<Probe>("a"), {0});
  const int b = m->add(std::make_unique<Probe>("b"), {a});
  m->add(std::make_unique<Probe>("c"), {a, b});
  return m;
}

// Calibrates `model` on `plan` into `m` (a warm-up and two timed passes), with a fresh log.
void calibrateLogged(Model& model, const ModelPlan& plan, Machine& m, bool step_order) {
  CalibrationOptions o;
  o.repetitions = 2;
  o.scheduler_slice = false;
  o.step_order = step_order;
  calls().clear();
  calibrate(model, {plan}, m, o);
}

std::string sequence() {
  std::string s;
  for (const Call& c : calls())
    s += std::string(1, c.pass) + c.layer + " ";
  return s;
}

TEST(CalibrationStepOrder, LayersRunInTheStepsOrderOnWhatTheLayersBeforeWrote) {
  auto model = diamond();
  const ModelPlan plan = model->plan(GridShape(1, 1, 1, 1), 1);
  Machine m = testing::calibratedMachine();
  calibrateLogged(*model, plan, m, true);
  // A warm-up pass and two timed ones, each a whole forward and a whole backward.
  const std::string pass = "Fa Fb Fc Bc Bb Ba ";
  EXPECT_EQ(sequence(), pass + pass + pass);
  ASSERT_EQ(calls().size(), 18u);
  const Call &fa = calls()[0], &fb = calls()[1], &fc = calls()[2];
  const Call &bc = calls()[3], &bb = calls()[4], &ba = calls()[5];
  EXPECT_EQ(fb.in, std::vector<const void*>{fa.out});
  EXPECT_EQ(fc.in, (std::vector<const void*>{fa.out, fb.out}));
  EXPECT_EQ(ba.din, std::vector<const void*>{nullptr});  // the data has no gradient
  // b's gradient is what c wrote for it; a's two readers write two parts, a reads neither.
  EXPECT_EQ(bb.dout, bc.din[1]);
  ASSERT_EQ(bb.din.size(), 1u);
  EXPECT_NE(bb.din[0], bc.din[0]);
  EXPECT_NE(ba.dout, bb.din[0]);
  EXPECT_NE(ba.dout, bc.din[0]);
  // Every pass is the same storage.
  for (std::size_t k = 6; k < calls().size(); ++k) {
    EXPECT_EQ(calls()[k].out, calls()[k % 6].out) << k;
    EXPECT_EQ(calls()[k].din, calls()[k % 6].din) << k;
  }
  for (const std::string layer : {"Probe(a)", "Probe(b)", "Probe(c)"}) {
    bool found = false;
    for (const LayerTiming& t : m.layers)
      found = found || (t.layer == layer && t.forward_s >= 0 && t.backward_s >= 0);
    EXPECT_TRUE(found) << layer;
  }
  // Timed again only with retime: a file that holds every key runs nothing.
  calibrateLogged(*model, plan, m, true);
  EXPECT_EQ(sequence(), "");
}

TEST(CalibrationStepOrder, AloneEachLayerRepeatsItsOwnPasses) {
  auto model = diamond();
  const ModelPlan plan = model->plan(GridShape(1, 1, 1, 1), 1);
  Machine m = testing::calibratedMachine();
  calibrateLogged(*model, plan, m, false);
  EXPECT_EQ(sequence(), "Fa Ba Fa Ba Fa Ba Fb Bb Fb Bb Fb Bb Fc Bc Fc Bc Fc Bc ");
}

}  // namespace
}  // namespace halo3d::nn
