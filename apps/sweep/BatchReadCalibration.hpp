#pragma once
// The batch read's calibration (halo3d-sweep --calibrate): the data loader's own time for one
// step's batch, on the run's data, on the ranks of each candidate grid. A read rate (bytes over
// io.read_bytes_per_s) misses most of it on small blocks: opening each sample's file on first use,
// the conversion and transform of the values, short rows of a W split, the loader's agreement on
// failures (docs/scaling.md, "The loader's own time, calibrated").
//
// Every rank takes part: the grid's ranks read together, as they do in a step, through a loader
// made as the run makes it but without prefetch, over the steps the sweep runs (the samples the
// run reads, in its order: files opened on first use, as in the run). The warm-up steps are read
// untimed (the first also sets the loader up); each timed call starts from a barrier; the time of
// a call is the slowest rank's, and the median over calls is kept. Ranks times threads beyond the
// node's cores share them while they read, so the time is divided by that factor: the step model
// stretches it again (nn/plan/StepModel.hpp).

#include <functional>
#include <string>
#include <vector>

#include "halo3d/apps/common/TrainingOptions.hpp"
#include "halo3d/apps/common/TrainingTask.hpp"
#include "halo3d/io/SampleCatalog.hpp"
#include "halo3d/nn/plan/Machine.hpp"
#include "halo3d/nn/plan/ModelPlan.hpp"

namespace halo3d::apps {

struct BatchReadCalibration {
  std::string name;                                  // the timing's name (batchReadName)
  int ranks_per_node = 0;                            // ranks sharing the node's cores
  int warmup = 1;                                    // next() calls first, untimed
  int calls = 5;                                     // next() calls timed per grid
  std::function<void(const std::string&)> progress;  // told about each grid timed (rank 0)
};

// Collective over MPI_COMM_WORLD, whose size every plan's grid must have: times the batch read of
// each plan's grid not yet in `machine` (nn::batchReadKey) and records it there, on every rank.
// Returns how many timings it recorded.
int calibrateBatchRead(const TrainingTask& task, const TrainingOptions& o,
                       const SampleCatalog& data, const std::vector<nn::ModelPlan>& plans,
                       nn::Machine& machine, const BatchReadCalibration& c);

}  // namespace halo3d::apps
