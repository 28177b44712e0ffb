#include "halo3d/apps/common/EvaluationRun.hpp"

#include <cstdio>

#include "halo3d/apps/common/AppSupport.hpp"
#include "halo3d/apps/common/GridPlanning.hpp"
#include "halo3d/apps/common/RunId.hpp"
#include "halo3d/apps/common/RunSupport.hpp"
#include "halo3d/apps/common/TrainingRun.hpp"

namespace halo3d::apps {

namespace {

SampleCatalog openAndConfigure(const TrainingOptions& o, TrainingTask& task,
                               const ProcessGrid& grid) {
  SampleCatalog catalog = task.openData(o.data, "--data", grid);
  task.configure(catalog);
  requirePlanFits(o, task, grid);  // --memory-limit, before the model is allocated
  return catalog;
}

}  // namespace

EvaluationRun::EvaluationRun(const ProcessGrid& grid, const TrainingOptions& options,
                             TrainingTask& task)
    : _grid(grid),
      _o(options),
      _task(task),
      _catalog(openAndConfigure(options, task, grid)),
      _models(
          grid,
          [&task](std::shared_ptr<nn::ParameterStore> store) {
            return task.makeModel(std::move(store));
          },
          [&task, &grid](const nn::Model& m) { task.checkBuilt(m, grid); }, options.memory_limit,
          options.precision),
      _model(_models.forBatch(options.batch)) {
  loadTrainedWeights(_model.parameters(), _o.init_weights, _o.checkpoint_dir, grid.comm());
}

DataLoader<> EvaluationRun::makeLoader() {
  return DataLoader<>(_grid, _catalog, loaderOptions(_o, _task, _model, false));
}

int EvaluationRun::run() {
  DataLoader<> loader = makeLoader();
  const EvaluationResult e = _task.evaluate(_grid, _models, loader);
  if (_grid.isRoot()) {
    std::printf("%s eval: %lld samples, %s\n", _task.program(), (long long)e.samples,
                e.summary.c_str());
    MetricsWriter metrics(_o.metrics, true, makeRunId(), _grid.shape().str(),
                          nn::toString(_o.precision));
    nlohmann::json rec = e.record;
    rec["phase"] = "eval";
    metrics.write(rec);
  }
  return 0;
}

}  // namespace halo3d::apps
