#pragma once
// The application's side of the plan and the performance model (nn/plan): which N x D x H x W grids
// of P ranks a training run could use, what each would cost, and the three uses of that answer:
//
//   --memory-limit   a run whose plan does not fit stops before it allocates the model, naming the
//                    largest layers and a grid of the same rank count that fits;
//   --grid auto      the grid with the lowest predicted step time among those that fit;
//   halo3d-sweep     every valid grid, run one after another (apps/sweep).
//
// A grid is valid when nn::candidateGrids (nn/plan/GridChoice.hpp) says so (the global batch
// divides by N, the model's plan exists for it, the predicted memory per rank fits --memory-limit)
// and the application accepts the plan (TrainingTask::checkPlan, e.g. the U-Net's output must stay
// split like its labels).
//
// Predicted memory per rank (the rank with the largest blocks) is the step model's
// (StepPrediction::peak_bytes and its terms), which does not depend on the machine's rates: without
// a machine file it is computed with a placeholder machine whose times are discarded. Predicted
// time needs a machine file; without one, --grid auto picks the smallest footprint and says so.
//
// Everything here is a pure function of the flags, the configured task and the machine file: every
// rank computes the same answer without communicating, so an error is thrown on every rank at once.

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "halo3d/apps/common/TrainingOptions.hpp"
#include "halo3d/apps/common/TrainingTask.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/GridShape.hpp"
#include "halo3d/nn/Model.hpp"
#include "halo3d/nn/plan/Machine.hpp"
#include "halo3d/nn/plan/StepModel.hpp"

namespace halo3d::apps {

// What the plan and the performance model say about one grid.
struct GridAssessment {
  GridShape grid;
  bool valid = false;
  std::string why_not;                 // why the grid cannot run (empty when valid)
  bool planned = false;                // the plan exists and the application takes it
  bool over_limit = false;             // planned, but its predicted memory is over --memory-limit
  std::size_t predicted_bytes = 0;     // per rank, on the rank with the largest blocks
  std::vector<nn::MemoryTerm> memory;  // what predicted_bytes is made of
  std::string largest;                 // the largest tensors of that rank ("'features.0' ...")
  std::optional<nn::StepPrediction> prediction;  // with a machine file that can price the model
  std::string
      prediction_error;  // why the machine file could not (e.g. a layer it has no timing of)
  // The predicted step time, or NaN without a prediction.
  double predictedStep() const;
};

class GridPlanner {
 public:
  // Plans the model of `task` (configured: TrainingTask::configure has run) for runs of `ranks`
  // ranks, `ranks_per_node` of them on each node (0: unknown), with the flags of `options`;
  // `machine` (may be null: memory only) prices the steps. Creates one unbuilt model (which
  // allocates nothing).
  GridPlanner(const TrainingTask& task, const TrainingOptions& options, int ranks,
              int ranks_per_node, const nn::Machine* machine);
  ~GridPlanner();

  // The data the runs read (--data's catalog): the step model then prices the batch read with
  // the machine file's timing of this data (batchReadName), where it has one.
  void readsFrom(const SampleCatalog& data);

  int ranks() const { return _ranks; }
  const nn::Machine* machine() const { return _machine; }
  // The model the plans are of (unbuilt), e.g. for calibration.
  nn::Model& model() { return *_model; }
  // The plan of `grid` (throws like Model::plan).
  nn::ModelPlan plan(const GridShape& grid) const;
  // What the step model is told about the run besides the plan.
  nn::RunShape runShape() const;

  // One grid (of any size: a grid of another rank count is invalid, saying so). Validity and memory
  // do not depend on the machine file; a prediction the machine cannot make is recorded in
  // prediction_error, not thrown.
  GridAssessment assess(const GridShape& grid) const;
  // Every grid of this many ranks (allGrids, core/GridShape.hpp), in that order.
  std::vector<GridAssessment> assessAll() const;

  // Throws ResourceError unless `grid`'s plan fits --memory-limit: the message names the bytes per
  // rank, the limit, the largest layers, and the grid of the same rank count that fits (the fastest
  // predicted one, else the smallest), or, if none does, the smallest requirement. Does nothing
  // without a limit.
  void requireFits(const GridShape& grid) const;

  // --grid auto: the valid grid with the lowest predicted step time (without a machine file: the
  // smallest predicted memory). Throws ResourceError when no grid fits --memory-limit (listing the
  // smallest requirement), InputError when no grid is valid (listing why for each) or when the
  // machine file cannot price a valid grid (its prediction error, e.g. "calibrate"). `summary`
  // (if not null) gets what rank 0 prints: the choice, its predicted time and memory, the
  // runner-up.
  GridAssessment choose(std::string* summary) const;

 private:
  // "grid 1x1x2x1 fits (...)" or "no grid of P ranks fits ...", for requireFits and choose.
  std::string alternatives(const std::vector<GridAssessment>& all) const;

  const TrainingTask& _task;
  const TrainingOptions& _o;
  const int _ranks, _ranks_per_node;
  const nn::Machine* _machine;
  nn::Machine _memory_only;  // prices nothing: the memory model without a machine file
  std::unique_ptr<nn::Model> _model;
  std::string _batch_read;  // readsFrom: the batch read's timing name
};

// The name of the batch read's timing of `data` read with `read` into batches of `precision`
// (nn::batchReadKey): "batch read", the sample kind, the file's input element type, the transform
// and, for bf16 batches, "into bf16", e.g. "batch read cosmoflow int16 log1p". The loader's time
// depends on them beyond the block's shape.
std::string batchReadName(const SampleCatalog& data, const ReadOptions& read,
                          nn::Precision precision);

// A comma-separated list of NxDxHxW grids (`flag` names it in errors). Throws InputError naming the
// entry on a malformed one, an empty list or entry, or a grid given twice.
std::vector<GridShape> parseGridList(const std::string& list, const std::string& flag);

// The machine file to use: `flag_value` (--machine) if given, else $HALO3D_MACHINE, else
// machines/this-machine.json of the source tree this binary was built from, else of the
// installation (<prefix>/share/halo3d/machines). Empty if none of the defaults exists;
// `looked` (if not null) then lists the paths tried.
std::string findMachineFile(const std::string& flag_value, std::string* looked = nullptr);

// The machine file of the flags, loaded on every rank of `comm` with agreed errors (a malformed
// file is an InputError naming the file and the key, on every rank). With `use_default`, a missing
// --machine falls back to findMachineFile's defaults, and no machine at all is not an error (empty
// result; `note` says where it looked); without it, only an explicit --machine is loaded.
std::optional<nn::Machine> loadMachine(const TrainingOptions& o, bool use_default, MPI_Comm comm,
                                       std::string* note = nullptr);

// --memory-limit for a run on `grid` of the configured `task`: GridPlanner::requireFits with the
// machine of an explicit --machine (memory model only otherwise). Collective over the grid; does
// nothing without a limit.
void requirePlanFits(const TrainingOptions& o, const TrainingTask& task, const ProcessGrid& grid);

// The grid of a training run's --grid: NxDxHxW as given, 1xPx1x1 when empty, or for "auto" the
// choice of GridPlanner::choose for the data of --data (opened over MPI_COMM_WORLD; collective),
// which rank 0 prints. Throws InputError naming the flag for "auto" unless `allow_auto`.
GridShape resolveGrid(const TrainingOptions& o, TrainingTask& task, bool allow_auto);

}  // namespace halo3d::apps
