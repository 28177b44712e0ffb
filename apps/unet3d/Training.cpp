#include "apps/unet3d/Training.hpp"

#include <chrono>
#include <optional>

#include "apps/common/AppSupport.hpp"
#include "apps/common/ModelCache.hpp"
#include "apps/common/RunSupport.hpp"
#include "apps/unet3d/ModelSetup.hpp"
#include "comm/Allreduce.hpp"
#include "io/DataLoader.hpp"
#include "nn/Checkpointing.hpp"
#include "nn/GradientReducer.hpp"
#include "nn/LrSchedule.hpp"
#include "nn/Optimizer.hpp"
#include "nn/layers/Redistribute.hpp"

namespace halo3d::apps {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

DataLoaderOptions loaderOptions(const UNetOptions& o, nn::Model& model, bool training) {
  DataLoaderOptions lo;
  lo.kind = SampleKind::UNet;
  lo.batch_size = o.batch;
  lo.seed = o.seed;
  lo.shuffle = training && !o.no_shuffle;
  lo.halo = model.input().tensor.block().halo();
  lo.prefetch = !o.no_prefetch;
  lo.store_budget_bytes = std::size_t(o.data_store_gib * double(std::size_t(1) << 30));
  lo.read = readOptions(o);
  return lo;
}

// The catalog of a data flag, after checking the classes it declares.
SampleCatalog openData(const std::string& path, const char* flag, const UNetOptions& o,
                       const ProcessGrid& grid) {
  checkDeclaredClasses(path, o.classes);
  return SampleCatalog::open(sampleFiles(path, flag), SampleKind::UNet, grid.comm());
}

ModelCache modelCache(const ProcessGrid& grid, const nn::UNetConfig& config) {
  return ModelCache(grid, [config](std::shared_ptr<nn::ParameterStore> store) {
    return nn::makeUNet3d(config, std::move(store));
  });
}

// The model for `batch`, checked to end split like the labels.
nn::Model& buildModel(ModelCache& models, index_t batch, const ProcessGrid& grid,
                      const nn::UNetConfig& c) {
  nn::Model& m = models.forBatch(batch);
  requireSpatialOutput(m, grid.shape(), c);
  return m;
}

// Loads the batch into the model for its size; returns the model.
nn::Model& feed(ModelCache& models, const Batch<>& b, const ProcessGrid& grid,
                const nn::UNetConfig& c) {
  nn::Model& m = buildModel(models, b.global_batch, grid, c);
  nn::copyBox(b.input, m.input().tensor, m.input().owned());
  return m;
}

struct Evaluation {
  double loss = 0;
  DiceCounts counts;
  index_t samples = 0;
};

// Loss and Dice counts over every sample of `loader`'s data, in evaluation mode (BatchNorm uses the
// running statistics).
Evaluation evaluate(const UNetOptions& o, const ProcessGrid& grid, const nn::UNetConfig& c,
                    ModelCache& models, DataLoader<>& loader) {
  Evaluation e;
  e.counts = DiceCounts(c.classes);
  nn::RunContext ctx;
  ctx.grid = &grid;
  ctx.training = false;
  for (index_t s = 0; s < loader.stepsPerEpoch(); ++s) {
    const Batch<> b = loader.next();
    nn::Model& m = feed(models, b, grid, c);
    m.forward(ctx);
    e.loss +=
        segmentationLoss(o.loss, grid, m.output(), b.labels, nullptr) * double(b.global_batch);
    const Labels predicted = labelsLike(m.output(), "halo3d::predicted");
    softmaxArgmax(m.output().tensor, predicted, nn::Tensor(), m.output().owned());
    e.counts.add(predicted, b.labels, m.output().owned());
    e.samples += b.global_batch;
  }
  e.counts.allreduce(grid.comm());
  e.loss /= double(e.samples);
  return e;
}

}  // namespace

