#include <gtest/gtest.h>

#include <set>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/GridShape.hpp"

namespace halo3d {
namespace {

// Every ordered factorisation: for 2^k ranks, choosing where 3 separators fall among k factors of 2
// gives C(k + 3, 3) grids.
TEST(GridShape, AllGridsOfARankCount) {
  EXPECT_EQ(allGrids(1), (std::vector<GridShape>{GridShape(1, 1, 1, 1)}));
  const std::vector<GridShape> eight = allGrids(8);
  EXPECT_EQ(eight.size(), 20u);  // C(6, 3)
  std::set<std::string> seen;
  for (const GridShape& g : eight) {
    EXPECT_EQ(g.size(), 8) << g.str();
    seen.insert(g.str());
  }
  EXPECT_EQ(seen.size(), eight.size());
  EXPECT_EQ(allGrids(2048).size(), 364u);  // C(14, 3)
  EXPECT_EQ(allGrids(6).size(), 16u);      // 6 = 2 x 3: C(4,3) x C(4,3)
}

TEST(GridShape, ParsesNxDxHxW) {
  const GridShape g = GridShape::parse("2x3x1x4");
  EXPECT_EQ(g.n(), 2);
  EXPECT_EQ(g.d(), 3);
  EXPECT_EQ(g.h(), 1);
  EXPECT_EQ(g.w(), 4);
  EXPECT_EQ(g.size(), 24);
  EXPECT_EQ(g.spatialSize(), 12);
  EXPECT_EQ(g.str(), "2x3x1x4");
}

TEST(GridShape, MalformedStringsNameTheInput) {
  for (const char* bad : {"", "2x2x2", "2x2x2x2x1", "2x0x1x1", "ax1x1x1", "2x2x2x", "2,2,2,2",
                          "-1x1x1x1", "1x1x1x1 ", "99999999x1x1x1"}) {
    try {
      GridShape::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("NxDxHxW"), std::string::npos) << e.what();
    }
  }
}

TEST(GridShape, RankCoordinatesRoundTripAndSpatialGroupIsConsecutive) {
  const GridShape g(2, 3, 2, 2);
  for (int r = 0; r < g.size(); ++r) {
    const GridCoords c = g.coordsOf(r);
    EXPECT_EQ(g.rankOf(c), r);
    EXPECT_EQ(r / g.spatialSize(), c.n);
    EXPECT_EQ(r % g.spatialSize(), g.spatialRankOf(c.spatial()));
  }
  EXPECT_THROW(g.coordsOf(g.size()), InputError);
}

TEST(GridShape, TwentySixNeighboursInTheInterior) {
  const GridShape g(1, 3, 3, 3);
  std::set<int> seen;
  for (int slot = 0; slot < kNeighbourSlots; ++slot) {
    if (slot == kSelfSlot) continue;
    const auto o = neighbourOffset(slot);
    EXPECT_EQ(neighbourSlot(o), slot);
    EXPECT_EQ(neighbourOffset(oppositeSlot(slot)), (std::array<int, 3>{-o[0], -o[1], -o[2]}));
    const int r = g.neighbourSpatialRank({1, 1, 1}, o);
    ASSERT_GE(r, 0);
    seen.insert(r);
  }
  EXPECT_EQ(seen.size(), 26u);
  EXPECT_EQ(seen.count(g.spatialRankOf({1, 1, 1})), 0u);
  // A corner block has 7 neighbours.
  int corner = 0;
  for (int slot = 0; slot < kNeighbourSlots; ++slot)
    if (slot != kSelfSlot && g.neighbourSpatialRank({0, 0, 0}, neighbourOffset(slot)) >= 0)
      ++corner;
  EXPECT_EQ(corner, 7);
}

}  // namespace
}  // namespace halo3d
