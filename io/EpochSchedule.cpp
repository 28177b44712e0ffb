#include "halo3d/io/EpochSchedule.hpp"

#include <numeric>

#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/io/Random.hpp"

namespace halo3d {

EpochSchedule::EpochSchedule(index_t samples, index_t batch_size, int groups, std::uint64_t seed,
                             bool shuffle, bool drop_last)
    : _samples(samples), _batch(batch_size), _groups(groups), _seed(seed), _shuffle(shuffle) {
  require<InputError>(samples >= 1, "the data set holds no samples");
  require<InputError>(groups >= 1, "sample groups ", groups, " must be >= 1");
  require<InputError>(batch_size >= groups, "global batch size ", batch_size,
                      " is smaller than the ", groups,
                      " sample groups (Pn) of the grid: every group needs at least one sample");
  const index_t left = samples % batch_size;
  _remainder = (!drop_last && left >= groups) ? left : 0;
  _steps = samples / batch_size + (_remainder > 0 ? 1 : 0);
  require<InputError>(_steps >= 1, "the data set's ", samples, " samples make no batch of ",
                      batch_size, (drop_last ? " (drop_last is on)" : ""), " for ", groups,
                      " sample groups");
}

index_t EpochSchedule::batchSizeOf(index_t step) const {
  require<InputError>(step >= 0 && step < _steps, "step ", step, " outside the ", _steps,
                      " steps of an epoch");
  return (_remainder > 0 && step == _steps - 1) ? _remainder : _batch;
}

std::vector<index_t> EpochSchedule::permutation(index_t epoch) const {
  std::vector<index_t> order(static_cast<std::size_t>(_samples));
  std::iota(order.begin(), order.end(), index_t(0));
  if (!_shuffle) return order;
  CounterRng rng(_seed, std::uint64_t(epoch));
  for (index_t i = _samples - 1; i > 0; --i)
    std::swap(order[std::size_t(i)], order[std::size_t(rng.below(std::uint64_t(i + 1)))]);
  return order;
}

std::vector<index_t> EpochSchedule::batch(const std::vector<index_t>& permutation,
                                          index_t step) const {
  const index_t n = batchSizeOf(step);
  const auto first = permutation.begin() + std::ptrdiff_t(step * _batch);
  return std::vector<index_t>(first, first + std::ptrdiff_t(n));
}

std::pair<index_t, index_t> EpochSchedule::groupRange(index_t batch_size, int group) const {
  checkDecomposable("global batch (N)", batch_size, _groups);
  const index_t k0 = blockOffset(batch_size, _groups, group);
  return {k0, k0 + blockExtent(batch_size, _groups, group)};
}

}  // namespace halo3d
