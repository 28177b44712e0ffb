// The box arithmetic of halo overlap: narrowAlongW keeps W shell slabs at least a vector wide, and
// a shell plus its core always partition the outer box (every cell computed exactly once).
#include <gtest/gtest.h>

#include "halo3d/nn/layers/Boxes.hpp"

namespace halo3d::nn {
namespace {

// How many of `pieces` hold each cell of `outer`: 1 everywhere, or the number of cells off.
int cellsNotCoveredOnce(const Box& outer, const std::vector<Box>& pieces) {
  int off = 0;
  for (index_t d = outer.min(0); d < outer.max(0); ++d)
    for (index_t h = outer.min(1); h < outer.max(1); ++h)
      for (index_t w = outer.min(2); w < outer.max(2); ++w) {
        int n = 0;
        for (const Box& p : pieces)
          n += p.contains(Extents3{d, h, w});
        off += n != 1;
      }
  return off;
}

TEST(Boxes, NarrowAlongWMakesWSlabsAVectorWide) {
  const Box outer({0, 0, -1}, {8, 8, 65});  // a W-split block's region: one ghost cell each side
  const Box owned({0, 0, 0}, {8, 8, 64});
  const Box core = narrowAlongW(outer, owned, 16);
  EXPECT_EQ(core.min(2), 15);
  EXPECT_EQ(core.max(2), 49);
  EXPECT_EQ(core.min(0), 0);
  EXPECT_EQ(core.max(1), 8);
  std::vector<Box> pieces = shellSlabs(outer, core);
  for (const Box& s : pieces)
    if (s.extent(2) < outer.extent(2)) {
      EXPECT_EQ(s.extent(2), 16);
    }
  pieces.push_back(core);
  EXPECT_EQ(cellsNotCoveredOnce(outer, pieces), 0);
}

TEST(Boxes, NarrowAlongWLeavesUnsplitSidesAndEmptiesThinBlocks) {
  // No W ghost on the low side: that bound stays.
  const Box outer({0, 0, 0}, {4, 4, 41});
  const Box inner({1, 0, 0}, {3, 4, 40});
  const Box core = narrowAlongW(outer, inner, 16);
  EXPECT_EQ(core.min(2), 0);
  EXPECT_EQ(core.max(2), 25);
  // A block narrower than two vectors has no core along W: the shell is everything.
  const Box thin_outer({0, 0, -1}, {4, 4, 21});
  const Box thin = narrowAlongW(thin_outer, Box({0, 0, 0}, {4, 4, 20}), 16);
  EXPECT_TRUE(thin.empty());
  std::vector<Box> pieces = shellSlabs(thin_outer, thin);
  EXPECT_EQ(cellsNotCoveredOnce(thin_outer, pieces), 0);
  // Nothing to narrow when inner spans outer along W.
  EXPECT_EQ(narrowAlongW(outer, Box({0, 0, 0}, {4, 2, 41}), 16), Box({0, 0, 0}, {4, 2, 41}));
}

}  // namespace
}  // namespace halo3d::nn
