// halo3d-plan: the plan and the predicted step of a model on any number of ranks, from a machine
// file, without running it (and without an MPI job: the plan and the step model are pure). For each
// rank count it takes the given grid, or with --grid auto the fastest grid that fits the memory
// limit, and prints its predicted step time split by category, its memory per rank and the
// runner-up. --json writes the same as JSON lines (what scripts/plot_scaling.py plots).
//
// For example (one command line):
//   halo3d-plan --model cosmoflow --input-size 512 --width 1 --batch 64
//       --ranks 16,32,64,128,256,512,1024,2048 --machine machines/v100-edr.json
//       --memory-limit 16G --json scaling.jsonl
//
// --calibrate FILE times the layers of the given grids (--grid, or every grid of each rank count)
// on this process, as halo3d-sweep --calibrate does, into a copy of --machine written to FILE;
// --calibrate-layout whole|legacy times them otherwise, for comparisons (nn::CalibrationLayout).
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "halo3d/apps/common/AppSupport.hpp"
#include "halo3d/apps/common/TrainingFlags.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/MemoryInfo.hpp"
#include "halo3d/nn/models/CosmoFlow.hpp"
#include "halo3d/nn/models/UNet3d.hpp"
#include "halo3d/nn/plan/Calibration.hpp"
#include "halo3d/nn/plan/GridChoice.hpp"

