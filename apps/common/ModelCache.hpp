#pragma once
// Models of one network built for several global batch sizes over one shared set of parameters: the
// regular mini-batch and, when an epoch ends with a smaller final batch, that one too.

#include <functional>
#include <map>
#include <memory>

#include "halo3d/core/Activity.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/io/DataLoader.hpp"
#include "halo3d/nn/Model.hpp"
#include "halo3d/nn/PrecisionBridge.hpp"
#include "halo3d/nn/layers/Redistribute.hpp"

namespace halo3d::apps {

class ModelCache {
 public:
  using Factory = std::function<std::unique_ptr<nn::Model>(std::shared_ptr<nn::ParameterStore>)>;
  // Checks a model just built (throws InputError); may be empty.
  using Check = std::function<void(const nn::Model&)>;
  // `memory_limit`: bytes per rank each model's activations and gradients may take (Model::build;
  // 0: the memory available); `precision`: theirs.
  ModelCache(const ProcessGrid& grid, Factory factory, Check check = {},
             std::size_t memory_limit = 0, nn::Precision precision = nn::Precision::fp32)
      : _grid(grid),
        _factory(std::move(factory)),
        _check(std::move(check)),
        _memory_limit(memory_limit),
        _precision(precision) {}

  // The model for global batch `batch`, built (and checked) on first use (collective then).
  nn::Model& forBatch(index_t batch) {
    auto it = _models.find(batch);
    if (it != _models.end()) return *it->second;
    ScopedActivity activity(concat("building the model for a batch of ", batch));
    auto m = _factory(_store);
    if (!_store) _store = m->sharedParameters();
    m->build(_grid, batch, _memory_limit, _precision);
    if (_check) _check(*m);
    return *(_models[batch] = std::move(m));
  }
  // The model for batch `b`'s size, with `b`'s input block copied into its input.
  nn::Model& feed(const Batch<>& b) {
    nn::Model& m = forBatch(b.global_batch);
    // A bf16 run's loader delivers the input rounded once (loaderOptions), stored as it is.
    if (b.input_bf16.isAllocated())
      nn::storeBox(b.input_bf16, m.input(), m.input().owned());
    else
      nn::storeBox(b.input, m.input(), m.input().owned());
    return m;
  }
  nn::ParameterStore& parameters() { return *_store; }

 private:
  const ProcessGrid& _grid;
  Factory _factory;
  Check _check;
  std::size_t _memory_limit = 0;
  nn::Precision _precision = nn::Precision::fp32;
  std::shared_ptr<nn::ParameterStore> _store;
  std::map<index_t, std::unique_ptr<nn::Model>> _models;
};

}  // namespace halo3d::apps
