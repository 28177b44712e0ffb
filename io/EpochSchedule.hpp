#pragma once
// Which samples make up each mini-batch: pure functions of (sample count, global batch size, sample
// groups, seed), no MPI, the same on every rank and independent of the spatial split.
//
// Epoch e visits the samples in the order of permutation(e) (Fisher-Yates keyed by (seed, e); the
// identity when shuffling is off). Step s of the epoch takes positions [s B, s B + B) of that
// order: the *global* mini-batch. Its N axis is split over the Pn sample groups exactly as
// TensorBlock::forGrid splits N (BlockDecomposition: the first B mod Pn groups get one more
// sample), so a training step sees the same global batch on every grid.
//
// The final partial batch. With S samples, S mod B are left over. They form one more, smaller step
// if there are at least Pn of them (every group needs a sample) and drop_last is off; otherwise
// they are skipped this epoch (they come back in other positions in later epochs when shuffling).
//   Worked example: S = 10, B = 4, Pn = 2: steps take 4, 4, 2 samples. With Pn = 4 the 2 left over
//   are fewer than the 4 groups, so an epoch is 2 steps of 4.

#include <cstdint>
#include <utility>
#include <vector>

#include "halo3d/core/Types.hpp"

namespace halo3d {

class EpochSchedule {
 public:
  // Throws InputError unless samples >= 1, 1 <= groups <= batch_size, and an epoch holds at least
  // one step.
  EpochSchedule(index_t samples, index_t batch_size, int groups, std::uint64_t seed,
                bool shuffle = true, bool drop_last = false);

  index_t samples() const { return _samples; }
  index_t batchSize() const { return _batch; }
  int groups() const { return _groups; }
  index_t stepsPerEpoch() const { return _steps; }
  // The global batch size of `step` (B, or the remainder for a final partial step).
  index_t batchSizeOf(index_t step) const;

  // The visiting order of epoch `epoch`: a permutation of [0, samples).
  std::vector<index_t> permutation(index_t epoch) const;
  // Sample ids of the global batch of `step`, given the epoch's permutation.
  std::vector<index_t> batch(const std::vector<index_t>& permutation, index_t step) const;
  // Positions [k0, k1) of a global batch of `batch_size` that sample group `group` holds.
  std::pair<index_t, index_t> groupRange(index_t batch_size, int group) const;

 private:
  index_t _samples, _batch;
  int _groups;
  std::uint64_t _seed;
  bool _shuffle;
  index_t _steps;
  index_t _remainder;  // samples of a kept final partial step, or 0
};

}  // namespace halo3d
