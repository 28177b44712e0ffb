#include "halo3d/apps/sweep/Sweep.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "halo3d/apps/common/AppSupport.hpp"
#include "halo3d/apps/common/GridPlanning.hpp"
#include "halo3d/apps/common/TrainingRun.hpp"
#include "halo3d/apps/sweep/BatchReadCalibration.hpp"
#include "halo3d/apps/sweep/SweepReport.hpp"
#include "halo3d/comm/Communicator.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/Activity.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/Median.hpp"
#include "halo3d/core/MemoryInfo.hpp"
#include "halo3d/core/MemoryTracker.hpp"
#include "halo3d/io/Collective.hpp"
#include "halo3d/nn/LayerTimers.hpp"
#include "halo3d/nn/plan/Calibration.hpp"

namespace halo3d::apps {

namespace {

using nlohmann::json;

constexpr nn::Phase kPhases[] = {nn::Phase::Compute, nn::Phase::HaloWait, nn::Phase::Redistribute,
                                 nn::Phase::Allreduce, nn::Phase::Io};
constexpr const char* kPhaseKeys[] = {"compute", "halo_wait", "redistribute", "allreduce", "io"};
constexpr int kPhaseCount = 5;

// How long the ranks wait for each other to agree that a grid failed before aborting the job.
constexpr double kAgreeSeconds = 60;

json orNull(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

std::string secondsText(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g s", s);
  return buf;
}

void say(bool root, const std::string& line) {
  if (!root) return;
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// Each measured layer's predicted times from the grid's assessment, under the layer's "predicted"
// key (replaced when the grid is priced again: --calibrate-each-round).
void attachLayerPredictions(json& layers, const GridAssessment& a) {
  for (json& l : layers) {
    l.erase("predicted");
    if (!a.prediction) continue;
    for (const nn::LayerPrediction& lp : a.prediction->layers)
      if (lp.name == l["name"].get<std::string>())
        l["predicted"] = {{"forward_s", lp.forward_s},
                          {"backward_s", lp.backward_s},
                          {"halo_s", lp.halo_s},
                          {"halo_bytes", lp.halo_bytes},
                          {"halo_messages", lp.halo_messages},
                          {"redistribute_s", lp.redistribute_s},
                          {"allreduce_s", lp.allreduce_s},
                          {"timeshare_s", lp.timeshare_s}};
  }
}

// What the planner says about a grid, as record keys (every status).
json predictedKeys(const GridAssessment& a) {
  json r;
  r["predicted_step_s"] = orNull(a.predictedStep());
  r["predicted_peak_bytes"] = a.planned ? json(a.predicted_bytes) : json(nullptr);
  if (!a.planned) return r;
  json terms = json::array();
  for (const nn::MemoryTerm& t : a.memory)
    terms.push_back({{"what", t.what}, {"bytes", t.bytes}});
  r["predicted_memory"] = terms;
  if (!a.prediction_error.empty()) r["prediction_error"] = a.prediction_error;
  if (a.prediction) {
    const nn::StepPrediction& p = *a.prediction;
    r["predicted"] = {
        {"compute", p.compute_s},     {"halo", p.halo_s},     {"redistribute", p.redistribute_s},
        {"allreduce", p.allreduce_s}, {"io", p.io_s},         {"timeshare", p.timeshare_s},
        {"input", p.input_s},         {"band", p.step_band_s}};
    r["notes"] = p.notes;
  }
  return r;
}

// Runs one grid and returns its measured keys, identical on every rank (collective).
json measureGrid(const GridShape& shape, const TrainingOptions& base, TrainingTask& task,
                 const SweepOptions& s, const GridAssessment& assessment, bool root) {
  TrainingOptions o = base;
  o.grid = shape.str();
  o.steps = s.warmup + s.steps;
  o.print_model = false;
  MemoryTracker::resetPeak();  // the grid's own peak
  const ProcessGrid grid(MPI_COMM_WORLD, shape);
  TrainingRun run(grid, o, task);

  std::vector<double> steps;
  std::map<std::string, std::array<double, kPhaseCount>> layer_s;
  std::map<std::string, nn::HaloTraffic> layer_traffic;
  std::array<double, kPhaseCount + 2> totals{};  // phases, then halo bytes and messages
  std::size_t peak = 0;
  for (int i = 0; i < s.warmup + s.steps; ++i) {
    const StepResult r = run.step();
    peak = r.peak_bytes;
    const bool warm = i < s.warmup;
    say(root, concat("  step ", i + 1, " of ", s.warmup + s.steps, warm ? " (warm-up)" : "", ": ",
                     secondsText(r.seconds)));
    if (warm) continue;
    steps.push_back(r.seconds);
    const nn::LayerTimers& t = run.timers();
    for (const auto& [name, phases] : t.all())
      for (int p = 0; p < kPhaseCount; ++p)
        layer_s[name][std::size_t(p)] += phases[std::size_t(int(kPhases[p]))];
    for (const auto& [name, traffic] : t.traffic()) {
      layer_traffic[name].bytes += traffic.bytes;
      layer_traffic[name].messages += traffic.messages;
    }
    for (int p = 0; p < kPhaseCount; ++p)
      totals[std::size_t(p)] += t.total(kPhases[p]);
    const nn::HaloTraffic all = t.totalTraffic();
    totals[kPhaseCount] += all.bytes;
    totals[kPhaseCount + 1] += all.messages;
  }

  // Per layer and phase, the largest rank's: every rank lists the same layers (the model's, then
  // the gradient allreduce's wait and the batch read).
  std::vector<std::string> names;
  for (const nn::Layer* l : run.models().forBatch(o.batch).layers())
    names.push_back(l->name());
  names.push_back("allreduce");
  names.push_back("input");
  const std::size_t per = kPhaseCount + 2;
  std::vector<double> buf(names.size() * per + totals.size(), 0.0);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (auto it = layer_s.find(names[i]); it != layer_s.end())
      std::copy(it->second.begin(), it->second.end(), buf.begin() + long(i * per));
    if (auto it = layer_traffic.find(names[i]); it != layer_traffic.end()) {
      buf[i * per + kPhaseCount] = it->second.bytes;
      buf[i * per + kPhaseCount + 1] = it->second.messages;
    }
  }
  std::copy(totals.begin(), totals.end(), buf.end() - long(totals.size()));
  MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(buf.size()), MPI_DOUBLE, MPI_MAX, grid.comm());
  const double n = double(steps.size());
  for (double& v : buf)
    v /= n;

  json r;
  r["step_s"] = {{"all", steps}};
  const double* tot = &buf[names.size() * per];
  json times;
  for (int p = 0; p < kPhaseCount; ++p)
    times[kPhaseKeys[p]] = tot[p];
  r["times"] = times;
  r["halo_bytes"] = tot[kPhaseCount];
  r["halo_messages"] = tot[kPhaseCount + 1];
  r["peak_bytes"] = peak;
  json layers = json::array();
  for (std::size_t i = 0; i < names.size(); ++i) {
    json l;
    l["name"] = names[i];
    for (int p = 0; p < kPhaseCount; ++p)
      l[std::string(kPhaseKeys[p]) + "_s"] = buf[i * per + std::size_t(p)];
    l["halo_bytes"] = buf[i * per + kPhaseCount];
    l["halo_messages"] = buf[i * per + kPhaseCount + 1];
    layers.push_back(l);
  }
  r["layers"] = layers;
  attachLayerPredictions(r["layers"], assessment);
  return r;
}

// The measured keys of a grid from its rounds (measureGrid's, in order): the measured step is the
// mean over the rounds of each round's median step; the median, least and most of every round's
// steps together are kept beside it; the phases and layers are averaged over the rounds (each
// round has as many steps); the largest peak. Rounds run the grids in turn, so a stretch of
// minutes in which the machine runs slower falls on every grid's steps instead of on the grids
// that ran in it. The median within a round drops a step that a stall hit; the mean across rounds
// weighs the machine's states by the time they lasted. A median across rounds jumps between them
// instead: where a core switches between speeds 25% apart for minutes at a time (this VM), the
// median of the steps lands on the speed that held most steps, and the median of the layer
// passes (poolTimings) on the one that held most passes, not always the same (docs/scaling.md,
// "Five rounds, and the mean of the rounds").
json mergeRounds(const std::vector<json>& rounds) {
  json r = rounds.front();
  std::vector<double> steps, round_medians;
  for (const json& m : rounds) {
    const std::vector<double> all = m["step_s"]["all"].get<std::vector<double>>();
    steps.insert(steps.end(), all.begin(), all.end());
    round_medians.push_back(median(all));
  }
  const double n = double(rounds.size());
  const auto mean = [&](const auto& get) {
    double sum = 0;
    for (const json& m : rounds)
      sum += get(m).template get<double>();
    return sum / n;
  };
  const double med = median(steps);
  double measured = 0;
  for (double m : round_medians)
    measured += m / n;
  r["rounds"] = rounds.size();
  r["measured_step_s"] = measured;
  r["step_s"] = {{"median", med},
                 {"min", *std::min_element(steps.begin(), steps.end())},
                 {"max", *std::max_element(steps.begin(), steps.end())},
                 {"all", steps},
                 {"round_medians", round_medians}};
  double phases = 0;
  for (const char* key : kPhaseKeys) {
    const double t = mean([&](const json& m) { return m["times"][key]; });
    r["times"][key] = t;
    phases += t;
  }
  r["times"]["other"] = std::max(0.0, measured - phases);
  for (const char* key : {"halo_bytes", "halo_messages"})
    r[key] = mean([&](const json& m) { return m[key]; });
  std::size_t peak = 0;
  for (const json& m : rounds)
    peak = std::max(peak, m["peak_bytes"].get<std::size_t>());
  r["peak_bytes"] = peak;
  for (std::size_t i = 0; i < r["layers"].size(); ++i)
    for (const char* key : {"compute_s", "halo_wait_s", "redistribute_s", "allreduce_s", "io_s",
                            "halo_bytes", "halo_messages"})
      r["layers"][i][key] = mean([&](const json& m) { return m["layers"][i][key]; });
  return r;
}

// After a grid, every rank learns whether any rank failed and, if so, the lowest failing rank's
// error (empty if none). A rank that does not come within kAgreeSeconds is stuck where a failed
// rank left it (an error on some ranks only): the job is aborted.
std::string agreeOnGrid(std::exception_ptr failure, const GridShape& shape, MPI_Comm comm) {
  std::string mine;
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      mine = e.what();
    } catch (...) {
      mine = "unknown exception";
    }
    if (mine.empty()) mine = "(no message)";
  }
  int local = failure ? 1 : 0, any = 0;
  MPI_Request request;
  MPI_Iallreduce(&local, &any, 1, MPI_INT, MPI_MAX, comm, &request);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kAgreeSeconds);
  int done = 0;
  while (!done) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) break;
    if (std::chrono::steady_clock::now() > deadline) {
      int rank = 0;
      MPI_Comm_rank(comm, &rank);
      std::fprintf(stderr,
                   "halo3d-sweep: error on rank %d at grid %s: %s (other ranks did not stop within "
                   "%.0f s; aborting the job)\n",
                   rank, shape.str().c_str(), failure ? mine.c_str() : "(this rank finished)",
                   kAgreeSeconds);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!any) return {};
  for (const std::string& m : allgatherStrings(mine, comm))
    if (!m.empty()) return m;
  return "(no message)";
}

