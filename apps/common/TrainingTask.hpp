#pragma once
// What an application supplies to the shared training driver (TrainingRun.hpp) and evaluation
// (EvaluationRun.hpp): its data layout, its model, its loss and its evaluation. Everything else
// (the step loop, optimizer and schedule, resume, checkpoints, metrics, progress, the stop on a
// non-finite loss, the validation cadence, preemption and the watchdog) is the driver's.

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "halo3d/apps/common/RunSupport.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/io/DataLoader.hpp"
#include "halo3d/io/SampleCatalog.hpp"
#include "halo3d/nn/Model.hpp"

namespace halo3d::apps {

class ModelCache;

// The result of evaluating a data set.
struct EvaluationResult {
  nlohmann::json record;  // the metrics record's fields (the driver adds phase, step, epoch)
  std::string summary;    // one line for people: "mse 0.0779 (predicting the training mean: ...)"
  index_t samples = 0;
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;

  // The program, for messages and the watchdog ("cosmoflow").
  virtual const char* program() const = 0;
  // The catalog of a data flag (`flag` names it in errors): collective over the grid. Throws
  // InputError if the data do not suit the model. Default: the sample files of `path` in the
  // layout of sampleKind().
  virtual SampleCatalog openData(const std::string& path, const char* flag,
                                 const ProcessGrid& grid) const {
    return SampleCatalog::open(sampleFiles(path, flag), sampleKind(), grid.comm());
  }
  // Fixes the model to the samples of --data (input size, channels), checking them against the
  // flags; called once, before makeModel. Throws InputError naming the flag and the value.
  virtual void configure(const SampleCatalog& data) = 0;
  // How the data loaders read (sample layout, transform, MPI-IO mode, label range).
  virtual SampleKind sampleKind() const = 0;
  virtual ReadOptions readOptions() const = 0;

  // A new, unbuilt model over `store` (the driver builds one per batch size, sharing the store).
  virtual std::unique_ptr<nn::Model> makeModel(std::shared_ptr<nn::ParameterStore> store) const = 0;
  // Checks the model's plan for a grid before anything is built (throws InputError naming the
  // problem): what the application needs beyond what the plan itself checks. The grid planner
  // (GridPlanning.hpp) calls it for every candidate grid. Default: none.
  virtual void checkPlan(const nn::ModelPlan& plan) const {}
  // Checks a model just built for the grid (throws InputError naming the problem). Default: the
  // plan's check.
  virtual void checkBuilt(const nn::Model& model, const ProcessGrid& grid) const {
    checkPlan(model.builtPlan());
  }
  // The first line the run prints: the model, the grid and the sizes.
  virtual std::string describe(const nn::Model& model, const ProcessGrid& grid,
                               index_t batch) const = 0;
  // The run configuration stored in checkpoints: what defines the model and the optimisation, and
  // nothing about the partition. A resumed run must have the same.
  virtual std::string configJson() const = 0;

  // The loss of the model's output (after forward) for `batch`, identical on every rank; fills
  // `doutput` (the gradient of the loss w.r.t. the output) unless it is null.
  virtual double loss(const ProcessGrid& grid, const nn::Model& model, const Batch<>& batch,
                      nn::Activation* doutput) const = 0;
  // That loss as the calibration times it and the step model prices it (nn::CalibrationOptions::
  // loss, nn::RunShape::loss): "mse", "ce" or "dice".
  virtual std::string lossName() const = 0;
  // Evaluates every sample of `loader` in evaluation mode (BatchNorm running statistics);
  // `models.forBatch(b.global_batch)` gives the model for a batch. Collective.
  virtual EvaluationResult evaluate(const ProcessGrid& grid, ModelCache& models,
                                    DataLoader<>& loader) = 0;
};

}  // namespace halo3d::apps
