#pragma once
// Which grid to run on: every N x D x H x W grid of P ranks, valid or not (and why not), the valid
// ones with their predicted step time and memory, fastest first. --grid auto takes the first; the
// sweep runs them all. Pure (no MPI), like the plan.

#include <string>
#include <vector>

#include "halo3d/nn/Model.hpp"
#include "halo3d/nn/plan/StepModel.hpp"

namespace halo3d::nn {

struct GridCandidate {
  GridShape grid;
  std::string why_not;        // empty when the grid is valid
  StepPrediction prediction;  // set when the plan exists (even when too large for the limit)
  bool planned = false;
  bool valid() const { return why_not.empty(); }
};

// Every grid of `ranks` ranks for `model` and global batch `batch`. Valid means: the batch divides
// evenly over the N sample groups, the plan exists (every block at least as large as the model
// needs), and the predicted peak memory per rank fits `memory_limit` (0: no limit). `only`
// restricts the grids to those listed (empty: all). Valid grids come first, fastest first; then the
// others.
std::vector<GridCandidate> candidateGrids(const Model& model, int ranks, index_t batch,
                                          const Machine& machine, const RunShape& run,
                                          std::size_t memory_limit,
                                          const std::vector<GridShape>& only = {});

// The fastest valid grid. Throws InputError when none is valid, listing why for each grid and, for
// grids refused by the memory limit, the smallest predicted requirement.
const GridCandidate& bestGrid(const std::vector<GridCandidate>& candidates,
                              std::size_t memory_limit);

}  // namespace halo3d::nn