// The plans of the valid candidates, from `planner`'s model.
std::vector<nn::ModelPlan> validPlans(const GridPlanner& planner,
                                      const std::vector<GridAssessment>& candidates) {
  std::vector<nn::ModelPlan> plans;
  for (const GridAssessment& a : candidates)
    if (a.valid) plans.push_back(planner.plan(a.grid));
  return plans;
}

// Rank 0 times the layers of `plans` into `machine` (those it lacks), each representative rank's
// in a step's order: the median of `repetitions` passes after a warm-up; with `slice`, also the
// scheduler's slice where the file has none.
int timeLayers(const TrainingTask& task, const TrainingOptions& o, GridPlanner& planner,
               const std::vector<nn::ModelPlan>& plans, nn::Machine& machine, int repetitions,
               bool slice) {
  nn::CalibrationOptions co;
  co.threads = Kokkos::DefaultExecutionSpace().concurrency();
  co.loss = task.lossName();
  co.optimizer = o.optimizer;
  co.repetitions = repetitions;
  co.scheduler_slice = slice;
  co.progress = [](const std::string& what) {
    setActivity(concat("calibrating ", what));
    std::printf("  timed %s\n", what.c_str());
    std::fflush(stdout);
  };
  return nn::calibrate(planner.model(), plans, machine, co);
}

