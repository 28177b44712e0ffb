// The message plan without MPI: regions and contiguous runs.
#include <gtest/gtest.h>

#include "halo3d/comm/impl/HaloPlan.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d::impl {
namespace {

TEST(HaloPlan, RunsFoldWholeInnerAxes) {
  const Shape5 alloc{2, 3, 6, 5, 4};
  // D planes 1..3, whole H and W: one run of 2*5*4 per (n, c).
  RunLayout r = runsOf(alloc, Box({1, 0, 0}, {3, 5, 4}), 100);
  EXPECT_EQ(r.length, 40u);
  ASSERT_EQ(r.starts.size(), 6u);
  EXPECT_EQ(r.starts[0], 20u);
  EXPECT_EQ(r.starts[1], 20u + 120u);  // next channel
  // A W column: runs of 2 elements, one per (n, c, d, h).
  r = runsOf(alloc, Box({0, 0, 2}, {6, 5, 4}), 1000);
  EXPECT_EQ(r.length, 2u);
  EXPECT_EQ(r.starts.size(), 2u * 3 * 6 * 5);
  EXPECT_EQ(r.starts[1] - r.starts[0], 4u);
  // Too many runs: refused.
  EXPECT_TRUE(runsOf(alloc, Box({0, 0, 2}, {6, 5, 4}), 10).starts.empty());
  // The whole allocation is one run.
  r = runsOf(alloc, Box({0, 0, 0}, {6, 5, 4}), 1);
  EXPECT_EQ(r.length, 2u * 3 * 6 * 5 * 4);
  EXPECT_EQ(r.starts, std::vector<std::size_t>{0});
}

TEST(HaloPlan, RegionsOfAnInteriorBlock) {
  const GridShape grid(1, 3, 3, 3);
  const Shape5 s{1, 1, 9, 9, 9};
  const HaloWidths h{{1, 2, 1}, {2, 1, 1}};
  const TensorBlock b = TensorBlock::forGrid(s, grid, {0, 1, 1, 1}, h);
  const HaloPlan plan = planHaloExchange(b, grid, {1, 1, 1});
  ASSERT_EQ(plan.messages.size(), 26u);
  for (const HaloMessage& m : plan.messages) {
    EXPECT_TRUE(b.localOwned().contains(m.owned_side)) << m.owned_side;
    EXPECT_TRUE(intersect(b.localOwned(), m.ghost_side).empty()) << m.ghost_side;
    if (m.offset == std::array<int, 3>{-1, 0, 0}) {
      EXPECT_EQ(m.ghost_side, Box({0, 2, 1}, {1, 5, 4}));  // lo ghost plane, width lo = 1
      EXPECT_EQ(m.owned_side, Box({1, 2, 1}, {3, 5, 4}));  // first hi = 2 owned planes
    }
  }
  // The ghost sides tile the ghost shell exactly.
  std::vector<int> hits(b.localAll().size(), 0);
  for (const HaloMessage& m : plan.messages)
    for (index_t d = m.ghost_side.min(0); d < m.ghost_side.max(0); ++d)
      for (index_t y = m.ghost_side.min(1); y < m.ghost_side.max(1); ++y)
        for (index_t x = m.ghost_side.min(2); x < m.ghost_side.max(2); ++x)
          ++hits[(d * b.localAll().extent(1) + y) * b.localAll().extent(2) + x];
  std::size_t shell = 0;
  for (int v : hits) {
    EXPECT_LE(v, 1);
    shell += v;
  }
  EXPECT_EQ(shell, std::size_t(b.localAll().size() - b.localOwned().size()));
}

TEST(HaloPlan, StretchCoversUnsplitDimensionsOnly) {
  const GridShape grid(1, 2, 1, 1);
  const TensorBlock b =
      TensorBlock::forGrid({1, 2, 8, 5, 5}, grid, {0, 0, 0, 0}, HaloWidths::uniform(1));
  const HaloPlan plan = planHaloExchange(b, grid, {0, 0, 0});
  ASSERT_EQ(plan.messages.size(), 1u);
  EXPECT_EQ(plan.messages[0].ghost_side_stretched, Box({5, 0, 0}, {6, 7, 7}));
  EXPECT_EQ(plan.messages[0].ghost_side, Box({5, 1, 1}, {6, 6, 6}));
}

}  // namespace
}  // namespace halo3d::impl
