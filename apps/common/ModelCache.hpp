#pragma once
// Models of one network built for several global batch sizes over one shared set of parameters: the
// regular mini-batch and, when an epoch ends with a smaller final batch, that one too.

#include <functional>
#include <map>
#include <memory>

#include "nn/Model.hpp"

namespace halo3d::apps {

class ModelCache {
 public:
  using Factory = std::function<std::unique_ptr<nn::Model>(std::shared_ptr<nn::ParameterStore>)>;
  ModelCache(const ProcessGrid& grid, Factory factory)
      : _grid(grid), _factory(std::move(factory)) {}

  // The model for global batch `batch`, built on first use (collective then).
  nn::Model& forBatch(index_t batch) {
    auto it = _models.find(batch);
    if (it != _models.end()) return *it->second;
    auto m = _factory(_store);
    if (!_store) _store = m->sharedParameters();
    m->build(_grid, batch);
    return *(_models[batch] = std::move(m));
  }
  nn::ParameterStore& parameters() { return *_store; }

 private:
  const ProcessGrid& _grid;
  Factory _factory;
  std::shared_ptr<nn::ParameterStore> _store;
  std::map<index_t, std::unique_ptr<nn::Model>> _models;
};

}  // namespace halo3d::apps