namespace {

using namespace halo3d;

struct PlanOptions {
  std::string model = "cosmoflow";
  index_t input_size = 128, channels = 0, batch = 1;
  double width = 1.0;
  bool batchnorm = false;
  index_t base = 32, classes = 3;
  int depth = 3;
  std::vector<int> ranks{1};
  std::string grid = "auto";
  std::string machine;
  int threads = 1, ranks_per_node = 0;
  std::size_t memory_limit = 0;
  std::string optimizer = "adam";
  int element_bytes = 4;
  int wire_bytes = 4;
  std::string batch_read;  // --batch-read: the machine file's batch-read timing to price with
  std::string loss;        // --loss: mse, ce, dice or none; empty: the model's (lossOf)
  std::string json;
  std::string calibrate, calibrate_layout = "run";
  int repetitions = 3;
  bool least = false;
  bool missing = false;  // --missing: --calibrate times only what --machine lacks
  std::string paired;
};

// The loss the step model prices (nn::RunShape::loss): --loss, else what the model's application
// trains with by default; "none" leaves it out.
std::string lossOf(const PlanOptions& o) {
  if (o.loss == "none") return "";
  if (!o.loss.empty()) return o.loss;
  return o.model == "unet3d" ? "ce" : "mse";
}

std::unique_ptr<nn::Model> makeModel(const PlanOptions& o) {
  if (o.model == "cosmoflow") {
    nn::CosmoFlowConfig c;
    c.input_size = o.input_size;
    c.input_channels = o.channels > 0 ? o.channels : 4;
    c.width = o.width;
    c.batchnorm = o.batchnorm;
    c.validate();
    return nn::makeCosmoFlow(c);
  }
  nn::UNetConfig c;
  c.input_size = o.input_size;
  c.in_channels = o.channels > 0 ? o.channels : 1;
  c.base = o.base;
  c.depth = o.depth;
  c.classes = o.classes;
  c.validate();
  return nn::makeUNet3d(c);
}

nlohmann::json predictionJson(const nn::GridCandidate& c, index_t batch) {
  const nn::StepPrediction& p = c.prediction;
  nlohmann::json j{{"grid", c.grid.str()},
                   {"step_s", p.step_s},
                   {"step_band_s", p.step_band_s},
                   {"samples_per_s", double(batch) / p.step_s},
                   {"compute_s", p.compute_s},
                   {"halo_s", p.halo_s},
                   {"redistribute_s", p.redistribute_s},
                   {"allreduce_s", p.allreduce_s},
                   {"io_s", p.io_s},
                   {"timeshare_s", p.timeshare_s},
                   {"input_s", p.input_s},
                   {"peak_bytes", p.peak_bytes}};
  for (const nn::MemoryTerm& t : p.memory)
    j["memory"][t.what] = t.bytes;
  return j;
}

// --calibrate: every layer re-timed on the blocks of the grids asked for, into o.calibrate.
int calibrateOnly(const PlanOptions& o, nn::Model& model) {
  // The timings are keyed by --threads but run on Kokkos' threads: they must be the same.
  const int running = Kokkos::DefaultExecutionSpace().concurrency();
  require<InputError>(o.threads == running, "--calibrate times with ", running, " thread",
                      running == 1 ? "" : "s", " (Kokkos' concurrency) but --threads is ",
                      o.threads, ": set OMP_NUM_THREADS=", o.threads, " or --threads ", running);
  nn::Machine machine = nn::Machine::load(o.machine);
  std::vector<nn::ModelPlan> plans;
  for (int p : o.ranks) {
    if (o.grid != "auto") {
      plans.push_back(model.plan(GridShape::parse(o.grid), o.batch));
      continue;
    }
    for (const GridShape& g : allGrids(p))
      try {
        plans.push_back(model.plan(g, o.batch));
      } catch (const Error&) {  // a grid the model cannot run on
      }
  }
  nn::CalibrationOptions co;
  co.threads = o.threads;
  co.repetitions = o.repetitions;
  co.optimizer = nn::parseOptimizerKind(o.optimizer);
  co.loss = lossOf(o);
  co.retime = !o.missing;
  co.scheduler_slice = false;
  co.keep_least = o.least;
  nn::Machine paired = machine;
  paired.layers.clear();
  if (!o.paired.empty()) co.paired_whole = &paired;
  co.layout = o.calibrate_layout == "whole"    ? nn::CalibrationLayout::WholeBlock
              : o.calibrate_layout == "legacy" ? nn::CalibrationLayout::Legacy
                                               : nn::CalibrationLayout::Run;
  co.progress = [](const std::string& what) { std::printf("  timed %s\n", what.c_str()); };
  const int timed = nn::calibrate(model, plans, machine, co);
  machine.save(o.calibrate);
  if (!o.paired.empty()) paired.save(o.paired);
  std::printf("halo3d-plan: %d timings (%s layout) of %zu plans written to %s\n", timed,
              o.calibrate_layout.c_str(), plans.size(), o.calibrate.c_str());
  return 0;
}

int run(const PlanOptions& o) {
  if (!o.calibrate.empty()) {
    auto model = makeModel(o);
    return calibrateOnly(o, *model);
  }
  const nn::Machine machine = nn::Machine::load(o.machine);
  const std::size_t limit = o.memory_limit;
  auto model = makeModel(o);
  nn::RunShape run;
  run.threads_per_rank = o.threads;
  run.ranks_per_node = o.ranks_per_node;
  run.element_bytes = std::size_t(o.element_bytes);
  run.gradient_wire_bytes = std::size_t(o.wire_bytes);
  model->parameters().finalize();
  run.trainable_parameters = index_t(model->parameters().trainableSize());
  run.all_parameters = index_t(model->parameters().values().size());
  run.optimizer_state_per_parameter = o.optimizer == "adam" ? 2 : 1;
  run.labels_per_sample_cell = o.model == "unet3d" ? 1 : 0;
  run.batch_read = o.batch_read;
  run.loss = lossOf(o);
  std::ofstream json;
  if (!o.json.empty()) {
    json.open(o.json);
    require<InputError>(bool(json), "--json '", o.json, "' cannot be written");
  }
  std::printf(
      "halo3d-plan: %s %lld^3, batch %lld, %lld parameters, %d thread%s per rank, machine '%s'\n",
      o.model.c_str(), (long long)o.input_size, (long long)o.batch,
      (long long)run.trainable_parameters, o.threads, o.threads == 1 ? "" : "s",
      machine.name.c_str());
  std::printf("%7s  %-12s %10s %10s %9s %9s %9s %9s  %10s  %s\n", "ranks", "grid", "step s",
              "samples/s", "compute", "halo", "redist", "allred", "memory", "runner-up");
  for (int p : o.ranks) {
    std::vector<GridShape> only;
    if (o.grid != "auto") only.push_back(GridShape::parse(o.grid));
    const auto candidates = nn::candidateGrids(*model, p, o.batch, machine, run, limit, only);
    if (!candidates.front().valid()) {
      // No grid fits at this rank count: say the smallest requirement and go on with the next.
      std::size_t smallest = 0;
      for (const nn::GridCandidate& c : candidates)
        if (c.planned && (smallest == 0 || c.prediction.peak_bytes < smallest))
          smallest = c.prediction.peak_bytes;
      std::printf("%7d  no valid grid: %s\n", p,
                  smallest ? concat("the smallest needs ", formatBytes(double(smallest)),
                                    " per rank, over the limit")
                                 .c_str()
                           : candidates.front().why_not.c_str());
      if (json.is_open())
        json << nlohmann::json{{"ranks", p}, {"fits", false}, {"smallest_peak_bytes", smallest}}
                    .dump()
             << '\n';
      continue;
    }
    const nn::GridCandidate& best = nn::bestGrid(candidates, limit);
    const nn::GridCandidate* second =
        candidates.size() > 1 && candidates[1].valid() ? &candidates[1] : nullptr;
    const nn::StepPrediction& s = best.prediction;
    std::printf(
        "%7d  %-12s %10.4g %10.4g %9.3g %9.3g %9.3g %9.3g  %10s  %s\n", p, best.grid.str().c_str(),
        s.step_s, double(o.batch) / s.step_s, s.compute_s, s.halo_s, s.redistribute_s,
        s.allreduce_s, formatBytes(double(s.peak_bytes)).c_str(),
        second ? concat(second->grid.str(), " ", second->prediction.step_s, " s").c_str() : "-");
    // Where the batch read came from: the named timing, or the read rate (the model's note says).
    if (!o.batch_read.empty())
      for (const std::string& n : s.notes)
        if (n.find("read_bytes_per_s") != std::string::npos)
          std::printf("         %s\n", n.c_str());
    if (json.is_open()) {
      nlohmann::json j = predictionJson(best, o.batch);
      j["ranks"] = p;
      j["model"] = o.model;
      j["input_size"] = o.input_size;
      j["batch"] = o.batch;
      j["machine"] = machine.name;
      if (second) j["runner_up"] = predictionJson(*second, o.batch);
      json << j.dump() << '\n';
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  halo3d::apps::Session session(argc, argv);
  CLI::App app{"halo3d-plan: predicted step time and memory of a model on any number of ranks"};
  PlanOptions o;
  app.add_option("--model", o.model, "cosmoflow or unet3d")
      ->check(CLI::IsMember({"cosmoflow", "unet3d"}))
      ->capture_default_str();
  app.add_option("--input-size", o.input_size, "input edge D = H = W")->capture_default_str();
  app.add_option("--channels", o.channels, "input channels (default: 4 CosmoFlow, 1 U-Net)");
  app.add_option("--width", o.width, "CosmoFlow channel multiplier")->capture_default_str();
  app.add_flag("--batchnorm", o.batchnorm, "CosmoFlow with BatchNorm");
  app.add_option("--base", o.base, "U-Net base channels")->capture_default_str();
  app.add_option("--depth", o.depth, "U-Net levels")->capture_default_str();
  app.add_option("--classes", o.classes, "U-Net classes")->capture_default_str();
  app.add_option("--batch", o.batch, "global mini-batch")->capture_default_str();
  app.add_option("--ranks", o.ranks, "rank counts, comma-separated")->delimiter(',');
  app.add_option("--grid", o.grid, "NxDxHxW, or auto: the fastest that fits")
      ->capture_default_str();
  app.add_option("--machine", o.machine, "machine file (machines/*.json)")->required();
  app.add_option("--threads", o.threads, "threads per rank")->capture_default_str();
  app.add_option("--ranks-per-node", o.ranks_per_node, "0: one per device, or per core")
      ->capture_default_str();
  app.add_option("--memory-limit", o.memory_limit, "bytes per rank (suffixes K, M, G; 0: none)")
      ->transform(halo3d::apps::byteSize())
      ->capture_default_str();
  app.add_option("--optimizer", o.optimizer, "adam or sgd")
      ->check(CLI::IsMember({"adam", "sgd"}))
      ->capture_default_str();
  app.add_option("--element-bytes", o.element_bytes, "bytes per activation (4 fp32, 2 bf16)")
      ->check(CLI::IsMember({2, 4}))
      ->capture_default_str();
  app.add_option("--wire-bytes", o.wire_bytes,
                 "bytes per gradient element on the allreduce's wire (4 fp32, 2 bf16: in place, no "
                 "receive buffer)")
      ->check(CLI::IsMember({2, 4}))
      ->capture_default_str();
  app.add_option("--json", o.json, "also write one JSON object per rank count to this file");
  app.add_option("--batch-read", o.batch_read,
                 "price the batch read with the machine file's timing of this name, as "
                 "halo3d-sweep --calibrate records it on its data (e.g. \"batch read cosmoflow "
                 "int16\"; default: the bytes over io.read_bytes_per_s)");
  app.add_option("--loss", o.loss,
                 "the loss whose timing prices the step's loss (and --calibrate times): mse, "
                 "ce, dice or none (default: the application's, mse for cosmoflow, ce for unet3d)")
      ->check(CLI::IsMember({"mse", "ce", "dice", "none"}));
  app.add_option("--calibrate", o.calibrate,
                 "time the layers of the grids (--grid, or all of --ranks) on this process and "
                 "write --machine with those timings to this file; nothing is predicted");
  app.add_option("--calibrate-layout", o.calibrate_layout,
                 "run: as the ranks run the layers (default); whole: the rank's blocks in one "
                 "piece; legacy: the owned block as a one-rank volume (comparisons)")
      ->check(CLI::IsMember({"run", "whole", "legacy"}))
      ->capture_default_str();
  app.add_flag("--missing", o.missing,
               "--calibrate: time only what --machine lacks (e.g. the loss, for a file "
               "calibrated before it was priced), keeping its timings");
  app.add_flag("--least", o.least,
               "--calibrate: keep the least of the runs, not the median (a busy machine)");
  app.add_option("--paired", o.paired,
                 "--calibrate: also time each split rank's block whole, alternating with its "
                 "pieces, and write those timings to this file");
  app.add_option("--repetitions", o.repetitions, "--calibrate: timed runs per layer (median)")
      ->check(halo3d::apps::atLeast(1))
      ->capture_default_str();
  return halo3d::apps::parseAndRun(app, session, argc, argv, "halo3d-plan", [&] { return run(o); });
}