// --calibrate-each-round, before rounds 2, 3, ...: rank 0 times the layers of every valid grid
// again, one pass each after a warm-up, into a copy of `machine` without layer timings; rank 0's
// copy is returned (the others' are empty). The rounds' timings are pooled by poolTimings.
nn::Machine retimeLayers(const TrainingTask& task, const TrainingOptions& o, int ranks,
                         int ranks_per_node, const std::vector<GridAssessment>& candidates,
                         const nn::Machine& machine) {
  GridPlanner planner(task, o, ranks, ranks_per_node, nullptr);
  const std::vector<nn::ModelPlan> plans = validPlans(planner, candidates);
  nn::Machine again = machine;
  again.layers.clear();
  runOnRootWhileOthersWait(MPI_COMM_WORLD, "timing the layers again",
                           [&] { timeLayers(task, o, planner, plans, again, 1, false); });
  return again;
}

// Each layer timing of `machine` that the rounds timed again becomes the mean, forward and
// backward apart, of its first timing and theirs: the timings then sample the machine across the
// minutes in which the grids ran, as the steps they price do, and average its states as the
// measured step does (mergeRounds). Returns how many were pooled.
int poolTimings(nn::Machine& machine, const std::vector<nn::Machine>& rounds) {
  int pooled = 0;
  for (nn::LayerTiming& t : machine.layers) {
    double fwd = t.forward_s, bwd = t.backward_s;
    int n = 1;
    for (const nn::Machine& r : rounds)
      if (const nn::LayerTiming* again = r.find(t)) {
        fwd += again->forward_s;
        bwd += again->backward_s;
        ++n;
      }
    if (n == 1) continue;
    t.forward_s = fwd / n;
    t.backward_s = bwd / n;
    ++pooled;
  }
  return pooled;
}

