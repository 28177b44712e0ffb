#pragma once
// Optimizers exactly as torch.optim: SGD with momentum and Adam. They update the trainable prefix
// of a ParameterStore in place from its (already allreduced) gradients.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "halo3d/nn/Parameter.hpp"

namespace halo3d::nn {

enum class OptimizerKind { Adam, Sgd };
inline constexpr OptimizerKind kOptimizerKinds[] = {OptimizerKind::Adam, OptimizerKind::Sgd};

// "adam", "sgd": the names of the flags and of checkpoint configurations.
const char* optimizerKindName(OptimizerKind kind);
// The kind called `name`; throws InputError naming it and the known names.
OptimizerKind parseOptimizerKind(const std::string& name);
// JSON holds the name (checkpoint configurations, reference files).
void to_json(nlohmann::json& j, OptimizerKind kind);
void from_json(const nlohmann::json& j, OptimizerKind& kind);

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::Adam;
  double lr = 1e-3;
  double momentum = 0.9;                          // sgd
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam
  double weight_decay = 0.0;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // One update with learning rate `lr` (the schedule's value for this step).
  virtual void step(double lr) = 0;
  // Updates taken so far (torch's `step` state); restored from checkpoints.
  std::int64_t steps() const { return _steps; }
  void setSteps(std::int64_t s) { _steps = s; }
  // Named per-parameter state tensors ("exp_avg.<param>", ...), views into the optimizer's storage:
  // written to and read from checkpoints.
  virtual std::vector<std::pair<std::string, FlatView>> state() = 0;

 protected:
  explicit Optimizer(ParameterStore& store) : _store(store) {}
  // Per-parameter subviews of a flat state View laid out like the store's trainable prefix.
  std::vector<std::pair<std::string, FlatView>> perParameter(const std::string& prefix,
                                                             const FlatView& flat);
  ParameterStore& _store;
  std::int64_t _steps = 0;
};

// Throws InputError for a learning rate that is not positive.
std::unique_ptr<Optimizer> makeOptimizer(ParameterStore& store, const OptimizerConfig& config);

// torch.optim.SGD(momentum=m, dampening=0, nesterov=False): buf = m*buf + g (buf = g on the first
// step); p -= lr * buf.
class Sgd : public Optimizer {
 public:
  Sgd(ParameterStore& store, const OptimizerConfig& config);
  void step(double lr) override;
  std::vector<std::pair<std::string, FlatView>> state() override;

 private:
  OptimizerConfig _config;
  FlatView _momentum;
};

// torch.optim.Adam(betas, eps, amsgrad=False): m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
// p -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
class Adam : public Optimizer {
 public:
  Adam(ParameterStore& store, const OptimizerConfig& config);
  void step(double lr) override;
  std::vector<std::pair<std::string, FlatView>> state() override;

 private:
  OptimizerConfig _config;
  FlatView _exp_avg, _exp_avg_sq;
};

}  // namespace halo3d::nn