int trainUNet(const UNetOptions& o) {
  ProcessGrid grid(MPI_COMM_WORLD, gridFromOption(o.grid));
  const bool root = grid.isRoot();
  const SampleCatalog catalog = openData(o.data, "--data", o, grid);
  const nn::UNetConfig config = modelConfig(o, catalog, true);
  require<InputError>(o.checkpoint_dir.empty() || o.keep_checkpoints >= 1,
                      "--keep-checkpoints must be >= 1");
  require<InputError>(!o.resume || !o.checkpoint_dir.empty(), "--resume needs --checkpoint-dir");
  require<InputError>(o.epochs >= 1 || o.steps >= 1, "give --epochs >= 1 or --steps >= 1");

  ModelCache models = modelCache(grid, config);
  nn::Model& model = buildModel(models, o.batch, grid, config);
  if (root)
    std::printf(
        "unet3d: grid %s, %d ranks, input %lld^3 x %lld, base %lld, depth %d, %lld classes, batch "
        "%lld, "
        "%zu parameters\n%s",
        grid.shape().str().c_str(), grid.size(), (long long)config.input_size,
        (long long)config.in_channels, (long long)config.base, config.depth,
        (long long)config.classes, (long long)o.batch, model.parameters().trainableSize(),
        model.summary().c_str());
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
  if (!o.val_data.empty()) {
    const SampleCatalog vc = openData(o.val_data, "--val-data", o, grid);
    require<InputError>(vc.extents() == catalog.extents() && vc.channels() == catalog.channels(),
                        "--val-data samples (", vc.channels(), " x ", vc.extents(),
                        ") differ from --data samples (", catalog.channels(), " x ",
                        catalog.extents(), ")");
    val_loader.emplace(grid, vc, loaderOptions(o, model, false));
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
    nn::Model& m = feed(models, batch, grid, config);
    ctx.step = step;
    ctx.training = true;
    m.forward(ctx);
    const double loss =
        segmentationLoss(o.loss, grid, m.output(), batch.labels, &m.outputGradient());
    const double lr = schedule.at(step);
    stopOnNonFiniteLoss({step, long(batch.epoch), loss, lr, batch.sample_ids}, o.checkpoint_dir,
                        last_checkpoint, root);
    m.backward(ctx);
    optimizer->step(lr);
    Kokkos::fence();
    const double seconds = maxOver(since(t0), grid.comm());
    const double samples_per_s = double(batch.global_batch) / seconds;
    if (root)
      metrics.write(trainStepRecord(step, long(batch.epoch), loss, lr, samples_per_s, seconds,
                                    io_seconds, timers));
    progress.update(step, long(batch.epoch), epochs, loss, samples_per_s);
    const bool epoch_end = (step + 1) % steps_per_epoch == 0 || step + 1 == total;
    if ((o.checkpoint_every > 0 && (step + 1) % o.checkpoint_every == 0) ||
        (o.checkpoint_every == 0 && epoch_end))
      save(step + 1);
    if (epoch_end && val_loader) {
      loader.finishPrefetch();  // no two collective readers at once
      const Evaluation e = evaluate(o, grid, config, models, *val_loader);
      if (root) {
        nlohmann::json rec = e.counts.json();
        rec["phase"] = "val";
        rec["step"] = step + 1;
        rec["epoch"] = long(batch.epoch);
        rec["loss"] = e.loss;
        rec["samples"] = e.samples;
        metrics.write(rec);
        progress.message(concat("validation after epoch ", batch.epoch + 1, ": loss ", e.loss, "  ",
                                e.counts.summary()));
      }
    }
  }
  progress.finish();
  return 0;
}

int evalUNet(const UNetOptions& o) {
  ProcessGrid grid(MPI_COMM_WORLD, gridFromOption(o.grid));
  const SampleCatalog catalog = openData(o.data, "--data", o, grid);
  const nn::UNetConfig config = modelConfig(o, catalog, true);
  ModelCache models = modelCache(grid, config);
  nn::Model& model = buildModel(models, o.batch, grid, config);
  loadTrainedWeights(model.parameters(), o.init_weights, o.checkpoint_dir, grid.comm());
  DataLoader<> loader(grid, catalog, loaderOptions(o, model, false));
  const Evaluation e = evaluate(o, grid, config, models, loader);
  if (grid.isRoot()) {
    std::printf("unet3d eval: %lld samples, loss %.6g, %s\n", (long long)e.samples, e.loss,
                e.counts.summary().c_str());
    MetricsWriter metrics(o.metrics, true);
    nlohmann::json rec = e.counts.json();
    rec["phase"] = "eval";
    rec["loss"] = e.loss;
    rec["samples"] = e.samples;
    metrics.write(rec);
  }
  return 0;
}

}  // namespace halo3d::apps
