#include "halo3d/apps/common/GridPlanning.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <set>

#include "halo3d/apps/common/RunSupport.hpp"
#include "halo3d/comm/Communicator.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/Activity.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/MemoryInfo.hpp"
#include "halo3d/io/Collective.hpp"
#include "halo3d/io/ElementType.hpp"
#include "halo3d/io/SampleFormat.hpp"
#include "halo3d/nn/Real.hpp"
#include "halo3d/nn/plan/GridChoice.hpp"

namespace halo3d::apps {

namespace {

std::string bytesText(std::size_t bytes) {
  return formatBytes(double(bytes));
}

std::string termsText(const std::vector<nn::MemoryTerm>& terms) {
  std::string out;
  for (const nn::MemoryTerm& t : terms)
    out += concat(out.empty() ? "" : ", ", t.what, " ", bytesText(t.bytes));
  return out;
}

std::string secondsText(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g s", s);
  return buf;
}

// A grid that fits, or could if the limit were higher: the plan exists and the application takes
// it (invalid at most because of --memory-limit).
bool runnable(const GridAssessment& a) {
  return a.valid || a.over_limit;
}

// Fastest predicted first (grids with a prediction before those without), then the smallest memory,
// then the enumeration order.
bool better(const GridAssessment& a, const GridAssessment& b) {
  const double ta = a.predictedStep(), tb = b.predictedStep();
  if (std::isfinite(ta) != std::isfinite(tb)) return std::isfinite(ta);
  if (std::isfinite(ta) && ta != tb) return ta < tb;
  return a.predicted_bytes < b.predicted_bytes;
}

const GridAssessment* smallest(const std::vector<GridAssessment>& all) {
  const GridAssessment* best = nullptr;
  for (const GridAssessment& a : all)
    if (runnable(a) && (!best || a.predicted_bytes < best->predicted_bytes)) best = &a;
  return best;
}

}  // namespace

double GridAssessment::predictedStep() const {
  return prediction ? prediction->step_s : std::numeric_limits<double>::quiet_NaN();
}

GridPlanner::GridPlanner(const TrainingTask& task, const TrainingOptions& options, int ranks,
                         int ranks_per_node, const nn::Machine* machine)
    : _task(task),
      _o(options),
      _ranks(ranks),
      _ranks_per_node(ranks_per_node),
      _machine(machine),
      _model(task.makeModel(std::make_shared<nn::ParameterStore>())) {
  // The memory model reads only whether ranks compute on devices (which decides the halo buffers);
  // the rates below are placeholders whose times are never shown.
  _memory_only.name = "(memory only)";
  _memory_only.devices_per_node =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                 Kokkos::DefaultExecutionSpace::memory_space>::accessible
          ? 0
          : 1;
  _memory_only.io_read_bytes_per_s = 1e9;
  _memory_only.calibrated = false;
  _memory_only.roofline = nn::RooflineCompute{1e12, 1e11, {1, 1}, {1, 1}, 0};
}

GridPlanner::~GridPlanner() = default;

void GridPlanner::readsFrom(const SampleCatalog& data) {
  _batch_read = batchReadName(data, _task.readOptions(), _o.precision);
}

std::string batchReadName(const SampleCatalog& data, const ReadOptions& read,
                          nn::Precision precision) {
  const InputTransform& t = read.transform;
  std::string transform = t.log1p ? "log1p" : "";
  if (t.scaling != InputTransform::Scaling::None)
    transform += concat(transform.empty() ? "" : "+",
                        t.scaling == InputTransform::Scaling::Constant ? "constant" : "meanstd");
  return concat("batch read ", sampleKindName(data.kind()), " ",
                elementTypeName(data.file(0).input_type), transform.empty() ? "" : " ", transform,
                precision == nn::Precision::bf16 ? " into bf16" : "");
}

nn::ModelPlan GridPlanner::plan(const GridShape& grid) const {
  return _model->plan(grid, _o.batch);
}

nn::RunShape GridPlanner::runShape() const {
  nn::RunShape r;
  r.threads_per_rank = Kokkos::DefaultExecutionSpace().concurrency();
  r.ranks_per_node = _ranks_per_node;
  r.element_bytes = nn::activationElementBytes(_o.precision);
  r.gradient_wire_bytes = _o.allreduce_precision == nn::Precision::bf16 ? 2 : 4;
  // The store of an unbuilt model is not finalized (nothing allocated): count its entries.
  for (const nn::Parameter* p : _model->parameters().all()) {
    r.all_parameters += index_t(p->size());
    if (p->trainable()) r.trainable_parameters += index_t(p->size());
  }
  r.optimizer_state_per_parameter = _o.optimizer == nn::OptimizerKind::Adam ? 2 : 1;
  r.overlap = !_o.no_overlap;
  r.prefetch = !_o.no_prefetch;
  r.labels_per_sample_cell = _task.sampleKind() == SampleKind::UNet ? 1 : 0;
  r.batch_read = _batch_read;
  r.loss = _task.lossName();
  return r;
}

GridAssessment GridPlanner::assess(const GridShape& grid) const {
  GridAssessment a;
  a.grid = grid;
  // Validity and memory first, with the placeholder machine: they need no machine file, and a
  // machine that cannot price this model must not hide them.
  const nn::GridCandidate c =
      nn::candidateGrids(*_model, _ranks, _o.batch, _memory_only, runShape(), 0, {grid}).front();
  a.why_not = c.why_not;
  if (!c.planned) return a;
  const nn::ModelPlan p = plan(grid);
  try {
    _task.checkPlan(p);
  } catch (const Error& e) {
    a.why_not = e.what();
    return a;
  }
  a.planned = true;
  a.largest =
      p.largestTensors(nn::ModelPlan::largestRank(), nn::activationElementBytes(_o.precision), 3);
  a.predicted_bytes = c.prediction.peak_bytes;
  a.memory = c.prediction.memory;
  if (_machine) {
    try {
      a.prediction = nn::predictStep(p, *_machine, runShape());
      a.predicted_bytes = a.prediction->peak_bytes;  // the machine's (its devices decide buffers)
      a.memory = a.prediction->memory;
    } catch (const Error& e) {
      a.prediction_error = e.what();
    }
  }
  a.over_limit = _o.memory_limit > 0 && a.predicted_bytes > _o.memory_limit;
  if (a.over_limit)
    a.why_not = concat("needs ", bytesText(a.predicted_bytes), " per rank, over --memory-limit ",
                       bytesText(_o.memory_limit));
  a.valid = !a.over_limit;
  return a;
}

std::vector<GridAssessment> GridPlanner::assessAll() const {
  std::vector<GridAssessment> all;
  for (const GridShape& g : allGrids(_ranks))
    all.push_back(assess(g));
  return all;
}

std::string GridPlanner::alternatives(const std::vector<GridAssessment>& all) const {
  const GridAssessment* best = nullptr;
  for (const GridAssessment& a : all)
    if (a.valid && (!best || better(a, *best))) best = &a;
  if (best) {
    const double t = best->predictedStep();
    return concat("Grid ", best->grid.str(), " of the same ", _ranks, " ranks fits (",
                  bytesText(best->predicted_bytes), " per rank",
                  std::isfinite(t) ? concat(", predicted ", secondsText(t), " per step") : "",
                  "): pass --grid ", best->grid.str(), " (or --grid auto)");
  }
  if (const GridAssessment* s = smallest(all))
    return concat("No grid of ", _ranks, " ranks fits: the smallest requirement is ",
                  bytesText(s->predicted_bytes), " (", s->predicted_bytes,
                  " bytes) per rank, on grid ", s->grid.str(),
                  ". Raise --memory-limit, use more ranks, or lower --batch or the model's size");
  return concat("No grid of ", _ranks, " ranks can run this model");
}

void GridPlanner::requireFits(const GridShape& grid) const {
  if (_o.memory_limit == 0) return;
  const GridAssessment a = assess(grid);
  // A grid that cannot be planned at all gets the plan's own error when the model is built.
  if (a.valid || !runnable(a)) return;
  throw ResourceError(concat(
      "grid ", grid.str(), " does not fit --memory-limit ", bytesText(_o.memory_limit), " (",
      _o.memory_limit, " bytes) per rank: its plan needs ", bytesText(a.predicted_bytes), " (",
      a.predicted_bytes, " bytes) on the rank with the largest blocks (", termsText(a.memory),
      "); the largest layers: ", a.largest, ". ", alternatives(assessAll())));
}

GridAssessment GridPlanner::choose(std::string* summary) const {
  std::vector<GridAssessment> all = assessAll();
  std::vector<const GridAssessment*> valid;
  for (const GridAssessment& a : all)
    if (a.valid) valid.push_back(&a);
  std::stable_sort(valid.begin(), valid.end(),
                   [](const GridAssessment* a, const GridAssessment* b) { return better(*a, *b); });
  if (valid.empty()) {
    if (_o.memory_limit > 0 && smallest(all))
      throw ResourceError(concat("--grid auto: no grid of ", _ranks, " ranks fits --memory-limit ",
                                 bytesText(_o.memory_limit), " (", _o.memory_limit,
                                 " bytes) per rank. ", alternatives(all)));
    std::string why;
    for (const GridAssessment& a : all)
      why += concat("\n  ", a.grid.str(), ": ", a.why_not);
    throw InputError(concat("--grid auto: no grid of ", _ranks, " ranks can run this model:", why));
  }
  // Time decides only if the machine prices every candidate: one it cannot price (a calibrated
  // machine file without this model's layers) is an error that says how to fix it.
  if (_machine)
    for (const GridAssessment* a : valid)
      require<InputError>(a->prediction.has_value(),
                          "--grid auto: the machine file cannot price grid ", a->grid.str(), ": ",
                          a->prediction_error);
  const GridAssessment& c = *valid.front();
  if (summary) {
    const auto describe = [](const GridAssessment& a) {
      const double t = a.predictedStep();
      return concat(a.grid.str(), " (",
                    std::isfinite(t) ? concat("predicted ", secondsText(t), " per step, ") : "",
                    bytesText(a.predicted_bytes), " per rank)");
    };
    const bool timed = std::isfinite(c.predictedStep());
    *summary =
        concat("--grid auto: ", describe(c), ", the ", timed ? "fastest predicted" : "smallest",
               " of ", valid.size(), " grids of ", _ranks, " ranks that fit",
               _o.memory_limit ? concat(" --memory-limit ", bytesText(_o.memory_limit)) : "",
               valid.size() > 1 ? concat("; runner-up ", describe(*valid[1]))
                                : std::string("; no runner-up"),
               timed ? concat(" (machine '", _machine->name, "')")
                     : std::string(" (no step-time prediction: chosen by memory alone)"));
  }
  return c;
}

std::vector<GridShape> parseGridList(const std::string& list, const std::string& flag) {
  require<InputError>(!list.empty(), flag, " is empty: expected NxDxHxW grids separated by commas");
  std::vector<GridShape> out;
  std::set<std::string> seen;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string entry =
        list.substr(start, comma == std::string::npos ? comma : comma - start);
    require<InputError>(!entry.empty(), flag, " '", list,
                        "' has an empty entry: expected NxDxHxW grids separated by commas");
    try {
      out.push_back(GridShape::parse(entry));
    } catch (const InputError& e) {
      throw InputError(concat(flag, " '", list, "': ", e.what()));
    }
    require<InputError>(seen.insert(out.back().str()).second, flag, " '", list, "' names grid ",
                        out.back().str(), " twice");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string findMachineFile(const std::string& flag_value, std::string* looked) {
  if (!flag_value.empty()) return flag_value;
  if (const char* env = std::getenv("HALO3D_MACHINE"); env && *env) return env;
  std::vector<std::string> candidates;
#ifdef HALO3D_SOURCE_MACHINES_DIR
  candidates.push_back(std::string(HALO3D_SOURCE_MACHINES_DIR) + "/this-machine.json");
#endif
#ifdef HALO3D_INSTALL_MACHINES_DIR
  candidates.push_back(std::string(HALO3D_INSTALL_MACHINES_DIR) + "/this-machine.json");
#endif
  std::string tried = "$HALO3D_MACHINE (unset)";
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return c;
    tried += ", " + c;
  }
  if (looked) *looked = tried;
  return {};
}

std::optional<nn::Machine> loadMachine(const TrainingOptions& o, bool use_default, MPI_Comm comm,
                                       std::string* note) {
  std::string looked;
  const std::string path = use_default ? findMachineFile(o.machine, &looked) : o.machine;
  if (path.empty()) {
    if (note) *note = use_default ? concat("no machine file (looked at ", looked, ")") : "";
    return std::nullopt;
  }
  ScopedActivity activity("reading the machine file");
  std::optional<nn::Machine> machine;
  runCollectively(comm, [&] { machine = nn::Machine::load(path); });
  if (note) *note = concat("machine file ", path);
  return machine;
}

void requirePlanFits(const TrainingOptions& o, const TrainingTask& task, const ProcessGrid& grid) {
  if (o.memory_limit == 0) return;
  ScopedActivity activity("checking the plan against --memory-limit");
  const std::optional<nn::Machine> machine = loadMachine(o, false, grid.comm());
  const GridPlanner planner(task, o, grid.size(), ranksOnNode(grid.comm()),
                            machine ? &*machine : nullptr);
  planner.requireFits(grid.shape());
}

GridShape resolveGrid(const TrainingOptions& o, TrainingTask& task, bool allow_auto) {
  if (o.grid != "auto") return gridFromOption(o.grid);
  require<InputError>(allow_auto,
                      "--grid auto chooses the grid of a training run (train); give this "
                      "command a grid NxDxHxW");
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // The model follows the data: open it over any grid of these ranks to configure the task.
  SampleCatalog catalog = [&] {
    const ProcessGrid provisional(MPI_COMM_WORLD, GridShape(1, size, 1, 1));
    ScopedActivity activity("opening the data set");
    return task.openData(o.data, "--data", provisional);
  }();
  task.configure(catalog);
  std::string note;
  const std::optional<nn::Machine> machine = loadMachine(o, true, MPI_COMM_WORLD, &note);
  GridPlanner planner(task, o, size, ranksOnNode(MPI_COMM_WORLD), machine ? &*machine : nullptr);
  planner.readsFrom(catalog);
  std::string summary;
  const GridAssessment chosen = [&] {
    ScopedActivity activity("choosing the grid (--grid auto)");
    return planner.choose(&summary);
  }();
  if (rank == 0) {
    std::printf("%s\n", summary.c_str());
    if (!machine) std::printf("--grid auto: %s\n", note.c_str());
    std::fflush(stdout);
  }
  return chosen.grid;
}

}  // namespace halo3d::apps