// --calibrate: ranks 0 and 1 fit the shared-memory link (alpha, beta) and the reduction rate
// (gamma), rank 0 times the layers on the blocks of every valid grid, all ranks time the batch
// read of every valid grid on `data`, and rank 0 writes all of it into the machine file at `path`;
// every rank then reads it again. The model it times (and the parameters calibration allocates)
// is freed before the grids run, so no grid's peak counts it.
void calibrate(const TrainingTask& task, const TrainingOptions& o, const SweepOptions& s,
               const SampleCatalog& data, int ranks, int ranks_per_node,
               const std::vector<GridAssessment>& candidates, const std::string& path,
               nn::Machine& machine, bool root) {
  GridPlanner planner(task, o, ranks, ranks_per_node, nullptr);
  const std::vector<nn::ModelPlan> plans = validPlans(planner, candidates);
  // The links: a ping-pong between ranks 0 and 1 alone (the others already sleep in the wait
  // below, so that nothing competes for the cores), saved with the layers by rank 0.
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (ranks >= 2) {
    MPI_Comm pair = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (pair != MPI_COMM_NULL) {
      const std::string fit = nn::calibrateLinks(pair, machine);
      MPI_Comm_free(&pair);
      if (root) std::printf("calibration: links: %s\n", fit.c_str());
    }
  }
  say(root, concat("calibrating on rank 0: the layers on the blocks of ", plans.size(),
                   " grids (the other ranks wait)"));
  runOnRootWhileOthersWait(MPI_COMM_WORLD, "calibrating the layers", [&] {
    const int added =
        timeLayers(task, o, planner, plans, machine, s.calibrate_each_round ? 1 : 3, true);
    machine.save(path);
    std::printf("calibration: %d timings recorded in %s\n", added, path.c_str());
    std::fflush(stdout);
  });
  say(root, concat("calibrating the batch read of ", plans.size(), " grids (all ranks)"));
  BatchReadCalibration bc;
  bc.name = batchReadName(data, task.readOptions(), o.precision);
  bc.ranks_per_node = ranks_per_node;
  bc.warmup = s.warmup;  // the steps each grid will run
  bc.calls = std::max(1, s.steps);
  bc.progress = [root](const std::string& what) { say(root, concat("  timed ", what)); };
  const int reads = calibrateBatchRead(task, o, data, plans, machine, bc);
  runCollectively(MPI_COMM_WORLD, [&] {
    if (!root || reads == 0) return;
    machine.save(path);  // rank 0's holds the layers too
    std::printf("calibration: %d batch read timings recorded in %s\n", reads, path.c_str());
    std::fflush(stdout);
  });
  runCollectively(MPI_COMM_WORLD, [&] { machine = nn::Machine::load(path); });
}

}  // namespace

