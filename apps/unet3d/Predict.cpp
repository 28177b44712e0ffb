// `unet3d predict`: segments one volume, which may be larger than the training samples (the network
// is fully convolutional, so the trained weights fit a model built for any volume the network
// divides).
//
//   whole volume   the model is built for the volume (padded with zeros to a multiple of 2^depth
//   with --pad)
//                  and the volume is spread over the spatial ranks: one spatially parallel forward
//                  pass.
//   sliding window (--tile T) the model is built for T^3 tiles, each spread over the ranks; the
//   tiles'
//                  softmax outputs are gathered on rank 0 and blended with Gaussian weights
//                  (SlidingWindow.hpp), so the activations need memory for one tile, not for the
//                  volume.
//
// Rank 0 assembles the label volume (and the probabilities), writes --out, and scatters the labels
// back to score them against the sample's true labels (per-class Dice, from allreduced counts).
#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "halo3d/apps/common/AppSupport.hpp"
#include "halo3d/apps/common/RunId.hpp"
#include "halo3d/apps/common/RunSupport.hpp"
#include "halo3d/apps/unet3d/ModelSetup.hpp"
#include "halo3d/apps/unet3d/PredictionFile.hpp"
#include "halo3d/apps/unet3d/SlidingWindow.hpp"
#include "halo3d/apps/unet3d/Training.hpp"
#include "halo3d/apps/unet3d/WindowReader.hpp"
#include "halo3d/comm/Allreduce.hpp"
#include "halo3d/comm/Distribute.hpp"
#include "halo3d/io/Collective.hpp"

