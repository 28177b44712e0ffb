#include "halo3d/apps/common/TrainingRun.hpp"

#include <chrono>
#include <cstdio>

#include "halo3d/apps/common/GridPlanning.hpp"
#include "halo3d/apps/common/RunId.hpp"
#include "halo3d/apps/common/RunSupport.hpp"
#include "halo3d/core/Activity.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/core/MemoryInfo.hpp"
#include "halo3d/core/MemoryTracker.hpp"
#include "halo3d/io/Collective.hpp"
#include "halo3d/nn/Checkpointing.hpp"

namespace halo3d::apps {

namespace {

// The checkpoint counter that records the activations' precision (bits per element).
constexpr const char* kActivationBits = "activation_bits";

std::int64_t activationBits(nn::Precision p) {
  return std::int64_t(8 * nn::elementBytes(p));
}

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int worldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// The training data, checked against the flags that depend on it; the task's model follows it.
SampleCatalog openTrainingData(const TrainingOptions& o, TrainingTask& task,
                               const ProcessGrid& grid) {
  require<InputError>(o.resume == ResumeMode::Off || !o.checkpoint_dir.empty(),
                      "--resume needs --checkpoint-dir");
  ScopedActivity activity("opening the data set");
  SampleCatalog catalog = task.openData(o.data, "--data", grid);
  task.configure(catalog);
  require<InputError>(o.batch <= catalog.size(), "--batch ", o.batch,
                      " is larger than the data set: --data '", o.data, "' holds ", catalog.size(),
                      " samples");
  requirePlanFits(o, task, grid);  // --memory-limit, before the model is allocated
  return catalog;
}

std::unique_ptr<CheckpointDirLock> lockCheckpoints(const TrainingOptions& o,
                                                   const std::string& run_id, MPI_Comm comm) {
  if (o.checkpoint_dir.empty()) return nullptr;
  ScopedActivity activity("locking the checkpoint directory");
  return std::make_unique<CheckpointDirLock>(o.checkpoint_dir, run_id, comm);
}

// Collective: the metrics file, opened on the root (an error there stops every rank).
std::unique_ptr<MetricsWriter> openMetrics(const TrainingOptions& o, const std::string& run_id,
                                           const ProcessGrid& grid) {
  std::unique_ptr<MetricsWriter> writer;
  runCollectively(grid.comm(), [&] {
    writer = std::make_unique<MetricsWriter>(o.metrics, grid.isRoot(), run_id, grid.shape().str(),
                                             nn::toString(o.precision),
                                             nn::toString(o.allreduce_precision));
  });
  return writer;
}

}  // namespace

DataLoaderOptions loaderOptions(const TrainingOptions& o, const TrainingTask& task,
                                nn::Model& model, bool training) {
  return loaderOptions(o, task, model.input().block().halo(), model.input().isBf16(), training);
}

DataLoaderOptions loaderOptions(const TrainingOptions& o, const TrainingTask& task,
                                const HaloWidths& input_halo, bool bf16_input, bool training) {
  DataLoaderOptions lo;
  lo.kind = task.sampleKind();
  lo.batch_size = o.batch;
  lo.seed = o.seed;
  lo.shuffle = training && !o.no_shuffle;
  lo.halo = input_halo;
  // The model's input precision: a bf16 model gets bf16 batches, so that no float batch exists.
  lo.input = bf16_input ? BatchInput::BFloat16 : BatchInput::Float32;
  lo.prefetch = !o.no_prefetch;
  lo.store_budget_bytes = std::size_t(o.data_store_gib * double(std::size_t(1) << 30));
  lo.read = task.readOptions();
  return lo;
}

TrainingRun::TrainingRun(const ProcessGrid& grid, const TrainingOptions& options,
                         TrainingTask& task)
    : _grid(grid),
      _o(options),
      _task(task),
      _root(grid.isRoot()),
      _run_id(makeRunId(grid.comm())),
      _watchdog(task.program(), worldRank(), options.stall_timeout),
      _fault(TestFault::fromEnvironment()),
      _lock(lockCheckpoints(options, _run_id, grid.comm())),
      _catalog(openTrainingData(options, task, grid)),
      _models(
          grid,
          [&task](std::shared_ptr<nn::ParameterStore> store) {
            return task.makeModel(std::move(store));
          },
          [&task, &grid](const nn::Model& m) { task.checkBuilt(m, grid); }, options.memory_limit,
          options.precision),
      _model(_models.forBatch(options.batch)),
      _reducer(grid.comm(), _model.parameters(), std::size_t(4) << 20, KernelPath::Fastest,
               options.allreduce_precision),
      _config_json(task.configJson()),
      _metrics(openMetrics(options, _run_id, grid)) {
  if (_root && _o.print_model) std::printf("%s", task.describe(_model, grid, _o.batch).c_str());
  loadInitialWeights(_model.parameters(), _o.init_weights, _o.seed);

  nn::OptimizerConfig oc;
  oc.kind = _o.optimizer;
  oc.lr = _o.lr;
  oc.momentum = _o.momentum;
  _optimizer = nn::makeOptimizer(_model.parameters(), oc);

  _loader.emplace(makeLoader(_catalog, true));
  _steps_per_epoch = long(_loader->stepsPerEpoch());
  _total = _o.steps > 0 ? _o.steps : _o.epochs * _steps_per_epoch;
  _epochs = (_total + _steps_per_epoch - 1) / _steps_per_epoch;
  _schedule.base_lr = _o.lr;
  _schedule.warmup_steps = _o.warmup_steps;
  _schedule.decay = _o.lr_decay;
  _schedule.step_every = _o.lr_step_every;
  _schedule.step_gamma = _o.lr_gamma;
  _schedule.total_steps = _total;
  _schedule.validate();

  _policy.dir = _o.checkpoint_dir;
  _policy.keep_last = _o.keep_checkpoints;
  resume();
  _next = _first;
  if (_first < _total) _loader->seek(_first / _steps_per_epoch, _first % _steps_per_epoch);

  if (!_o.val_data.empty()) {
    ScopedActivity activity("opening the validation data");
    const SampleCatalog vc = task.openData(_o.val_data, "--val-data", grid);
    require<InputError>(vc.extents() == _catalog.extents() && vc.channels() == _catalog.channels(),
                        "--val-data samples (", vc.channels(), " x ", vc.extents(),
                        ") differ from --data samples (", _catalog.channels(), " x ",
                        _catalog.extents(), ")");
    _val_loader.emplace(makeLoader(vc, false));
  }

  _ctx.grid = &grid;
  _ctx.reducer = &_reducer;
  _ctx.timers = &_timers;
  _ctx.overlap = !_o.no_overlap;
  _ctx.seed = _o.seed;
}

TrainingRun::~TrainingRun() = default;

DataLoader<> TrainingRun::makeLoader(const SampleCatalog& catalog, bool training) {
  return DataLoader<>(_grid, catalog, loaderOptions(_o, _task, _model, training));
}

// A checkpoint holds the fp32 master parameters and the fp32 optimizer state in either precision,
// so one written by a bf16 run resumes an fp32 run (and the reverse) as it is: only the
// activations' storage changes. Rank 0 says so. Checkpoints from before the counter existed were
// fp32.
void TrainingRun::noticePrecisionChange(const LoadedCheckpoint& ck) const {
  const auto it = ck.state.counters.find(kActivationBits);
  const std::int64_t bits = it == ck.state.counters.end() ? 32 : it->second;
  if (bits == activationBits(_o.precision) || !_root) return;
  std::printf(
      "notice: %s was written by a run with %s activations; this run stores them in %s. Its "
      "parameters and optimizer state are fp32 in both precisions and are resumed unchanged.\n",
      ck.path.c_str(), bits == 16 ? "bf16" : "fp32", nn::toString(_o.precision));
}

void TrainingRun::resume() {
  const std::string& dir = _o.checkpoint_dir;
  if (dir.empty()) return;
  ScopedActivity activity("looking for checkpoints");
  if (_o.resume == ResumeMode::Off) {
    // A fresh run must not mix its checkpoints with those of an earlier run (pruning would keep
    // theirs and delete its own).
    runCollectively(_grid.comm(), [&] {
      if (!_root) return;
      const auto files = listCheckpoints(dir);
      require<InputError>(files.empty(), "--checkpoint-dir '", dir, "' already holds ",
                          files.size(), " checkpoint(s), the newest ", files.back().second,
                          ": pass --resume to continue from it, or use another directory");
    });
    return;
  }
  std::vector<std::string> invalid;
  auto ck = loadLatest(dir, _grid.comm(), 0, "checkpoint", &invalid);
  if (!ck) {
    require<InputError>(
        _o.resume == ResumeMode::IfAny, "--resume: no valid checkpoint in '", dir, "'",
        invalid.empty()
            ? std::string(" (it holds none)")
            : concat(" (", invalid.size(), " failed validation, newest: ", invalid.front(),
                     "; see the warnings above)"),
        "; pass --resume=if-any to start from scratch when there is none");
  } else {
    require<InputError>(ck->state.config == _config_json, "checkpoint ", ck->path,
                        " was written by a different run configuration:\n  checkpoint: ",
                        ck->state.config, "\n  this run:   ", _config_json);
  }
  // Never delete what failed validation, and never let pruning or a new save of the same step
  // touch it.
  runCollectively(_grid.comm(), [&] {
    if (!_root) return;
    for (const std::string& path : invalid)
      std::printf("set aside the invalid checkpoint %s as %s\n", path.c_str(),
                  setAsideCheckpoint(path).c_str());
  });
  if (!ck) {
    if (_root) std::printf("no valid checkpoint in %s: starting from scratch\n", dir.c_str());
    return;
  }
  noticePrecisionChange(*ck);
  const auto counters = nn::restoreState(ck->state, _model.parameters(), *_optimizer, ck->path);
  _first = long(counters.at("step"));
  _last_saved = _first;
  _last_checkpoint = ck->path;
  if (_root) std::printf("resuming from %s at step %ld\n", ck->path.c_str(), _first);
}

void TrainingRun::save(long steps_done) {
  if (_o.checkpoint_dir.empty()) return;
  ScopedActivity activity("writing a checkpoint");
  const std::map<std::string, std::int64_t> counters{
      {"step", steps_done},
      {"epoch", steps_done / _steps_per_epoch},
      {kActivationBits, activationBits(_o.precision)}};
  _last_checkpoint =
      saveCheckpoint(nn::captureState(_model.parameters(), *_optimizer, counters, _config_json),
                     steps_done, _policy, _grid.comm());
  _last_saved = steps_done;
}

StepResult TrainingRun::step() {
  StepResult r;
  r.step = _next;
  _watchdog.setStep(r.step);
  const auto t0 = Clock::now();
  _timers.reset();
  // Each phase is a scoped activity: the watchdog names it, and profilers see it as a region.
  const Batch<> batch = [&] {
    const ScopedActivity io("reading the batch (I/O)");
    return _loader->next();
  }();
  r.io_seconds = since(t0);
  _timers.add("input", nn::Phase::Io, r.io_seconds);
  nn::Model& m = _models.feed(batch);
  _ctx.step = r.step;
  _ctx.training = true;
  {
    const ScopedActivity forward("forward");
    m.forward(_ctx);
  }
  {
    const ScopedActivity loss("loss");
    r.loss = _task.loss(_grid, m, batch, &m.outputGradient());
  }
  r.lr = _schedule.at(r.step);
  r.epoch = long(batch.epoch);
  r.samples = batch.global_batch;
  stopOnNonFiniteLoss({r.step, r.epoch, r.loss, r.lr, batch.sample_ids}, _o.checkpoint_dir,
                      _last_checkpoint, _root);
  _fault.at(worldRank(), r.step);
  {
    const ScopedActivity backward("backward (with the gradient allreduce)");
    m.backward(_ctx);
  }
  {
    const ScopedActivity update("optimizer update");
    _optimizer->step(r.lr);
    fence("optimizer step done");
  }
  // The step time (the slowest rank's), any preemption signal and the largest rank's memory peak,
  // agreed in one allreduce.
  double agreed[3] = {since(t0), double(PreemptionSignals::received()),
                      double(MemoryTracker::peakBytes())};
  {
    const ScopedActivity agree("step-end allreduce");
    MPI_Allreduce(MPI_IN_PLACE, agreed, 3, MPI_DOUBLE, MPI_MAX, _grid.comm());
  }
  setActivity("between steps");
  r.seconds = agreed[0];
  _stop_signal = int(agreed[1]);
  r.stop_requested = _stop_signal != 0;
  r.peak_bytes = std::size_t(agreed[2]);
  ++_next;
  return r;
}

void TrainingRun::validate(long steps_done, long epoch, Progress& progress) {
  ScopedActivity activity("validation");
  _loader->finishPrefetch();  // no two collective readers at once
  const EvaluationResult e = _task.evaluate(_grid, _models, *_val_loader);
  if (!_root) return;
  nlohmann::json rec = e.record;
  rec["phase"] = "val";
  rec["step"] = steps_done;
  rec["epoch"] = epoch;
  _metrics->write(rec);
  progress.message(concat("validation after epoch ", epoch + 1, ": ", e.summary));
}

int TrainingRun::train() {
  if (_next >= _total) {
    if (_root) std::printf("nothing to do: %ld of %ld steps already done\n", _next, _total);
    return 0;
  }
  Progress progress(_root, _total, _first);
  double epoch_loss_sum = 0;  // each epoch's mean training loss goes into the epoch-end line
  long epoch_loss_steps = 0;
  while (_next < _total) {
    const StepResult r = step();
    const double samples_per_s = double(r.samples) / r.seconds;
    if (_root)
      _metrics->write(trainStepRecord(r.step, r.epoch, r.loss, r.lr, samples_per_s, r.seconds,
                                      r.io_seconds, r.peak_bytes, _timers));
    progress.update(r.step, r.epoch, _epochs, r.loss, samples_per_s);
    epoch_loss_sum += r.loss;
    ++epoch_loss_steps;
    const long done = r.step + 1;
    const bool epoch_end = done % _steps_per_epoch == 0 || done == _total;
    if (epoch_end) {
      progress.message(concat("epoch ", r.epoch + 1, ": mean training loss ",
                              epoch_loss_sum / double(epoch_loss_steps), " over ", epoch_loss_steps,
                              " steps"));
      epoch_loss_sum = 0;
      epoch_loss_steps = 0;
    }
    if ((_o.checkpoint_every > 0 && done % _o.checkpoint_every == 0) ||
        (_o.checkpoint_every == 0 && epoch_end))
      save(done);
    if (r.stop_requested && done < _total) return stop(done, progress);
    if (epoch_end && _val_loader) validate(done, r.epoch, progress);
  }
  if (_last_saved != _total) save(_total);  // the end of a run always saves
  progress.finish();
  reportMemory();
  return 0;
}

void TrainingRun::reportMemory() const {
  // The largest rank's tracked peak and resident set (they may be different ranks).
  double peaks[2] = {double(MemoryTracker::peakBytes()), double(peakResidentBytes())};
  MPI_Allreduce(MPI_IN_PLACE, peaks, 2, MPI_DOUBLE, MPI_MAX, _grid.comm());
  if (!_root) return;
  std::string top;
  const auto breakdown = MemoryTracker::peakBreakdown();
  for (std::size_t i = 0; i < std::min<std::size_t>(4, breakdown.size()); ++i)
    top += concat(i ? ", " : "", breakdown[i].first, " ", formatBytes(double(breakdown[i].second)));
  std::printf(
      "peak memory per rank: %s allocated (the largest rank), %s resident; on rank 0 at "
      "its peak: %s\n",
      formatBytes(peaks[0]).c_str(), formatBytes(peaks[1]).c_str(), top.c_str());
}

int TrainingRun::stop(long steps_done, Progress& progress) {
  if (_last_saved != steps_done) save(steps_done);
  if (_root) {
    _metrics->write({{"phase", "preempted"},
                     {"step", steps_done},
                     {"signal", signalName(_stop_signal)},
                     {"checkpoint", _o.checkpoint_dir.empty() ? "" : _last_checkpoint}});
    progress.message(
        concat("stopped by ", signalName(_stop_signal), " after step ", steps_done, " of ", _total,
               _o.checkpoint_dir.empty()
                   ? std::string(" (no --checkpoint-dir: nothing saved)")
                   : concat("; checkpoint ", _last_checkpoint, "; continue with --resume"),
               "; exit code ", kExitPreempted));
  }
  return kExitPreempted;
}

}  // namespace halo3d::apps
