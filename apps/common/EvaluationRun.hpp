#pragma once
// The `eval` subcommand every application shares: the trained model (--init-weights, or the newest
// valid checkpoint in --checkpoint-dir) evaluated on every sample of --data by the application's
// TrainingTask::evaluate. Rank 0 prints "<program> eval: <samples> samples, <summary>" and writes
// one "eval" metrics record.

#include "halo3d/apps/common/ModelCache.hpp"
#include "halo3d/apps/common/TrainingOptions.hpp"
#include "halo3d/apps/common/TrainingTask.hpp"

namespace halo3d::apps {

class EvaluationRun {
 public:
  // Collective over `grid`: opens --data, builds the model for --batch and loads the weights.
  // Throws InputError (every rank) for bad data or weights that do not fit.
  EvaluationRun(const ProcessGrid& grid, const TrainingOptions& options, TrainingTask& task);
  // A loader over --data in file order (collective).
  DataLoader<> makeLoader();
  // Evaluates; returns the exit code (0).
  int run();

 private:
  const ProcessGrid& _grid;
  const TrainingOptions _o;
  TrainingTask& _task;
  const SampleCatalog _catalog;
  ModelCache _models;
  nn::Model& _model;
};

}  // namespace halo3d::apps
