#pragma once
// The entries every checkpoint state of the io tests holds: a convolution weight and its Adam
// moment, so that a round trip covers the model and the optimizer groups.
#include <cstddef>
#include <vector>

#include "halo3d/io/CheckpointState.hpp"

namespace halo3d::testing {

// A state holding conv1.weight of `shape`, offset + scale * i at linear index i, and the same
// values as exp_avg.conv1.weight.
inline CheckpointState stateWithConvWeight(const std::vector<index_t>& shape, float offset,
                                           float scale) {
  std::size_t count = 1;
  for (index_t e : shape)
    count *= std::size_t(e);
  std::vector<float> w(count);
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = offset + scale * float(i);
  CheckpointState s;
  s.model["conv1.weight"] = HostArray(shape, w);
  s.optimizer["exp_avg.conv1.weight"] = HostArray(shape, w);
  return s;
}

}  // namespace halo3d::testing
