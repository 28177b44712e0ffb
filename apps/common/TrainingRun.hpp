#pragma once
// The training driver every application shares. An application supplies its model, loss and
// evaluation (TrainingTask.hpp); the run owns the rest:
//
//   setup    lock --checkpoint-dir, build the model, load --init-weights or resume (--resume),
//            optimizer and learning-rate schedule, data loaders, metrics, watchdog, signals
//   step()   one optimizer step: read the batch, forward, loss (stop on a non-finite one),
//            backward with the gradient allreduce, update; the step time and the preemption
//            flag are agreed in one allreduce
//   train()  every remaining step, with metrics (run_id in each record), progress, each epoch's
//            mean training loss, checkpoints (every --checkpoint-every steps or epoch, and always
//            at the end), validation after each epoch, and the preemption stop (checkpoint, then
//            kExitPreempted)
//
// step() stands on its own, so that a sweep can time steps of a model on many grids.

#include <memory>
#include <optional>
#include <string>

#include "halo3d/apps/common/AppSupport.hpp"
#include "halo3d/apps/common/CheckpointDirLock.hpp"
#include "halo3d/apps/common/ModelCache.hpp"
#include "halo3d/apps/common/Preemption.hpp"
#include "halo3d/apps/common/TestFault.hpp"
#include "halo3d/apps/common/TrainingOptions.hpp"
#include "halo3d/apps/common/TrainingTask.hpp"
#include "halo3d/apps/common/Watchdog.hpp"
#include "halo3d/io/Checkpointer.hpp"
#include "halo3d/nn/GradientReducer.hpp"
#include "halo3d/nn/LayerTimers.hpp"
#include "halo3d/nn/LrSchedule.hpp"
#include "halo3d/nn/Optimizer.hpp"

namespace halo3d::apps {

// The data loader options of the flags for `task`'s data and `model`'s input (ghosts, precision).
DataLoaderOptions loaderOptions(const TrainingOptions& o, const TrainingTask& task,
                                nn::Model& model, bool training);
// The same for a model not built: its input's ghosts and whether its input is bf16.
DataLoaderOptions loaderOptions(const TrainingOptions& o, const TrainingTask& task,
                                const HaloWidths& input_halo, bool bf16_input, bool training);

// What one step did.
struct StepResult {
  long step = 0, epoch = 0;  // the step taken (0-based, counted across resumes) and its epoch
  double loss = 0, lr = 0;
  double seconds = 0;           // the slowest rank's step time
  double io_seconds = 0;        // this rank's wait for the batch
  index_t samples = 0;          // the step's global batch
  bool stop_requested = false;  // a preemption signal reached some rank (agreed by all)
  std::size_t peak_bytes = 0;   // the largest rank's peak of tracked allocations so far
};

class TrainingRun {
 public:
  // Collective over `grid` (see the file comment for what it sets up). Throws InputError on every
  // rank for bad flags or data, a locked or unexpected checkpoint directory, or a checkpoint of
  // another run configuration.
  TrainingRun(const ProcessGrid& grid, const TrainingOptions& options, TrainingTask& task);
  ~TrainingRun();
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  // Trains the remaining steps. Returns 0, or kExitPreempted after a preemption checkpoint.
  int train();
  // One optimizer step on the next batch (collective). Throws Error on a non-finite loss, after
  // writing the diagnostic file.
  StepResult step();

  long nextStep() const { return _next; }
  long totalSteps() const { return _total; }
  long stepsPerEpoch() const { return _steps_per_epoch; }
  const std::string& runId() const { return _run_id; }
  // This rank's phase times of the last step.
  const nn::LayerTimers& timers() const { return _timers; }
  ModelCache& models() { return _models; }
  // The samples of --data.
  const SampleCatalog& data() const { return _catalog; }
  // A loader over `catalog` for this run's model (collective).
  DataLoader<> makeLoader(const SampleCatalog& catalog, bool training);

 private:
  void resume();
  void noticePrecisionChange(const LoadedCheckpoint& ck) const;
  void save(long steps_done);
  void validate(long steps_done, long epoch, Progress& progress);
  // The preemption stop after `steps_done` steps: checkpoint, record, message; kExitPreempted.
  int stop(long steps_done, Progress& progress);
  // Rank 0 prints the largest rank's memory peak (tracked and resident) and what made it up.
  void reportMemory() const;

  const ProcessGrid& _grid;
  const TrainingOptions _o;
  TrainingTask& _task;
  const bool _root;
  const std::string _run_id;
  Watchdog _watchdog;
  PreemptionSignals _signals;
  const TestFault _fault;
  std::unique_ptr<CheckpointDirLock> _lock;
  const SampleCatalog _catalog;
  ModelCache _models;
  nn::Model& _model;
  std::unique_ptr<nn::Optimizer> _optimizer;
  nn::GradientReducer _reducer;
  std::optional<DataLoader<>> _loader, _val_loader;
  long _steps_per_epoch = 0, _total = 0, _epochs = 0;
  nn::LrSchedule _schedule;
  CheckpointPolicy _policy;
  const std::string _config_json;
  long _first = 0, _next = 0, _last_saved = -1;
  int _stop_signal = 0;
  std::string _last_checkpoint = "(none)";
  std::unique_ptr<MetricsWriter> _metrics;
  nn::LayerTimers _timers;
  nn::RunContext _ctx;
};

}  // namespace halo3d::apps
