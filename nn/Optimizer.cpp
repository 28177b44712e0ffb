#include "halo3d/nn/Optimizer.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "halo3d/core/EnumNames.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/KernelPath.hpp"
#include "halo3d/core/KokkosCompat.hpp"

namespace halo3d::nn {

std::vector<std::pair<std::string, FlatView>> Optimizer::perParameter(const std::string& prefix,
                                                                      const FlatView& flat) {
  std::vector<std::pair<std::string, FlatView>> out;
  for (Parameter* p : _store.trainable())
    out.emplace_back(
        prefix + "." + p->name(),
        Kokkos::subview(flat, Kokkos::make_pair(p->offset(), p->offset() + p->size())));
  return out;
}

namespace {
constexpr EnumName<OptimizerKind> kOptimizerKindNames[] = {{OptimizerKind::Adam, "adam"},
                                                           {OptimizerKind::Sgd, "sgd"}};
}  // namespace

const char* optimizerKindName(OptimizerKind kind) {
  return nameOf(kOptimizerKindNames, kind);
}

OptimizerKind parseOptimizerKind(const std::string& name) {
  return parseName(kOptimizerKindNames, name, "optimizer");
}

void to_json(nlohmann::json& j, OptimizerKind kind) {
  j = optimizerKindName(kind);
}

void from_json(const nlohmann::json& j, OptimizerKind& kind) {
  require<InputError>(j.is_string(), "an optimizer is named by a string, got ", j.dump());
  kind = parseOptimizerKind(j.get<std::string>());
}

std::unique_ptr<Optimizer> makeOptimizer(ParameterStore& store, const OptimizerConfig& config) {
  require<InputError>(config.lr > 0, "learning rate must be positive, got ", config.lr);
  switch (config.kind) {
    case OptimizerKind::Adam:
      return std::make_unique<Adam>(store, config);
    case OptimizerKind::Sgd:
      return std::make_unique<Sgd>(store, config);
  }
  throw InputError(concat("unknown optimizer kind ", int(config.kind)));
}

namespace {

// The optimizers' element-wise updates on the host: chunks of the flat arrays, each a plain loop
// over restrict pointers with the scalars in locals, which the compiler vectorises. The per-index
// lambda was not: it reloaded its captured scalars after every store (a float store may alias
// them) and ran Adam's square root and division one element at a time, 26 ms a step against
// 6.3 ms of memory traffic for CosmoFlow 128^3 at width 1 (9.4 M parameters; docs/PERFORMANCE.md).
// nn/CMakeLists.txt compiles this file with -fno-math-errno: otherwise GCC calls sqrt per element
// to set errno. Each element sees the same operations as in the device lambda.
template <class Update>
void hostChunks(const char* label, std::size_t n, const Update& update) {
  constexpr std::size_t kHostChunk = 4096;
  Kokkos::parallel_for(
      label,
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, (n + kHostChunk - 1) / kHostChunk),
      [&](std::size_t c) { update(c * kHostChunk, std::min(n, (c + 1) * kHostChunk)); });
}

void sgdRange(real* __restrict p, const real* __restrict g, real* __restrict buf, std::size_t begin,
              std::size_t end, real m, real lr, real wd, bool first) {
  for (std::size_t i = begin; i < end; ++i) {
    const real grad = g[i] + wd * p[i];
    const real b = first ? grad : m * buf[i] + grad;
    buf[i] = b;
    p[i] -= lr * b;
  }
}

struct AdamScalars {
  real step_size, bc2_sqrt, b1, b2, eps, wd;
};

void adamRange(real* __restrict p, const real* __restrict g, real* __restrict m, real* __restrict v,
               std::size_t begin, std::size_t end, AdamScalars a) {
  for (std::size_t i = begin; i < end; ++i) {
    const real grad = g[i] + a.wd * p[i];
    const real mi = a.b1 * m[i] + (real(1) - a.b1) * grad;
    const real vi = a.b2 * v[i] + (real(1) - a.b2) * grad * grad;
    m[i] = mi;
    v[i] = vi;
    p[i] -= a.step_size * mi / (std::sqrt(vi) / a.bc2_sqrt + a.eps);
  }
}

}  // namespace

