#include "apps/cosmoflow/Training.hpp"

#include <chrono>

#include "apps/common/AppSupport.hpp"
#include "apps/common/ModelCache.hpp"
#include "apps/common/RunSupport.hpp"
#include "comm/Allreduce.hpp"
#include "core/Error.hpp"
#include "io/Checkpointer.hpp"
#include "io/DataLoader.hpp"
#include "io/SampleCatalog.hpp"
#include "nn/Checkpointing.hpp"
#include "nn/GradientReducer.hpp"
#include "nn/Loss.hpp"
#include "nn/LrSchedule.hpp"
#include "nn/layers/Redistribute.hpp"
#include "nn/models/CosmoFlow.hpp"

namespace halo3d::apps {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

nn::CosmoFlowConfig modelConfig(const CosmoFlowOptions& o, const SampleCatalog& catalog) {
  const Extents3 e = catalog.extents();
  require<InputError>(e[0] == e[1] && e[1] == e[2],
                      "CosmoFlow needs cubic samples, the data holds ", e);
  require<InputError>(o.input_size == 0 || o.input_size == e[0], "--input-size ", o.input_size,
                      " does not match the data's samples of ", e[0], "^3");
  require<InputError>(catalog.targetWidth() == 4, "CosmoFlow regresses 4 parameters; the data has ",
                      catalog.targetWidth(), " targets per sample");
  nn::CosmoFlowConfig c;
  c.input_size = e[0];
  c.input_channels = catalog.channels();
  c.width = o.width;
  c.batchnorm = o.batchnorm;
  c.bn_group = o.bn_stats == "global" ? nn::StatsGroup::Global : nn::StatsGroup::Spatial;
  c.dropout = o.dropout;
  c.validate();
  return c;
}

// The run configuration stored in checkpoints: everything that defines the model and the
// optimisation, and nothing about the partition (checkpoints are identical under every grid).
std::string configJson(const CosmoFlowOptions& o, const nn::CosmoFlowConfig& c) {
  nlohmann::json j;
  j["model"] = "cosmoflow";
  j["input_size"] = c.input_size;
  j["input_channels"] = c.input_channels;
  j["width"] = c.width;
  j["batchnorm"] = c.batchnorm;
  j["bn_stats"] = o.bn_stats;
  j["dropout"] = c.dropout;
  j["batch"] = o.batch;
  j["optimizer"] = o.optimizer;
  j["lr"] = o.lr;
  j["momentum"] = o.momentum;
  j["seed"] = o.seed;
  return j.dump();
}

DataLoaderOptions loaderOptions(const CosmoFlowOptions& o, nn::Model& model, bool training) {
  DataLoaderOptions lo;
  lo.kind = SampleKind::CosmoFlow;
  lo.batch_size = o.batch;
  lo.seed = o.seed;
  lo.shuffle = training && !o.no_shuffle;
  lo.halo = model.input().tensor.block().halo();
  lo.prefetch = !o.no_prefetch;
  lo.store_budget_bytes = std::size_t(o.data_store_gib * double(std::size_t(1) << 30));
  lo.read.mode = o.mpiio == "collective" ? IoMode::Collective : IoMode::Independent;
  lo.read.transform = InputTransform::parse(o.transform);
  return lo;
}

// Loads the batch into the model for its size and runs forward; returns the model.
nn::Model& feed(ModelCache& models, const Batch<>& b) {
  nn::Model& m = models.forBatch(b.global_batch);
  nn::copyBox(b.input, m.input().tensor, m.input().owned());
  return m;
}

// Sum over the data group of a quantity identical on the ranks of each spatial group.
double sumOverGroups(const ProcessGrid& grid, double local) {
  return sumOver(local, grid.dataComm());
}

struct Evaluation {
  double mse = 0, baseline_mse = 0;  // baseline: predicting the given target mean
  index_t samples = 0;
};

// MSE of the model on every sample of `loader`'s data, in evaluation mode (BatchNorm uses running
// statistics).
Evaluation evaluate(const ProcessGrid& grid, ModelCache& models, DataLoader<>& loader,
                    const std::array<double, 4>& target_mean) {
  Evaluation e;
  nn::RunContext ctx;
  ctx.grid = &grid;
  ctx.training = false;
  nn::MseLoss mse;
  double sq = 0, base = 0;
  for (index_t s = 0; s < loader.stepsPerEpoch(); ++s) {
    const Batch<> b = loader.next();
    nn::Model& m = feed(models, b);
    m.forward(ctx);
    sq += mse.compute(grid, m.output(), b.targets, nullptr) * double(b.global_batch * 4);
    double local = 0;
    for (std::size_t i = 0; i < b.targets.size(); ++i) {
      const double d = b.targets[i] - target_mean[i % 4];
      local += d * d;
    }
    base += sumOverGroups(grid, local);
    e.samples += b.global_batch;
  }
  e.mse = sq / double(e.samples * 4);
  e.baseline_mse = base / double(e.samples * 4);
  return e;
}

// The mean of every target over a data set (each spatial group reads its samples' targets).
std::array<double, 4> targetMean(const ProcessGrid& grid, DataLoader<>& loader) {
  std::array<double, 4> sum{0, 0, 0, 0};
  index_t n = 0;
  for (index_t s = 0; s < loader.stepsPerEpoch(); ++s) {
    const Batch<> b = loader.next();
    for (std::size_t i = 0; i < b.targets.size(); ++i)
      sum[i % 4] += b.targets[i];
    n += b.global_batch;
  }
  for (double& v : sum)
    v = sumOverGroups(grid, v) / double(n);
  return sum;
}

}  // namespace

