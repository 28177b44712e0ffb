#include "halo3d/apps/sweep/BatchReadCalibration.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "halo3d/apps/common/TrainingRun.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/Activity.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/Median.hpp"
#include "halo3d/io/DataLoader.hpp"
#include "halo3d/nn/Precision.hpp"
#include "halo3d/nn/plan/Calibration.hpp"
#include "halo3d/nn/plan/StepModel.hpp"

namespace halo3d::apps {

namespace {

// The slowest rank's seconds of each of `calls` next() calls, each started together.
std::vector<double> timeCalls(DataLoader<>& loader, int calls, MPI_Comm comm) {
  std::vector<double> seconds;
  for (int i = 0; i < calls; ++i) {
    MPI_Barrier(comm);
    const auto start = std::chrono::steady_clock::now();
    { const Batch<> batch = loader.next(); }
    Kokkos::fence();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, comm);
    seconds.push_back(s);
  }
  return seconds;
}

std::string millisecondsText(const std::vector<double>& seconds) {
  std::string out;
  for (double s : seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.3g", out.empty() ? "" : " ", s * 1e3);
    out += buf;
  }
  return out + " ms";
}

}  // namespace

int calibrateBatchRead(const TrainingTask& task, const TrainingOptions& o,
                       const SampleCatalog& data, const std::vector<nn::ModelPlan>& plans,
                       nn::Machine& machine, const BatchReadCalibration& c) {
  const int threads = Kokkos::DefaultExecutionSpace().concurrency();
  // Ranks and threads beyond the cores time-share them while every rank reads.
  const double share = nn::coreShare(machine, c.ranks_per_node, threads);
  int recorded = 0;
  for (const nn::ModelPlan& plan : plans) {
    nn::LayerTiming t = nn::batchReadKey(plan, c.name, threads);
    if (machine.find(t)) continue;  // the same file on every rank: all skip or none
    ScopedActivity activity(concat("calibrating the batch read of grid ", plan.grid().str()));
    const ProcessGrid grid(MPI_COMM_WORLD, plan.grid());
    DataLoaderOptions lo = loaderOptions(o, task, plan.block(0, grid.coords()).halo(),
                                         o.precision == nn::Precision::bf16, true);
    lo.prefetch = false;  // the loader's own time, on the calling thread's clock
    DataLoader<> loader(grid, data, lo);
    // The run's warm-up steps first, untimed: the first call also sets the loader up.
    timeCalls(loader, c.warmup, grid.comm());
    const std::vector<double> seconds = timeCalls(loader, c.calls, grid.comm());
    t.forward_s = median(seconds) / share;
    t.backward_s = 0;
    machine.record(t);
    ++recorded;
    if (c.progress)
      c.progress(concat(c.name, " of grid ", plan.grid().str(), " on ", t.input, ": ",
                        t.forward_s * 1e3, " ms (median of the slowest rank's over ", c.calls,
                        " steps", share > 1 ? concat(", over ", share, " ranks per core") : "",
                        "; the steps ", millisecondsText(seconds), ")"));
  }
  return recorded;
}

}  // namespace halo3d::apps