namespace halo3d::apps {

namespace {

using Clock = std::chrono::steady_clock;

// The volume the model sees: `e` itself, or padded up to a multiple of 2^depth with --pad.
Extents3 modelVolume(const Extents3& e, const UNetOptions& o) {
  const index_t factor = index_t(1) << o.depth;
  Extents3 padded;
  for (int d = 0; d < 3; ++d)
    padded[d] = (e[d] + factor - 1) / factor * factor;
  if (o.pad) return padded;
  require<InputError>(padded == e, "the volume ", e[0], "x", e[1], "x", e[2],
                      " is not divisible by 2^depth = ", factor, " (depth ", o.depth,
                      "): pass --pad to pad it with zeros to ", padded[0], "x", padded[1], "x",
                      padded[2], ", or use --tile");
  return e;
}

// A model for one sample of `volume` on `grid`, sharing `store` (null: a new store).
std::unique_ptr<nn::Model> buildFor(const nn::UNetConfig& base, const Extents3& volume,
                                    const ProcessGrid& grid,
                                    std::shared_ptr<nn::ParameterStore> store) {
  nn::UNetConfig c = base;
  c.input_extents = volume;
  auto model = nn::makeUNet3d(c, std::move(store));
  model->build(grid, 1);
  requireSpatialOutput(*model, grid.shape(), c);
  return model;
}

// The cells [0, e) of every channel of a global (1, C, D', H', W') host tensor, C order.
template <class T, class Out>
void cropInto(const GlobalHostTensor<T>& g, const Extents3& e, std::vector<Out>& out) {
  out.clear();
  out.reserve(std::size_t(g.extent(1) * e[0] * e[1] * e[2]));
  for (std::size_t c = 0; c < g.extent(1); ++c)
    for (index_t d = 0; d < e[0]; ++d)
      for (index_t h = 0; h < e[1]; ++h)
        for (index_t w = 0; w < e[2]; ++w)
          out.push_back(Out(g(0, c, d, h, w)));
}

// One forward pass of `model` (evaluation mode) on the window of sample `id` at `origin`; leaves
// the labels and, when `probs` is allocated, the softmax in the output's block.
void segmentWindow(nn::Model& model, WindowReader& reader, const ProcessGrid& grid, index_t id,
                   const Extents3& origin, const Labels& labels, const nn::Tensor& probs) {
  reader.readInput(id, origin, model.input().tensor);
  nn::RunContext ctx;
  ctx.grid = &grid;
  ctx.training = false;
  model.forward(ctx);
  softmaxArgmax(model.output().tensor, labels, probs, model.output().owned());
}

// Whole-volume mode: the prediction of the (padded) volume, on rank 0.
Prediction predictWhole(const UNetOptions& o, const nn::UNetConfig& config, const ProcessGrid& grid,
                        WindowReader& reader, const Extents3& volume) {
  const Extents3 padded = modelVolume(volume, o);
  auto model = buildFor(config, padded, grid, nullptr);
  loadTrainedWeights(model->parameters(), o.init_weights, o.checkpoint_dir, grid.comm());
  const Labels labels = labelsLike(model->output(), "halo3d::predicted");
  const nn::Tensor probs = o.probabilities
                               ? nn::Tensor("halo3d::probabilities", model->output().tensor.block())
                               : nn::Tensor();
  segmentWindow(*model, reader, grid, o.sample, {0, 0, 0}, labels, probs);
  Prediction p;
  const GlobalHostTensor<std::int32_t> all_labels = gatherGlobal(labels, grid);
  GlobalHostTensor<nn::real> all_probs;
  if (o.probabilities) all_probs = gatherGlobal(probs, grid);
  if (grid.isRoot()) {
    cropInto(all_labels, volume, p.labels);
    if (o.probabilities) cropInto(all_probs, volume, p.probabilities);
  }
  return p;
}

// Sliding-window mode: every tile spread over the ranks, blended on rank 0.
Prediction predictTiled(const UNetOptions& o, const nn::UNetConfig& config, const ProcessGrid& grid,
                        WindowReader& reader, const Extents3& volume, Progress& progress) {
  const index_t factor = index_t(1) << o.depth, t = o.tile;
  require<InputError>(t >= factor && t % factor == 0, "--tile ", t,
                      " is not a multiple of 2^depth = ", factor, " (depth ", o.depth, ")");
  auto model = buildFor(config, {t, t, t}, grid, nullptr);
  loadTrainedWeights(model->parameters(), o.init_weights, o.checkpoint_dir, grid.comm());
  const Labels labels = labelsLike(model->output(), "halo3d::tile_labels");
  const nn::Tensor probs("halo3d::tile_probabilities", model->output().tensor.block());
  const std::vector<Extents3> origins = tileOrigins(volume, t, o.overlap);
  const std::vector<double> profile = gaussianProfile(t, o.sigma_scale);
  const index_t classes = config.classes;
  const std::size_t cells = std::size_t(volume[0] * volume[1] * volume[2]);
  std::vector<double> blended, weight;  // rank 0: (C, D, H, W) sum of w * p, and (D, H, W) sum of w
  if (grid.isRoot()) {
    blended.assign(cells * std::size_t(classes), 0.0);
    weight.assign(cells, 0.0);
  }
  for (std::size_t k = 0; k < origins.size(); ++k) {
    const Extents3& at = origins[k];
    segmentWindow(*model, reader, grid, o.sample, at, labels, probs);
    const GlobalHostTensor<nn::real> tile = gatherGlobal(probs, grid);
    if (grid.isRoot()) {
      for (index_t d = 0; d < std::min(t, volume[0] - at[0]); ++d)
        for (index_t h = 0; h < std::min(t, volume[1] - at[1]); ++h)
          for (index_t w = 0; w < std::min(t, volume[2] - at[2]); ++w) {
            const double g =
                profile[std::size_t(d)] * profile[std::size_t(h)] * profile[std::size_t(w)];
            const std::size_t cell =
                std::size_t(((at[0] + d) * volume[1] + at[1] + h) * volume[2] + at[2] + w);
            weight[cell] += g;
            for (index_t c = 0; c < classes; ++c)
              blended[std::size_t(c) * cells + cell] += g * tile(0, c, d, h, w);
          }
    }
    progress.message(
        concat("tile ", k + 1, "/", origins.size(), " at (", at[0], ", ", at[1], ", ", at[2], ")"));
  }
  Prediction p;
  if (!grid.isRoot()) return p;
  p.labels.resize(cells);
  if (o.probabilities) p.probabilities.resize(cells * std::size_t(classes));
  for (std::size_t cell = 0; cell < cells; ++cell) {
    std::int32_t best = 0;
    for (index_t c = 0; c < classes; ++c) {
      const double v = blended[std::size_t(c) * cells + cell] / weight[cell];
      if (v > blended[std::size_t(best) * cells + cell] / weight[cell]) best = std::int32_t(c);
      if (o.probabilities) p.probabilities[std::size_t(c) * cells + cell] = float(v);
    }
    p.labels[cell] = best;
  }
  return p;
}

// Per-class Dice of rank 0's labels against the sample's true labels, on every rank.
DiceCounts score(const Prediction& p, const UNetOptions& o, const ProcessGrid& grid,
                 WindowReader& reader, const Extents3& volume, index_t classes) {
  const Shape5 shape{1, 1, volume[0], volume[1], volume[2]};
  GlobalHostTensor<std::int32_t> all;
  if (grid.isRoot()) {
    all = GlobalHostTensor<std::int32_t>("halo3d::predicted_volume", 1, 1, volume[0], volume[1],
                                         volume[2]);
    std::copy(p.labels.begin(), p.labels.end(), all.data());
  }
  const Labels predicted("halo3d::predicted", grid.blockOf(shape));
  scatterGlobal(all, predicted, grid);
  const Labels truth("halo3d::truth", grid.blockOf(shape));
  reader.readLabels(o.sample, {0, 0, 0}, truth);
  DiceCounts counts(classes);
  counts.add(predicted, truth, predicted.block().owned());
  counts.allreduce(grid.comm());
  return counts;
}

}  // namespace

int predictUNet(const UNetOptions& o) {
  const auto t0 = Clock::now();
  ProcessGrid grid(MPI_COMM_WORLD, gridFromOption(o.grid));
  const bool root = grid.isRoot();
  require<InputError>(grid.shape().n() == 1,
                      "predict spreads one volume over the ranks: the grid must be ",
                      "1xDxHxW, got ", grid.shape().str());
  require<InputError>(!o.out.empty(), "--out is required");
  checkDeclaredClasses(o.data, o.classes);
  const SampleCatalog catalog =
      SampleCatalog::open(sampleFiles(o.data, "--data"), SampleKind::UNet, grid.comm());
  require<InputError>(o.sample >= 0 && o.sample < catalog.size(), "--sample ", o.sample,
                      " does not exist: the data holds ", catalog.size(), " samples");
  const nn::UNetConfig config = modelConfig(o, catalog, false);
  const Extents3 volume = catalog.extents();
  WindowReader reader(grid, catalog, readOptions(o));
  Progress progress(root, 1, 0);
  if (root)
    std::printf("unet3d predict: sample %lld of %s, volume %lldx%lldx%lld, grid %s, %s\n",
                (long long)o.sample, o.data.c_str(), (long long)volume[0], (long long)volume[1],
                (long long)volume[2], grid.shape().str().c_str(),
                o.tile > 0
                    ? concat("sliding window, tile ", o.tile, "^3, overlap ", o.overlap).c_str()
                    : "whole volume");
  Prediction p = o.tile > 0 ? predictTiled(o, config, grid, reader, volume, progress)
                            : predictWhole(o, config, grid, reader, volume);
  p.extents = volume;
  p.classes = config.classes;
  const double predict_seconds =
      maxOver(std::chrono::duration<double>(Clock::now() - t0).count(), grid.comm());
  nlohmann::json info = {{"data", o.data},
                         {"sample", o.sample},
                         {"mode", o.tile > 0 ? "sliding-window" : "whole-volume"},
                         {"grid", grid.shape().str()},
                         {"base", config.base},
                         {"depth", config.depth},
                         {"classes", config.classes}};
  if (o.tile > 0) {
    info["tile"] = o.tile;
    info["overlap"] = o.overlap;
    info["sigma_scale"] = o.sigma_scale;
  }
  p.info_json = info.dump();
  runCollectively(grid.comm(), [&] {
    if (root) writePrediction(o.out, p);
  });
  const DiceCounts counts = score(p, o, grid, reader, volume, config.classes);
  if (root) {
    std::printf("wrote %s (%.2f s)  %s\n", o.out.c_str(), predict_seconds,
                counts.summary().c_str());
    MetricsWriter metrics(o.metrics, true, makeRunId());
    nlohmann::json rec = info;
    rec.update(counts.json());
    rec["phase"] = "predict";
    rec["out"] = o.out;
    rec["seconds"] = predict_seconds;
    metrics.write(rec);
  }
  return 0;
}

}  // namespace halo3d::apps