int trainCosmoFlow(const CosmoFlowOptions& o) {
  ProcessGrid grid(MPI_COMM_WORLD, gridFromOption(o.grid));
  const bool root = grid.isRoot();
  const SampleCatalog catalog =
      SampleCatalog::open(sampleFiles(o.data, "--data"), SampleKind::CosmoFlow, grid.comm());
  const nn::CosmoFlowConfig config = modelConfig(o, catalog);
  require<InputError>(o.checkpoint_dir.empty() || o.keep_checkpoints >= 1,
                      "--keep-checkpoints must be >= 1");
  require<InputError>(!o.resume || !o.checkpoint_dir.empty(), "--resume needs --checkpoint-dir");
  require<InputError>(o.epochs >= 1 || o.steps >= 1, "give --epochs >= 1 or --steps >= 1");

  ModelCache models(grid, [&](std::shared_ptr<nn::ParameterStore> store) {
    return nn::makeCosmoFlow(config, std::move(store));
  });
  nn::Model& model = models.forBatch(o.batch);
  if (root)
    std::printf("cosmoflow: grid %s, %d ranks, input %lld^3 x %lld, batch %lld, %zu parameters\n%s",
                grid.shape().str().c_str(), grid.size(), (long long)config.input_size,
                (long long)config.input_channels, (long long)o.batch,
                model.parameters().trainableSize(), model.summary().c_str());
  loadInitialWeights(model.parameters(), o.init_weights, o.seed);

  nn::OptimizerConfig oc;
  oc.kind = nn::parseOptimizerKind(o.optimizer);
  oc.lr = o.lr;
  oc.momentum = o.momentum;
  auto optimizer = nn::makeOptimizer(model.parameters(), oc);
  nn::GradientReducer reducer(grid.comm(), model.parameters());

  DataLoader<> loader(grid, catalog, loaderOptions(o, model, true));
  const long steps_per_epoch = long(loader.stepsPerEpoch());
  const long total = o.steps > 0 ? o.steps : o.epochs * steps_per_epoch;
  const long epochs = (total + steps_per_epoch - 1) / steps_per_epoch;
  nn::LrSchedule schedule;
  schedule.base_lr = o.lr;
  schedule.warmup_steps = o.warmup_steps;
  schedule.decay = nn::parseLrDecay(o.lr_decay);
  schedule.step_every = o.lr_step_every;
  schedule.step_gamma = o.lr_gamma;
  schedule.total_steps = total;
  schedule.validate();

  CheckpointPolicy policy;
  policy.dir = o.checkpoint_dir;
  policy.keep_last = o.keep_checkpoints;
  const std::string config_json = configJson(o, config);
  long first = 0;
  std::string last_checkpoint = "(none)";
  if (o.resume) {
    if (auto ck = loadLatest(o.checkpoint_dir, grid.comm())) {
      require<InputError>(ck->state.config == config_json, "checkpoint ", ck->path,
                          " was written by a different run configuration:\n  checkpoint: ",
                          ck->state.config, "\n  this run:   ", config_json);
      const auto counters = nn::restoreState(ck->state, model.parameters(), *optimizer, ck->path);
      first = long(counters.at("step"));
      last_checkpoint = ck->path;
      if (root) std::printf("resuming from %s at step %ld\n", ck->path.c_str(), first);
    } else if (root) {
      std::printf("no checkpoint in %s: starting from scratch\n", o.checkpoint_dir.c_str());
    }
  }
  if (first >= total) {
    if (root) std::printf("nothing to do: %ld of %ld steps already done\n", first, total);
    return 0;
  }
  loader.seek(first / steps_per_epoch, first % steps_per_epoch);

  std::optional<DataLoader<>> val_loader;
  std::array<double, 4> train_mean{0, 0, 0, 0};
  if (!o.val_data.empty()) {
    const SampleCatalog vc = SampleCatalog::open(sampleFiles(o.val_data, "--val-data"),
                                                 SampleKind::CosmoFlow, grid.comm());
    require<InputError>(vc.extents() == catalog.extents() && vc.channels() == catalog.channels(),
                        "--val-data samples (", vc.channels(), " x ", vc.extents(),
                        ") differ from --data samples (", catalog.channels(), " x ",
                        catalog.extents(), ")");
    val_loader.emplace(grid, vc, loaderOptions(o, model, false));
    DataLoader<> mean_loader(grid, catalog, loaderOptions(o, model, false));
    train_mean = targetMean(grid, mean_loader);
  }

  MetricsWriter metrics(o.metrics, root);
  Progress progress(root, total, first);
  nn::LayerTimers timers;
  nn::RunContext ctx;
  ctx.grid = &grid;
  ctx.reducer = &reducer;
  ctx.timers = &timers;
  ctx.overlap = !o.no_overlap;
  ctx.seed = o.seed;
  nn::MseLoss mse;
  double epoch_loss_sum = 0;  // the epoch's mean training loss goes into the epoch-end line
  long epoch_loss_steps = 0;
  auto save = [&](long step_done) {
    if (o.checkpoint_dir.empty()) return;
    const std::map<std::string, std::int64_t> counters{{"step", step_done},
                                                       {"epoch", step_done / steps_per_epoch}};
    last_checkpoint =
        saveCheckpoint(nn::captureState(model.parameters(), *optimizer, counters, config_json),
                       step_done, policy, grid.comm());
  };

  for (long step = first; step < total; ++step) {
    const auto t0 = Clock::now();
    timers.reset();
    const Batch<> batch = loader.next();
    const double io_seconds = since(t0);
    nn::Model& m = feed(models, batch);
    ctx.step = step;
    ctx.training = true;
    m.forward(ctx);
    const double loss = mse.compute(grid, m.output(), batch.targets, &m.outputGradient());
    stopOnNonFiniteLoss({step, long(batch.epoch), loss, schedule.at(step), batch.sample_ids},
                        o.checkpoint_dir, last_checkpoint, root);
    m.backward(ctx);
    const double lr = schedule.at(step);
    optimizer->step(lr);
    Kokkos::fence();
    const double seconds = maxOver(since(t0), grid.comm());
    const double samples_per_s = double(batch.global_batch) / seconds;
    if (root)
      metrics.write(trainStepRecord(step, long(batch.epoch), loss, lr, samples_per_s, seconds,
                                    io_seconds, timers));
    progress.update(step, long(batch.epoch), epochs, loss, samples_per_s);
    epoch_loss_sum += loss;
    ++epoch_loss_steps;
    const bool epoch_end = (step + 1) % steps_per_epoch == 0 || step + 1 == total;
    if (epoch_end) {
      progress.message(concat("epoch ", batch.epoch + 1, ": mean training loss ",
                              epoch_loss_sum / epoch_loss_steps, " over ", epoch_loss_steps,
                              " steps"));
      epoch_loss_sum = 0;
      epoch_loss_steps = 0;
    }
    if ((o.checkpoint_every > 0 && (step + 1) % o.checkpoint_every == 0) ||
        (o.checkpoint_every == 0 && epoch_end))
      save(step + 1);
    if (epoch_end && val_loader) {
      loader.finishPrefetch();  // no two collective readers at once
      const Evaluation e = evaluate(grid, models, *val_loader, train_mean);
      if (root) {
        nlohmann::json rec;
        rec["phase"] = "val";
        rec["step"] = step + 1;
        rec["epoch"] = long(batch.epoch);
        rec["mse"] = e.mse;
        rec["baseline_mse"] = e.baseline_mse;
        rec["samples"] = e.samples;
        metrics.write(rec);
        progress.message(concat("validation after epoch ", batch.epoch + 1, ": mse ", e.mse,
                                " (predicting the training mean: ", e.baseline_mse, ", ratio ",
                                e.baseline_mse / e.mse, ")"));
      }
    }
  }
  progress.finish();
  return 0;
}

