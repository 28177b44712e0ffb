#pragma once
// halo3d-sweep: one MPI job of P ranks runs a model on every valid N x D x H x W grid of P ranks,
// one grid after another, and records measured beside predicted figures (docs/sweep.md).
//
//   1. The data of --data configure the model (as in the application); --grids (or every grid of
//      P ranks) are assessed by the grid planner (apps/common/GridPlanning.hpp): valid means the
//      batch divides by N, the plan exists and the application takes it, and the predicted memory
//      fits --memory-limit. With --calibrate, rank 0 first times the layers on the blocks of every
//      valid grid (nn/plan/Calibration.hpp) while the others wait, and stores the timings in the
//      machine file, which then prices the grids.
//   2. Each valid grid gets a fresh ProcessGrid and TrainingRun (no checkpoints, no validation,
//      no metrics file), destroyed before the next; MemoryTracker::resetPeak() before each, so the
//      peak is the grid's own. --warmup steps, then --steps measured ones. With --rounds R the
//      grids run in turn R times (each time a fresh run, warm-up first), and a grid's record pools
//      its rounds (mergeRounds): on a machine whose speed drifts over minutes (a shared VM), a slow
//      stretch then falls on every grid's steps rather than on the few that ran in it.
//   3. After each grid, DIR/sweep.jsonl, DIR/sweep.csv and DIR/sweep.md are rewritten whole
//      (SweepReport.hpp) with every grid so far, so an interrupted sweep keeps complete files.
//
// One JSON object per grid, with "status": "measured", "invalid" (with "note": why) or "failed"
// (with "note": the error). Keys of a measured grid:
//   grid, ranks, model, batch, steps, warmup, rounds
//   measured_step_s             the mean over the rounds of each round's median step time (each
//                               step's time is the slowest rank's); with one round, its median
//   step_s {median, min, max, all, round_medians}
//   times {compute, halo_wait, redistribute, allreduce, io, other}   seconds per step: for each
//                               phase the largest rank's total over its layers (the mean of the
//                               rounds, as for the layers below); other = the measured
//                               step less their sum (at least 0): loss, optimizer, waits untimed
//   halo_bytes, halo_messages   what one rank's halo exchanges send per step (the busiest rank)
//   peak_bytes                  the largest rank's peak of tracked allocations during the grid
//   predicted_peak_bytes        the memory model's bytes per rank (GridPlanning.hpp)
//   predicted_memory [{what, bytes}]
//   predicted_step_s            the step model's time (null without a machine file, or when the
//                               machine cannot price the model: prediction_error says why)
//   predicted {compute, halo, redistribute, allreduce, io, band}   the step model's split
//   layers [{name, compute_s, halo_wait_s, redistribute_s, allreduce_s, io_s, halo_bytes,
//            halo_messages, predicted {forward_s, backward_s, halo_s, redistribute_s,
//            allreduce_s}}]        per layer and step, the largest rank's ("allreduce": the
//                               gradient allreduce's final wait; "input": the batch read)
//   machine, notes
//
// A grid that fails at run time (an error thrown on every rank, e.g. a non-finite loss) is recorded
// with its error (in any round: its earlier rounds are dropped, and it does not run again) and the
// sweep goes on; the sweep then exits non-zero, naming the failed grids. An error on some ranks
// only cannot be recovered: if the ranks do not agree within a minute, the job is aborted with the
// error. A sweep where no grid is valid says why for each and exits non-zero on every rank before
// running anything.

#include "halo3d/apps/sweep/SweepOptions.hpp"

namespace halo3d::apps {

// Runs the sweep of `options` on MPI_COMM_WORLD; returns the exit code (0: every valid grid was
// measured). Throws InputError on every rank for bad flags or no valid grid, Error after the sweep
// if some grid failed.
int runSweep(const SweepOptions& options);

}  // namespace halo3d::apps
