#pragma once
// Pieces of a training or evaluation run that every application binary needs in the same form: the
// grid flag, the data flags, where the weights come from, the JSON record of a training step and
// the stop on a non-finite loss. Header-only, so that an application takes it without a change to
// halo3d_app_support.

#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "halo3d/apps/common/TrainingOptions.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/GridShape.hpp"
#include "halo3d/io/Checkpointer.hpp"
#include "halo3d/io/HyperslabReader.hpp"
#include "halo3d/io/SampleCatalog.hpp"
#include "halo3d/nn/Init.hpp"
#include "halo3d/nn/LayerTimers.hpp"
#include "halo3d/nn/StateDict.hpp"
#include "halo3d/nn/layers/BatchNorm3d.hpp"

namespace halo3d::apps {

// The --grid flag: NxDxHxW, or 1xPx1x1 (split D over every rank) when empty. ("auto" is resolved
// by resolveGrid in GridPlanning.hpp, for training runs.)
inline GridShape gridFromOption(const std::string& grid) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  require<InputError>(grid != "auto",
                      "--grid auto chooses the grid of a training run (train); give this command a "
                      "grid NxDxHxW");
  return grid.empty() ? GridShape(1, size, 1, 1) : GridShape::parse(grid);
}

// The sample files of a data flag (`flag` names it in errors): a file, or the .h5/.hdf5 files of a
// directory.
inline std::vector<std::string> sampleFiles(const std::string& path, const char* flag) {
  require<InputError>(!path.empty(), flag, " is required");
  require<InputError>(std::filesystem::exists(path), flag, " '", path, "' does not exist");
  std::vector<std::string> files = listSampleFiles(path);
  require<InputError>(!files.empty(), flag, " '", path, "' holds no .h5/.hdf5 sample files");
  return files;
}

// How the data loaders read, as far as the shared flags say (--mpiio, --transform).
inline ReadOptions sharedReadOptions(const TrainingOptions& o) {
  ReadOptions r;
  r.mode = o.mpiio == "collective" ? IoMode::Collective : IoMode::Independent;
  r.transform = InputTransform::parse(o.transform);
  return r;
}

// The optimisation's part of a checkpoint's run configuration (TrainingTask::configJson).
inline void addOptimisationConfig(nlohmann::json& j, const TrainingOptions& o) {
  j["batch"] = o.batch;
  j["optimizer"] = o.optimizer;
  j["lr"] = o.lr;
  j["momentum"] = o.momentum;
  j["seed"] = o.seed;
}

// --bn-stats: "global" or "spatial".
inline nn::StatsGroup statsGroupOf(const std::string& bn_stats) {
  return bn_stats == "global" ? nn::StatsGroup::Global : nn::StatsGroup::Spatial;
}

// Training start: PyTorch-named weights from `init_weights` (FILE.h5[:/group]), or the
// deterministic initialisation from `seed` when it is empty.
inline void loadInitialWeights(nn::ParameterStore& store, const std::string& init_weights,
                               std::uint64_t seed) {
  if (init_weights.empty()) {
    nn::initializeParameters(store, seed);
    return;
  }
  const auto [file, group] = nn::splitWeightsSpec(init_weights);
  nn::importStateDict(store, nn::readStateDictFile(file, group),
                      "'" + file + "' group '" + group + "'");
}

// Evaluation and prediction: the weights of `init_weights`, or else of the newest valid checkpoint
// in `checkpoint_dir`. Collective over `comm`. Throws InputError if neither is given or the
// directory holds no valid checkpoint.
inline void loadTrainedWeights(nn::ParameterStore& store, const std::string& init_weights,
                               const std::string& checkpoint_dir, MPI_Comm comm) {
  require<InputError>(
      !init_weights.empty() || !checkpoint_dir.empty(),
      "trained weights are needed: --init-weights FILE.h5[:/group] or --checkpoint-dir DIR");
  if (!init_weights.empty()) {
    loadInitialWeights(store, init_weights, 0);
    return;
  }
  auto ck = loadLatest(checkpoint_dir, comm);
  require<InputError>(ck.has_value(), "no valid checkpoint in '", checkpoint_dir, "'");
  nn::importStateDict(store, ck->state.model, ck->path);
}

// The metrics record of one training step.
inline nlohmann::json trainStepRecord(long step, long epoch, double loss, double lr,
                                      double samples_per_s, double step_seconds, double io_seconds,
                                      std::size_t peak_bytes, const nn::LayerTimers& timers) {
  nlohmann::json rec;
  rec["phase"] = "train";
  rec["step"] = step;
  rec["epoch"] = epoch;
  rec["loss"] = loss;
  rec["lr"] = lr;
  rec["samples_per_s"] = samples_per_s;
  rec["step_seconds"] = step_seconds;
  rec["peak_bytes"] = peak_bytes;
  rec["times"] = {{"io", io_seconds},
                  {"compute", timers.total(nn::Phase::Compute)},
                  {"halo_wait", timers.total(nn::Phase::HaloWait)},
                  {"redistribute", timers.total(nn::Phase::Redistribute)},
                  {"allreduce", timers.total(nn::Phase::Allreduce)}};
  return rec;
}

// Where a diverging run stopped (for the diagnostic file).
struct NonFiniteLoss {
  long step = 0, epoch = 0;
  double loss = 0, lr = 0;
  std::vector<index_t> sample_ids;  // of the root's sample group
};

// Does nothing for a finite loss. Otherwise stops every rank (the loss is the same on all): the
// root writes `<checkpoint_dir or .>/nan-diagnostic-step<S>.json` (creating the directory) beside
// the last good checkpoint, which stays intact, and the error names both.
inline void stopOnNonFiniteLoss(const NonFiniteLoss& at, const std::string& checkpoint_dir,
                                const std::string& last_checkpoint, bool root) {
  if (std::isfinite(at.loss)) return;
  const std::string dir = checkpoint_dir.empty() ? std::string(".") : checkpoint_dir;
  const std::string diag = dir + "/nan-diagnostic-step" + std::to_string(at.step) + ".json";
  std::string written = diag;
  if (root) {
    nlohmann::json d;
    d["step"] = at.step;
    d["epoch"] = at.epoch;
    d["loss"] = std::to_string(at.loss);
    d["lr"] = at.lr;
    d["sample_ids"] = at.sample_ids;
    d["last_good_checkpoint"] = last_checkpoint;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::ofstream out(diag);
    out << d.dump(2) << '\n';
    out.close();
    if (!out) written = concat("(could not be written to ", diag, ")");
  }
  throw Error(concat("the loss became ", at.loss, " at step ", at.step, " (epoch ", at.epoch,
                     "); training stopped. Diagnostic: ", written,
                     "; last good checkpoint: ", last_checkpoint));
}

}  // namespace halo3d::apps
