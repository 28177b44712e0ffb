#include "halo3d/nn/plan/GridChoice.hpp"

#include <algorithm>
#include <cmath>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/MemoryInfo.hpp"

namespace halo3d::nn {

std::vector<GridCandidate> candidateGrids(const Model& model, int ranks, index_t batch,
                                          const Machine& machine, const RunShape& run,
                                          std::size_t memory_limit,
                                          const std::vector<GridShape>& only) {
  std::vector<GridCandidate> out;
  for (const GridShape& g : only.empty() ? allGrids(ranks) : only) {
    GridCandidate c;
    c.grid = g;
    if (g.size() != ranks) {
      c.why_not = concat("has ", g.size(), " ranks, not ", ranks);
    } else if (batch % g.n() != 0) {
      c.why_not = concat("the batch of ", batch, " does not divide over ", g.n(), " sample groups");
    } else {
      try {
        const ModelPlan plan = model.plan(g, batch);
        c.prediction = predictStep(plan, machine, run);
        c.planned = true;
        if (memory_limit > 0 && c.prediction.peak_bytes > memory_limit)
          c.why_not = concat("needs ", formatBytes(double(c.prediction.peak_bytes)),
                             " per rank, over the limit of ", formatBytes(double(memory_limit)));
      } catch (const ShapeError& e) {
        c.why_not = e.what();
      }
    }
    out.push_back(std::move(c));
  }
  // Fastest first; grids within 0.1% of each other (splits the model cannot tell apart) prefer
  // splitting D, then H, over W: halos of outer dimensions are contiguous, W halos are strided.
  std::stable_sort(out.begin(), out.end(), [](const GridCandidate& a, const GridCandidate& b) {
    if (a.valid() != b.valid()) return a.valid();
    if (!a.valid()) return false;
    const double ta = a.prediction.step_s, tb = b.prediction.step_s;
    if (std::abs(ta - tb) > 1e-3 * std::max(ta, tb)) return ta < tb;
    if (a.grid.w() != b.grid.w()) return a.grid.w() < b.grid.w();
    return a.grid.h() < b.grid.h();
  });
  return out;
}

const GridCandidate& bestGrid(const std::vector<GridCandidate>& candidates,
                              std::size_t memory_limit) {
  require<InputError>(!candidates.empty(), "no grid to choose from");
  if (candidates.front().valid()) return candidates.front();
  std::string why;
  std::size_t smallest = 0;
  std::string smallest_grid;
  for (const GridCandidate& c : candidates) {
    why += concat("\n  ", c.grid.str(), ": ", c.why_not);
    if (c.planned && (smallest == 0 || c.prediction.peak_bytes < smallest)) {
      smallest = c.prediction.peak_bytes;
      smallest_grid = c.grid.str();
    }
  }
  if (memory_limit > 0 && smallest > 0)
    throw InputError(concat("no grid fits the memory limit of ", formatBytes(double(memory_limit)),
                            " per rank: the smallest requirement is ",
                            formatBytes(double(smallest)), " (", smallest, " bytes) on grid ",
                            smallest_grid, why));
  throw InputError(concat("no grid is valid:", why));
}

}  // namespace halo3d::nn
