#pragma once
// The spatial grids the overlap and CosmoFlow-step benchmarks run on, by rank count: 2 ranks
// 1x2x1x1 and 4 ranks 1x2x2x1 (the grids issue 5 compares), 8 ranks 1x2x2x2, otherwise 1xPx1x1.
#include "halo3d/core/GridShape.hpp"

namespace halo3d::bench {

inline GridShape splitGridFor(int ranks) {
  switch (ranks) {
    case 4:
      return GridShape(1, 2, 2, 1);
    case 8:
      return GridShape(1, 2, 2, 2);
  }
  return GridShape(1, ranks, 1, 1);
}

}  // namespace halo3d::bench
