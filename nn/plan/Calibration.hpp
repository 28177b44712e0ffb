#pragma once
// Calibration: the measured compute time of every layer of a model on the blocks that the ranks of
// candidate grids would hold. Only block shapes matter, so one rank times them all, for every grid,
// and stores them in a machine file's layer table (Machine::layers), which the step model reads.
//
// Each layer runs alone, forward then backward, on a one-rank grid over MPI_COMM_SELF, on tensors
// laid out as the rank's own (its owned block inside the global volume, with the ghost widths the
// plan gives each tensor: the rows a split leaves between ghosts, the next layer's ghosts in the
// output), random values: the kernels a rank runs on that block, without the communication the
// step model prices separately. A layer that exchanges halos runs in the overlap's pieces
// (interior, then the shell, as on a rank with those neighbours; WindowLayer), keyed by the
// neighbours (LayerTiming::neighbours). The optimizer
// step is timed once on the model's parameters (layer "optimizer <kind>"), and the store of each
// representative rank's batch block into the model's input (layer "input store", input and output
// both the block), and the loss on each representative rank's output block (layer "loss <name>",
// CalibrationOptions::loss), both of which the step runs outside every layer.

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "halo3d/nn/Model.hpp"
#include "halo3d/nn/Optimizer.hpp"
#include "halo3d/nn/plan/Machine.hpp"
#include "halo3d/nn/plan/ModelPlan.hpp"

namespace halo3d::nn {

// How a layer's tensors are laid out and run when timed. Run: as the rank runs it (the default,
// what the step model prices). The other two are for comparisons (halo3d-plan --calibrate-layout):
// WholeBlock: the rank's layout in one piece, keyed as unsplit; Legacy: the calibration before the
// neighbours key (the owned block as a one-rank volume, ghosts only where the layer itself pads,
// none in the output, one piece).
enum class CalibrationLayout { Run, WholeBlock, Legacy };

struct CalibrationOptions {
  int threads = 1;      // threads per rank the timings are for (Kokkos' concurrency)
  int repetitions = 3;  // timed runs after one warm-up; the median is kept
  // Keep the least of the runs instead: on a machine shared with other work (which only adds
  // time), for comparisons of layouts rather than for a machine file the model prices steps with.
  bool keep_least = false;
  // Every split rank's layer timed in pieces is also timed whole, alternating with the pieces run
  // by run (the whole block's time: the pieces' times the median ratio of the pairs), and recorded
  // in the machine file without neighbours, so that one calibration prices both ways. Where set,
  // it is also recorded here under the rank's key, for comparisons.
  Machine* paired_whole = nullptr;
  OptimizerKind optimizer = OptimizerKind::Adam;
  bool retime = false;  // time again what the machine file already holds
  // Run layout: time each representative rank's layers in a step's order, each after the layers
  // before it (what the step model prices); else each layer alone, repeated (comparisons).
  bool step_order = true;
  CalibrationLayout layout = CalibrationLayout::Run;
  // Measure the scheduler's time slice (measureSchedulerSlice) on a host machine whose file lacks
  // it (or with retime).
  bool scheduler_slice = true;
  // The loss to time on each representative rank's output block (lossKey): "mse" (CosmoFlow), "ce"
  // (softmax cross-entropy) or "dice" (soft Dice), as nn/Loss.hpp computes them, gradient
  // included. Empty: none.
  std::string loss;
  std::function<void(const std::string&)> progress;  // told about each layer timed
};

// Which sides of the rank at `coords` node `id` exchanges halos with, per D, H, W (1: below, 2:
// above, 3: both; LayerTiming::neighbours): none unless it is a sliding-window layer on a Spatial
// input split along that dimension.
std::array<int, 3> exchangeNeighbours(const ModelPlan& plan, int id, const GridCoords& coords);

// The key of node `id`'s timing on the rank at `coords`: the layer's kind, its first input's and
// its output's blocks (local samples, channels, owned D, H, W) and its exchange neighbours.
LayerTiming timingKey(const ModelPlan& plan, int id, const GridCoords& coords, int threads);

// The key of the input store's timing on the rank at `coords`.
constexpr const char* kInputStore = "input store";
LayerTiming inputStoreKey(const ModelPlan& plan, const GridCoords& coords, int threads);

// The key of the loss's timing on the rank at `coords`: layer "loss <loss>" (CalibrationOptions::
// loss), input and output the rank's block of the model's output (local samples, channels, owned
// D, H, W).
constexpr const char* kLossPrefix = "loss ";
LayerTiming lossKey(const ModelPlan& plan, const GridCoords& coords, const std::string& loss,
                    int threads);

// The key of the batch read's timing on the largest rank: layer `name` (what the data are:
// apps/common/GridPlanning.hpp's batchReadName), the largest rank's input block (local samples,
// channels, owned D, H, W) and one sample (1, C, D, H, W). halo3d-sweep --calibrate measures it on
// the run's data (apps/sweep/BatchReadCalibration.hpp); the step model prices the read with it.
LayerTiming batchReadKey(const ModelPlan& plan, const std::string& name, int threads);

// Times the layers of `plans` (every plan made by `model.plan()`) on their representative ranks'
// blocks and records them in `machine`. Runs on this process alone. Returns how many timings it
// added or replaced.
int calibrate(Model& model, const std::vector<ModelPlan>& plans, Machine& machine,
              const CalibrationOptions& options);

// The time slice of this machine's scheduler, as a rank sees it when another runnable rank shares
// its core: two threads pinned to the core this one runs on spin for `seconds`, each noting when it
// was off the core (a gap of over 50 us between two clock reads); the median length of their runs
// between gaps. 0 where threads cannot be pinned (not Linux) or too few runs were seen.
double measureSchedulerSlice(double duration_s = 0.3);

// Collective over `comm` (at least 2 ranks, on one node): fits the shared-memory link's alpha and
// beta to ping-pong times between ranks 0 and 1 over message sizes from 8 B to 8 MiB (least squares
// on the round-trip halves), and the reduction's gamma to a ring MPI_Allreduce of 8 MiB over all
// ranks given those. Returns, on every rank, a description of the fit for the machine file's
// "source" fields.
std::string calibrateLinks(MPI_Comm comm, Machine& machine);

}  // namespace halo3d::nn
