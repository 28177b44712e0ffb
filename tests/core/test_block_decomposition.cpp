#include <gtest/gtest.h>

#include <vector>

#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d {
namespace {

TEST(BlockDecomposition, WorkedExampleFromHeader) {
  // E = 10 over 4: [0,3) [3,6) [6,8) [8,10)
  const std::vector<index_t> extent{3, 3, 2, 2}, offset{0, 3, 6, 8};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(blockExtent(10, 4, i), extent[i]) << "part " << i;
    EXPECT_EQ(blockOffset(10, 4, i), offset[i]) << "part " << i;
  }
  EXPECT_EQ(blockOffset(10, 4, 4), 10);
}

TEST(BlockDecomposition, PartsTileTheExtentAndOwnerInvertsOffsets) {
  for (index_t e = 1; e <= 40; ++e) {
    for (int p = 1; p <= e && p <= 12; ++p) {
      index_t next = 0, biggest = 0, smallest = e;
      for (int i = 0; i < p; ++i) {
        const index_t off = blockOffset(e, p, i), ext = blockExtent(e, p, i);
        ASSERT_EQ(off, next) << "E=" << e << " p=" << p << " i=" << i;
        ASSERT_GE(ext, 1);
        biggest = std::max(biggest, ext);
        smallest = std::min(smallest, ext);
        // Larger parts come first.
        if (i > 0) {
          ASSERT_LE(ext, blockExtent(e, p, i - 1));
        }
        for (index_t x = off; x < off + ext; ++x)
          ASSERT_EQ(blockOwner(e, p, x), i) << "E=" << e << " x=" << x;
        next = off + ext;
      }
      ASSERT_EQ(next, e);
      ASSERT_LE(biggest - smallest, 1);
    }
  }
}

TEST(BlockDecomposition, BlockBoxIsTheProductOfOneDimensionalSplits) {
  const Box b = blockBox({7, 6, 5}, {2, 3, 1}, {1, 2, 0});
  EXPECT_EQ(b, Box({4, 4, 0}, {7, 6, 5}));
}

TEST(BlockDecomposition, BadInputNamesTheValues) {
  try {
    checkDecomposable("D", 3, 4);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("extent 3 cannot be split over 4"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(checkDecomposable("D", 0, 1), ShapeError);
  EXPECT_THROW(checkDecomposable("D", -5, 1), ShapeError);
  EXPECT_THROW(checkDecomposable("D", 5, 0), ShapeError);
  EXPECT_THROW(blockBox({4, -1, 4}, {1, 1, 1}, {0, 0, 0}), ShapeError);
  EXPECT_THROW(blockExtent(10, 4, 4), ShapeError);
  EXPECT_THROW(blockOwner(10, 4, 10), ShapeError);
}

}  // namespace
}  // namespace halo3d