int evalCosmoFlow(const CosmoFlowOptions& o) {
  ProcessGrid grid(MPI_COMM_WORLD, gridFromOption(o.grid));
  const SampleCatalog catalog =
      SampleCatalog::open(sampleFiles(o.data, "--data"), SampleKind::CosmoFlow, grid.comm());
  const nn::CosmoFlowConfig config = modelConfig(o, catalog);
  ModelCache models(grid, [&](std::shared_ptr<nn::ParameterStore> store) {
    return nn::makeCosmoFlow(config, std::move(store));
  });
  nn::Model& model = models.forBatch(o.batch);
  loadTrainedWeights(model.parameters(), o.init_weights, o.checkpoint_dir, grid.comm());
  DataLoader<> loader(grid, catalog, loaderOptions(o, model, false));
  DataLoader<> mean_loader(grid, catalog, loaderOptions(o, model, false));
  const std::array<double, 4> mean = targetMean(grid, mean_loader);
  const Evaluation e = evaluate(grid, models, loader, mean);
  if (grid.isRoot()) {
    std::printf("cosmoflow eval: %lld samples, mse %.6g (predicting this set's mean: %.6g)\n",
                (long long)e.samples, e.mse, e.baseline_mse);
    MetricsWriter metrics(o.metrics, true);
    metrics.write({{"phase", "eval"},
                   {"mse", e.mse},
                   {"baseline_mse", e.baseline_mse},
                   {"samples", e.samples}});
  }
  return 0;
}

}  // namespace halo3d::apps
