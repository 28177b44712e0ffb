#include <gtest/gtest.h>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/TensorBlock.hpp"

namespace halo3d {
namespace {

TEST(TensorBlock, GridBlocksTileSamplesAndVolume) {
  const GridShape grid(2, 2, 1, 3);
  const Shape5 shape{5, 3, 9, 4, 7};
  const HaloWidths halo{{1, 0, 2}, {2, 1, 1}};
  std::vector<int> covered(5 * 9 * 4 * 7, 0);
  for (int r = 0; r < grid.size(); ++r) {
    const TensorBlock b = TensorBlock::forGrid(shape, grid, grid.coordsOf(r), halo);
    EXPECT_EQ(b.allocationExtents()[2], b.owned().extent(0) + 3);
    EXPECT_EQ(b.allocationExtents()[4], b.owned().extent(2) + 3);
    for (index_t n = b.sampleBegin(); n < b.sampleEnd(); ++n)
      for (index_t d = b.owned().min(0); d < b.owned().max(0); ++d)
        for (index_t h = b.owned().min(1); h < b.owned().max(1); ++h)
          for (index_t w = b.owned().min(2); w < b.owned().max(2); ++w)
            ++covered[((n * 9 + d) * 4 + h) * 7 + w];
  }
  for (int c : covered)
    ASSERT_EQ(c, 1);
}

TEST(TensorBlock, LocalGlobalMapsAreInverse) {
  const TensorBlock b(Shape5{1, 1, 10, 10, 10}, 0, 1, Box({3, 0, 5}, {6, 10, 9}),
                      HaloWidths{{1, 2, 0}, {0, 1, 3}});
  EXPECT_EQ(b.localOwned(), Box({1, 2, 0}, {4, 12, 4}));
  EXPECT_EQ(b.toLocal({3, 0, 5}), (Extents3{1, 2, 0}));
  for (index_t d = 0; d < 4; ++d)
    for (index_t h = 0; h < 13; ++h)
      for (index_t w = 0; w < 7; ++w)
        EXPECT_EQ(b.toLocal(b.toGlobal({d, h, w})), (Extents3{d, h, w}));
  EXPECT_TRUE(b.atBoundary(1, 0));
  EXPECT_TRUE(b.atBoundary(1, 1));
  EXPECT_FALSE(b.atBoundary(0, 0));
}

TEST(TensorBlock, OwnedExtentSmallerThanHaloIsRejectedWithValues) {
  try {
    TensorBlock::forGrid({1, 1, 8, 8, 8}, GridShape(1, 4, 1, 1), {0, 0, 0, 0},
                         HaloWidths::uniform(3));
    FAIL();
  } catch (const ShapeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("owned extent 2 along D"), std::string::npos) << m;
    EXPECT_NE(m.find("halo width 3"), std::string::npos) << m;
  }
}

TEST(TensorBlock, NonPositiveExtentsAreRejected) {
  EXPECT_THROW(TensorBlock::whole({1, 0, 4, 4, 4}), ShapeError);
  EXPECT_THROW(TensorBlock::whole({1, 1, -4, 4, 4}), ShapeError);
  EXPECT_THROW(TensorBlock::forGrid({1, 1, 4, 4, 0}, GridShape(1, 1, 1, 1), {}, {}), ShapeError);
  EXPECT_THROW(TensorBlock::forGrid({1, 1, 3, 4, 4}, GridShape(1, 4, 1, 1), {}, {}), ShapeError);
}

TEST(HaloTensor, OwnedViewIsTheInteriorOfOneAllocation) {
  const TensorBlock b = TensorBlock::whole({2, 3, 4, 5, 6}, HaloWidths{{1, 2, 0}, {2, 0, 1}});
  HaloTensor<double, Kokkos::HostSpace> t("t", b);
  EXPECT_EQ(t.view().extent(2), 7u);
  EXPECT_EQ(t.view().extent(3), 7u);
  EXPECT_EQ(t.view().extent(4), 7u);
  auto o = t.owned();
  EXPECT_EQ(o.extent(2), 4u);
  EXPECT_EQ(o.extent(4), 6u);
  o(1, 2, 0, 0, 0) = 5.0;
  EXPECT_EQ(t.view()(1, 2, 1, 2, 0), 5.0);
  EXPECT_EQ(&o(0, 0, 0, 0, 0), &t.view()(0, 0, 1, 2, 0));
}

}  // namespace
}  // namespace halo3d
