#pragma once
// Where each sample's tiles come from once the data store is on: pure bookkeeping, no MPI, run
// identically on every rank so that senders, receivers and file readers agree without asking each
// other.
//
// Policy: first come, first kept. A sample read from file by sample group g is kept by every rank
// of g (each its own tile) if g still has room; nothing is ever evicted. From then on that group
// serves the sample: to itself from memory, to another group through the data communicator (the
// ranks holding the same block of other samples, so a tile goes to exactly the rank that needs it).
// Why not LRU: every epoch visits every sample once in a fresh random order, so under a budget
// smaller than the data set LRU evicts exactly the tiles the next epoch will want and its hit rate
// tends to zero; first-come keeps a fixed fraction (budget / data set) and costs no bookkeeping on
// the hot path.
//
// Capacity is counted in samples and is the same on every rank: the budget divided by the largest
// tile of any rank (the first block of an uneven split), so the ranks of a group, whose tiles
// differ in size, make the same decisions.

#include <cstddef>
#include <vector>

#include "halo3d/core/Types.hpp"

namespace halo3d {

class StorePlan {
 public:
  struct Source {
    int holder = -1;      // >= 0: the group that holds the sample's tiles; -1: read from file
    bool insert = false;  // read from file and keep (holder becomes the reading group)
  };

  // `capacity`: samples each rank may keep; 0 turns the store off.
  StorePlan(index_t samples, int groups, index_t capacity);
  // Samples a budget of `budget_bytes` holds at `tile_bytes` per sample.
  static index_t capacityFor(std::size_t budget_bytes, std::size_t tile_bytes);

  // Plans one step: the global batch's sample ids and, per position, the group that needs it.
  // Records the samples this step inserts, so the next call sees them.
  std::vector<Source> plan(const std::vector<index_t>& ids, const std::vector<int>& reader_group);

  index_t capacity() const { return _capacity; }
  int holder(index_t id) const { return _holder.at(std::size_t(id)); }
  index_t kept(int group) const { return _kept.at(std::size_t(group)); }

 private:
  index_t _capacity;
  std::vector<int> _holder;
  std::vector<index_t> _kept;
};

}  // namespace halo3d
