#include "halo3d/apps/cosmoflow/Training.hpp"

#include "halo3d/apps/common/EvaluationRun.hpp"
#include "halo3d/apps/common/GridPlanning.hpp"
#include "halo3d/apps/common/RunSupport.hpp"
#include "halo3d/apps/common/TrainingRun.hpp"
#include "halo3d/apps/cosmoflow/CosmoFlowTask.hpp"

namespace halo3d::apps {

int trainCosmoFlow(const CosmoFlowOptions& o) {
  CosmoFlowTask task(o);
  ProcessGrid grid(MPI_COMM_WORLD, resolveGrid(o, task, true));
  TrainingRun run(grid, o, task);
  if (!o.val_data.empty() && run.nextStep() < run.totalSteps()) {
    // Validation compares the model with always predicting the mean training target.
    DataLoader<> training_data = run.makeLoader(run.data(), false);
    task.setBaseline(targetMean(grid, training_data), "the training mean");
  }
  return run.train();
}

int evalCosmoFlow(const CosmoFlowOptions& o) {
  ProcessGrid grid(MPI_COMM_WORLD, gridFromOption(o.grid));
  CosmoFlowTask task(o);
  EvaluationRun evaluation(grid, o, task);
  DataLoader<> data = evaluation.makeLoader();
  task.setBaseline(targetMean(grid, data), "this set's mean");
  return evaluation.run();
}

}  // namespace halo3d::apps
