#pragma once
// The message plan of a halo exchange: for each of the 26 neighbour slots, which cells travel, and
// whether they travel straight from the tensor ("direct": a few long contiguous runs) or through a
// packed buffer. Pure geometry: no MPI, no Kokkos kernels, so it is tested on its own.

#include <array>
#include <cstddef>
#include <vector>

#include "halo3d/core/GridShape.hpp"
#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/core/TensorBlock.hpp"

namespace halo3d::impl {

// A region of a rank-5 LayoutRight allocation (samples, C, D, H, W) as contiguous runs of `length`
// elements, starting at the elements `starts` (in order of increasing address).
struct RunLayout {
  std::size_t length = 0;
  std::vector<std::size_t> starts;
};

// The runs of `region` (local spatial indices, all samples and channels) in an allocation of
// `alloc`. Runs are at most `max_runs`; a region that needs more returns an empty `starts`.
RunLayout runsOf(const Shape5& alloc, const Box& region, std::size_t max_runs);

// When a region may travel straight from the tensor (HaloExchange's direct path): the runs of
// `stretched` in an allocation of `alloc`, if there are at most `max_runs` and each holds at least
// `min_run_bytes`; an empty layout (no starts) when the region must be packed.
RunLayout directRuns(const Shape5& alloc, const Box& stretched, std::size_t element_bytes,
                     std::size_t min_run_bytes, std::size_t max_runs);

struct HaloMessage {
  int slot = 0;                 // neighbour offset, see neighbourSlot()
  std::array<int, 3> offset{};  // the same, as {-1,0,1}^3
  Box owned_side;               // my owned cells that are the neighbour's ghosts (local indices)
  Box ghost_side;  // my ghost cells that are the neighbour's owned cells (local indices)
  // Gather may send these larger regions instead: owned_side/ghost_side stretched over the whole
  // allocation along every dimension the grid does not split. The extra cells are ghosts at a
  // physical boundary, zero on both ranks, and the stretch turns many short rows into a few long
  // runs.
  Box owned_side_stretched, ghost_side_stretched;
};

struct HaloPlan {
  TensorBlock block;
  std::vector<HaloMessage> messages;  // one per existing neighbour with a non-empty region
};

// What one round of an exchange puts on the wire toward one neighbour, as HaloExchange sends it:
// the bytes, the MPI messages (one, or one per contiguous run for a direct region without
// datatypes) and whether it is direct.
struct WireMessage {
  std::array<int, 3> offset{};
  std::size_t bytes = 0, messages = 0;
  bool direct = false;
};
struct DirectRule {
  bool enabled = true;  // gather only; never when the buffers are staged through host memory
  std::size_t min_run_bytes = 8 * 1024, max_runs = 1024;
  bool derived_datatypes = true;  // a direct region's runs travel as one message
};
// Every message this rank sends in one round of `plan`, gather or scatter-sum.
std::vector<WireMessage> wireMessages(const HaloPlan& plan, bool gather, const DirectRule& rule,
                                      std::size_t element_bytes);

// Plans the exchange of `block` on a grid of `grid` at spatial position `spatial`. Requires every
// ghost to come from an adjacent block: throws ShapeError if a message region does not lie in the
// owned block.
HaloPlan planHaloExchange(const TensorBlock& block, const GridShape& grid,
                          const std::array<int, 3>& spatial);

}  // namespace halo3d::impl
