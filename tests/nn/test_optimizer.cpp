// Optimizers against a double-precision transcription of torch.optim's update rules.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <random>
#include <utility>

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/LrSchedule.hpp"
#include "halo3d/nn/Optimizer.hpp"

namespace halo3d::nn {
namespace {

struct Fixture {
  ParameterStore store;
  std::vector<double> p, g;
  explicit Fixture(std::size_t n) {
    store.add("w", {index_t(n)});
    store.add("buffer", {2}, false);
    store.finalize();
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    p.resize(n);
    for (auto& x : p)
      x = u(rng);
    auto h = Kokkos::create_mirror_view(store.values());
    for (std::size_t i = 0; i < n; ++i)
      h(i) = float(p[i]);
    h(n) = 5.0f;
    h(n + 1) = 6.0f;
    Kokkos::deep_copy(store.values(), h);
  }
  void setGrad(int step) {
    std::mt19937 rng(100 + step);
    std::uniform_real_distribution<double> u(-2, 2);
    g.resize(p.size());
    for (auto& x : g)
      x = u(rng);
    auto h = Kokkos::create_mirror_view(store.grads());
    for (std::size_t i = 0; i < g.size(); ++i)
      h(i) = float(g[i]);
    Kokkos::deep_copy(store.grads(), h);
  }
  std::vector<float> values() {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), store.values());
    return std::vector<float>(h.data(), h.data() + h.size());
  }
};

TEST(Optimizer, AdamFollowsTorch) {
  Fixture f(37);
  OptimizerConfig c;
  c.kind = OptimizerKind::Adam;
  auto opt = makeOptimizer(f.store, c);
  std::vector<double> m(f.p.size(), 0), v(f.p.size(), 0);
  for (int t = 1; t <= 5; ++t) {
    f.setGrad(t);
    const double lr = 1e-2 * t;
    opt->step(lr);
    const double bc1 = 1 - std::pow(c.beta1, t), bc2 = 1 - std::pow(c.beta2, t);
    for (std::size_t i = 0; i < f.p.size(); ++i) {
      m[i] = c.beta1 * m[i] + (1 - c.beta1) * f.g[i];
      v[i] = c.beta2 * v[i] + (1 - c.beta2) * f.g[i] * f.g[i];
      f.p[i] -= lr / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + c.eps);
    }
  }
  const auto got = f.values();
  for (std::size_t i = 0; i < f.p.size(); ++i)
    EXPECT_NEAR(got[i], f.p[i], 1e-5) << i;
  EXPECT_EQ(got[f.p.size()], 5.0f);  // buffers are not trained
  EXPECT_EQ(opt->steps(), 5);
  EXPECT_EQ(opt->state().size(), 2u);
  EXPECT_EQ(opt->state()[0].first, "exp_avg.w");
}

TEST(Optimizer, SgdMomentumFollowsTorch) {
  Fixture f(19);
  OptimizerConfig c;
  c.kind = OptimizerKind::Sgd;
  c.momentum = 0.9;
  auto opt = makeOptimizer(f.store, c);
  std::vector<double> buf(f.p.size(), 0);
  for (int t = 0; t < 4; ++t) {
    f.setGrad(t);
    opt->step(0.05);
    for (std::size_t i = 0; i < f.p.size(); ++i) {
      buf[i] = t == 0 ? f.g[i] : c.momentum * buf[i] + f.g[i];
      f.p[i] -= 0.05 * buf[i];
    }
  }
  const auto got = f.values();
  for (std::size_t i = 0; i < f.p.size(); ++i)
    EXPECT_NEAR(got[i], f.p[i], 1e-5) << i;
}

TEST(Optimizer, UnknownKindIsAnError) {
  ParameterStore store;
  store.add("w", {1});
  store.finalize();
  EXPECT_THROW(parseOptimizerKind("adagrad"), InputError);
  for (OptimizerKind k : kOptimizerKinds)
    EXPECT_EQ(parseOptimizerKind(optimizerKindName(k)), k);
  OptimizerConfig c;
  c.kind = OptimizerKind::Sgd;
  c.lr = 0;
  EXPECT_THROW(makeOptimizer(store, c), InputError);
}

// s.at(step) == lr for each (step, lr) of `want`.
void expectLrs(const LrSchedule& s, std::initializer_list<std::pair<long, double>> want) {
  for (const auto& [step, lr] : want)
    EXPECT_DOUBLE_EQ(s.at(step), lr) << "step " << step;
}

TEST(LrSchedule, WarmupThenStepAndPoly) {
  LrSchedule s;
  s.base_lr = 1.0;
  s.warmup_steps = 4;
  s.warmup_start = 0.0;
  expectLrs(s, {{0, 0.25}, {3, 1.0}, {100, 1.0}});
  s.decay = LrDecay::Step;
  s.step_every = 10;
  s.step_gamma = 0.5;
  expectLrs(s, {{13, 1.0}, {14, 0.5}, {34, 0.125}});
  s.decay = LrDecay::Poly;
  s.total_steps = 14;
  s.end_lr = 0.0;
  expectLrs(s, {{9, 0.5}, {20, 0.0}});
  s.validate();
  s.total_steps = 2;
  EXPECT_THROW(s.validate(), InputError);
  EXPECT_THROW(parseLrDecay("cosine"), InputError);
  for (LrDecay d : kLrDecays)
    EXPECT_EQ(parseLrDecay(lrDecayName(d)), d);
}

}  // namespace
}  // namespace halo3d::nn
