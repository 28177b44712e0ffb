#include <gtest/gtest.h>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/IndexSpace.hpp"

namespace halo3d {
namespace {

TEST(IndexSpace, HalfOpenExtentsAndContainment) {
  const Box b({1, 2, 3}, {4, 4, 8});
  EXPECT_EQ(b.extents(), (Extents3{3, 2, 5}));
  EXPECT_EQ(b.size(), 30);
  EXPECT_TRUE(b.contains({1, 2, 3}));
  EXPECT_FALSE(b.contains({4, 2, 3}));  // max is excluded
  EXPECT_TRUE(b.contains(Box({2, 2, 3}, {4, 3, 8})));
  EXPECT_FALSE(b.contains(Box({0, 2, 3}, {4, 3, 8})));
  EXPECT_TRUE(b.contains(Box()));  // empty is everywhere
  EXPECT_TRUE(Box({1, 1, 1}, {1, 5, 5}).empty());
}

TEST(IndexSpace, IntersectShiftGrow) {
  const Box a({0, 0, 0}, {4, 4, 4}), b({2, -1, 3}, {6, 2, 9});
  EXPECT_EQ(intersect(a, b), Box({2, 0, 3}, {4, 2, 4}));
  EXPECT_TRUE(intersect(a, Box({4, 0, 0}, {5, 1, 1})).empty());
  EXPECT_EQ(a.shifted({1, 2, 3}), Box({1, 2, 3}, {5, 6, 7}));
  EXPECT_EQ(a.grown({1, 0, 2}, {0, 3, 1}), Box({-1, 0, -2}, {4, 7, 5}));
  EXPECT_EQ(a.withRange(1, 2, 3), Box({0, 2, 0}, {4, 3, 4}));
}

TEST(IndexSpace, RejectsInvertedBounds) {
  EXPECT_THROW(Box({0, 3, 0}, {1, 2, 1}), ShapeError);
}

TEST(IndexSpace, PolicyVisitsEveryIndexOnce) {
  const Box b({1, 0, 2}, {3, 4, 5});
  Kokkos::View<int***, Kokkos::HostSpace> hits("hits", 4, 4, 6);
  Kokkos::parallel_for(makePolicy(Kokkos::DefaultHostExecutionSpace(), b),
                       [=](index_t i, index_t j, index_t k) { hits(i, j, k) += 1; });
  Kokkos::fence();
  for (index_t i = 0; i < 4; ++i)
    for (index_t j = 0; j < 4; ++j)
      for (index_t k = 0; k < 6; ++k)
        EXPECT_EQ(hits(i, j, k), b.contains({i, j, k}) ? 1 : 0);
}

}  // namespace
}  // namespace halo3d