Sgd::Sgd(ParameterStore& store, const OptimizerConfig& config)
    : Optimizer(store),
      _config(config),
      _momentum("halo3d::sgd::momentum_buffer", store.trainableSize()) {}

void Sgd::step(double lr) {
  const FlatView p = _store.values(), g = _store.grads(), buf = _momentum;
  const real m = real(_config.momentum), lr_f = real(lr), wd = real(_config.weight_decay);
  const bool first = _steps == 0;
  if constexpr (kRunsOnHost<Kokkos::DefaultExecutionSpace>) {
    hostChunks("halo3d::sgd", _store.trainableSize(), [&](std::size_t b, std::size_t e) {
      sgdRange(p.data(), g.data(), buf.data(), b, e, m, lr_f, wd, first);
    });
    ++_steps;
    return;
  }
  Kokkos::parallel_for(
      "halo3d::sgd", Kokkos::RangePolicy<>(0, _store.trainableSize()),
      KOKKOS_LAMBDA(const std::size_t i) {
        const real grad = g(i) + wd * p(i);
        const real b = first ? grad : m * buf(i) + grad;
        buf(i) = b;
        p(i) -= lr_f * b;
      });
  ++_steps;
}

std::vector<std::pair<std::string, FlatView>> Sgd::state() {
  return perParameter("momentum_buffer", _momentum);
}

Adam::Adam(ParameterStore& store, const OptimizerConfig& config)
    : Optimizer(store),
      _config(config),
      _exp_avg("halo3d::adam::exp_avg", store.trainableSize()),
      _exp_avg_sq("halo3d::adam::exp_avg_sq", store.trainableSize()) {}

void Adam::step(double lr) {
  ++_steps;
  // Scalars in double, as torch computes them in Python.
  const double bias_correction1 = 1.0 - std::pow(_config.beta1, double(_steps));
  const double bias_correction2 = 1.0 - std::pow(_config.beta2, double(_steps));
  const real step_size = real(lr / bias_correction1);
  const real bc2_sqrt = real(std::sqrt(bias_correction2));
  const real b1 = real(_config.beta1), b2 = real(_config.beta2), eps = real(_config.eps);
  const real wd = real(_config.weight_decay);
  const FlatView p = _store.values(), g = _store.grads(), m = _exp_avg, v = _exp_avg_sq;
  if constexpr (kRunsOnHost<Kokkos::DefaultExecutionSpace>) {
    const AdamScalars a{step_size, bc2_sqrt, b1, b2, eps, wd};
    hostChunks("halo3d::adam", _store.trainableSize(), [&](std::size_t b, std::size_t e) {
      adamRange(p.data(), g.data(), m.data(), v.data(), b, e, a);
    });
    return;
  }
  Kokkos::parallel_for(
      "halo3d::adam", Kokkos::RangePolicy<>(0, _store.trainableSize()),
      KOKKOS_LAMBDA(const std::size_t i) {
        const real grad = g(i) + wd * p(i);
        const real mi = b1 * m(i) + (real(1) - b1) * grad;
        const real vi = b2 * v(i) + (real(1) - b2) * grad * grad;
        m(i) = mi;
        v(i) = vi;
        p(i) -= step_size * mi / (math::sqrt(vi) / bc2_sqrt + eps);
      });
}

std::vector<std::pair<std::string, FlatView>> Adam::state() {
  auto out = perParameter("exp_avg", _exp_avg);
  auto sq = perParameter("exp_avg_sq", _exp_avg_sq);
  out.insert(out.end(), sq.begin(), sq.end());
  return out;
}

}  // namespace halo3d::nn
