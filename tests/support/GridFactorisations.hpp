#pragma once
// Every ordered factorisation of a rank count into a process grid N x D x H x W.
#include <vector>

#include "halo3d/core/GridShape.hpp"

namespace halo3d::testing {

inline std::vector<GridShape> allGrids(int ranks) {
  std::vector<GridShape> grids;
  for (int n = 1; n <= ranks; ++n)
    for (int d = 1; d <= ranks; ++d)
      for (int h = 1; h <= ranks; ++h)
        for (int w = 1; w <= ranks; ++w)
          if (n * d * h * w == ranks) grids.emplace_back(n, d, h, w);
  return grids;
}

}  // namespace halo3d::testing