int runSweep(const SweepOptions& s) {
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const bool root = rank == 0;
  const TrainingOptions& o = s.model.training();
  // The grids first: a malformed --grids is refused before anything is read.
  const std::vector<GridShape> grids =
      s.grids.empty() ? allGrids(size) : parseGridList(s.grids, "--grids");

  const std::unique_ptr<TrainingTask> task = s.model.makeTask();
  const SampleCatalog catalog = [&] {
    const ProcessGrid provisional(MPI_COMM_WORLD, GridShape(1, size, 1, 1));
    ScopedActivity activity("opening the data set");
    return task->openData(o.data, "--data", provisional);
  }();
  task->configure(catalog);
  require<InputError>(o.batch <= catalog.size(), "--batch ", o.batch,
                      " is larger than the data set: --data '", o.data, "' holds ", catalog.size(),
                      " samples");
  runCollectively(MPI_COMM_WORLD, [&] {
    if (!root) return;
    std::error_code ec;
    std::filesystem::create_directories(s.out, ec);
    require<InputError>(std::filesystem::is_directory(s.out), "--out '", s.out,
                        "' cannot be created", ec ? ": " + ec.message() : std::string());
  });

  std::string machine_note;
  std::optional<nn::Machine> machine = loadMachine(o, true, MPI_COMM_WORLD, &machine_note);
  require<InputError>(!s.calibrate || machine.has_value(),
                      "--calibrate records its timings in a machine file, and there is none: pass "
                      "--machine FILE (",
                      machine_note, ")");
  const int ranks_per_node = ranksOnNode(MPI_COMM_WORLD);
  // Before --calibrate, the machine file may not know this model's layers: assess by memory alone.
  const GridPlanner memory_planner(*task, o, size, ranks_per_node, nullptr);
  std::optional<GridPlanner> priced;
  const auto assessAll = [&] {
    const GridPlanner& planner = priced ? *priced : memory_planner;
    std::vector<GridAssessment> all;
    for (const GridShape& g : grids)
      all.push_back(planner.assess(g));
    return all;
  };
  const auto price = [&] {
    priced.emplace(*task, o, size, ranks_per_node, &*machine);
    priced->readsFrom(catalog);
  };
  if (machine && !s.calibrate) price();
  std::vector<GridAssessment> candidates = assessAll();
  std::size_t valid = 0;
  for (const GridAssessment& a : candidates)
    valid += a.valid ? 1 : 0;
  if (valid == 0) {
    std::string why;
    for (const GridAssessment& a : candidates)
      why += concat("\n  ", a.grid.str(), ": ", a.why_not);
    throw InputError(concat("no valid grid to sweep for ", size, " ranks (--model ",
                            s.model.model(), ", --batch ", o.batch,
                            o.memory_limit
                                ? concat(", --memory-limit ", formatBytes(double(o.memory_limit)))
                                : std::string(),
                            "):", why));
  }
  if (s.calibrate) {
    calibrate(*task, o, s, catalog, size, ranks_per_node, candidates, machine->path, *machine,
              root);
    price();
    candidates = assessAll();
  }

  const std::string title =
      concat("halo3d-sweep: ", s.model.model(), ", ", size, " ranks, batch ", o.batch, ", ",
             s.warmup, " warm-up and ", s.steps, " measured steps per grid",
             s.rounds > 1 ? concat(" in each of ", s.rounds, " rounds") : std::string());
  say(root,
      concat(title, "; ", valid, " valid grids of ", candidates.size(), "; ",
             machine ? concat("predictions from machine file ", machine->path) : machine_note));
  const Communicator agree = Communicator::duplicate(MPI_COMM_WORLD);
  // One record per candidate, filled as the grids run; rounds[i], grid i's measurements so far.
  std::vector<json> slots(candidates.size());
  std::vector<std::vector<json>> rounds(candidates.size());
  std::vector<std::string> failed;
  const auto records = [&] {
    std::vector<json> r;
    for (const json& slot : slots)
      if (!slot.is_null()) r.push_back(slot);
    return r;
  };
  // The time left, from the mean time of the grid runs so far (every round runs the same grids).
  const auto start = std::chrono::steady_clock::now();
  std::size_t runs_done = 0;
  const auto timeLeft = [&](int round, std::size_t i) {
    std::size_t left = 0;
    for (std::size_t j = 0; j < candidates.size(); ++j)
      if (candidates[j].valid && (slots[j].is_null() || slots[j]["status"] != "failed"))
        left += std::size_t(s.rounds - round) + (j > i ? 1 : 0);
    if (left == 0) return std::string();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return concat("; about ", formatDuration(elapsed / double(runs_done) * double(left)), " left");
  };
  std::vector<nn::Machine> retimed;  // --calibrate-each-round: rank 0's timings of rounds 2, 3, ...
  for (int round = 1; round <= s.rounds; ++round) {
    const std::string in_round =
        s.rounds > 1 ? concat("round ", round, " of ", s.rounds, ": ") : std::string();
    if (s.calibrate && s.calibrate_each_round && round > 1) {
      say(root, concat(in_round, "timing the layers again on rank 0 (--calibrate-each-round)"));
      retimed.push_back(retimeLayers(*task, o, size, ranks_per_node, candidates, *machine));
    }
    std::size_t done = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const GridAssessment& a = candidates[i];
      json r;
      r["grid"] = a.grid.str();
      r["ranks"] = a.grid.size();
      r["model"] = s.model.model();
      r["batch"] = o.batch;
      r["steps"] = s.steps;
      r["warmup"] = s.warmup;
      r.update(predictedKeys(a));
      r["machine"] = machine ? json(machine->path) : json(nullptr);
      if (!a.valid) {
        if (round > 1) continue;
        r["status"] = "invalid";
        r["note"] = a.why_not;
        say(root, concat("grid ", a.grid.str(), ": not valid: ", a.why_not));
        slots[i] = r;
        continue;
      }
      ++done;
      if (!slots[i].is_null() && slots[i]["status"] == "failed") continue;  // not run again
      const double predicted = a.predictedStep();
      if (!a.prediction_error.empty() && round == 1)
        say(root, concat("grid ", a.grid.str(), ": no predicted step time: ", a.prediction_error));
      say(root, concat(in_round, "grid ", done, " of ", valid, ": ", a.grid.str(), " (",
                       std::isfinite(predicted) ? concat("predicted ", secondsText(predicted), ", ")
                                                : std::string(),
                       formatBytes(double(a.predicted_bytes)), " per rank predicted)"));
      std::exception_ptr failure;
      json measured;
      try {
        ScopedActivity activity(concat("sweeping grid ", a.grid.str()));
        measured = measureGrid(a.grid, o, *task, s, a, root);
      } catch (...) {
        failure = std::current_exception();
      }
      const std::string error = agreeOnGrid(failure, a.grid, agree);
      ++runs_done;
      std::string summary;
      if (!error.empty()) {
        r["status"] = "failed";
        r["note"] = error;
        failed.push_back(concat(a.grid.str(), ": ", error));
        summary = concat("grid ", a.grid.str(), ": failed: ", error);
      } else {
        rounds[i].push_back(std::move(measured));
        r["status"] = "measured";
        r.update(mergeRounds(rounds[i]));
        const json& steps = r["step_s"];
        summary =
            concat("grid ", a.grid.str(), ": ", secondsText(r["measured_step_s"]), " per step (",
                   rounds[i].size() > 1 ? "the mean of its rounds' medians so far" : "the median",
                   "; min ", secondsText(steps["min"]), ", max ", secondsText(steps["max"]),
                   std::isfinite(predicted) ? concat("; predicted ", secondsText(predicted))
                                            : std::string(),
                   "), peak ", formatBytes(r["peak_bytes"].get<double>()), " per rank (predicted ",
                   formatBytes(double(a.predicted_bytes)), ")");
      }
      slots[i] = r;  // before timeLeft, which counts no run to come for a failed grid
      say(root, summary + timeLeft(round, i));
      runCollectively(MPI_COMM_WORLD, [&] {
        if (root) writeSweepReports(s.out, records(), title);
      });
    }
  }
  if (!retimed.empty()) {
    // The grids priced again with each layer's mean over the rounds' timings.
    runCollectively(MPI_COMM_WORLD, [&] {
      if (!root) return;
      const int pooled = poolTimings(*machine, retimed);
      machine->save(machine->path);
      std::printf("calibration: %d timings pooled over %d rounds into %s\n", pooled,
                  int(retimed.size()) + 1, machine->path.c_str());
      std::fflush(stdout);
    });
    runCollectively(MPI_COMM_WORLD, [&] { machine = nn::Machine::load(machine->path); });
    price();
    candidates = assessAll();
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].is_null() || slots[i]["status"] != "measured") continue;
      slots[i].update(predictedKeys(candidates[i]));
      attachLayerPredictions(slots[i]["layers"], candidates[i]);
    }
  }
  runCollectively(MPI_COMM_WORLD, [&] {
    if (root) writeSweepReports(s.out, records(), title);
  });
  if (root) {
    std::printf("\n%s\nwrote %s/sweep.jsonl, sweep.csv and sweep.md\n",
                sweepMarkdown(records(), title).c_str(), s.out.c_str());
    std::fflush(stdout);
  }
  if (!failed.empty()) {
    std::string list;
    for (const std::string& f : failed)
      list += "\n  " + f;
    throw Error(concat(failed.size(), " of ", valid,
                       " valid grids failed at run time (recorded in ", s.out,
                       "/sweep.jsonl):", list));
  }
  return 0;
}

}  // namespace halo3d::apps
