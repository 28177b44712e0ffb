#include <gtest/gtest.h>

#include <algorithm>

#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/HaloWidths.hpp"

namespace halo3d {
namespace {

WindowGeometry along(int k, int s, int p, int dil = 1) {
  return WindowGeometry::cubic(k, s, p, dil);
}

// Widths for dimension 0 of a split of E over `parts`, via the grid rule.
std::array<int, 2> gridWidths(const WindowGeometry& g, index_t e, int parts) {
  const HaloWidths h = haloWidthsForGrid(g, {e, 64, 64}, {parts, 1, 1});
  return {h.lo[0], h.hi[0]};
}

TEST(HaloWidths, WorkedExamples) {
  EXPECT_EQ(gridWidths(along(3, 1, 1), 64, 2), (std::array<int, 2>{1, 1}));
  EXPECT_EQ(gridWidths(along(3, 2, 1), 64, 2), (std::array<int, 2>{1, 0}));  // header's example
  EXPECT_EQ(gridWidths(along(2, 2, 0), 64, 2), (std::array<int, 2>{0, 0}));  // even kernel, aligned
  EXPECT_EQ(gridWidths(along(2, 1, 0), 64, 2),
            (std::array<int, 2>{0, 1}));  // even kernel reaches up
  EXPECT_EQ(gridWidths(along(5, 1, 2), 64, 4), (std::array<int, 2>{2, 2}));
  EXPECT_EQ(gridWidths(along(3, 1, 2, 2), 64, 4), (std::array<int, 2>{2, 2}));  // dilation 2
  EXPECT_EQ(gridWidths(along(3, 1, 0), 10, 3), (std::array<int, 2>{1, 1}));  // no padding, uneven
  EXPECT_EQ(gridWidths(along(1, 1, 0), 9, 3), (std::array<int, 2>{0, 0}));
}

TEST(HaloWidths, NonCubicKernel) {
  WindowGeometry g;
  g.kernel = {3, 1, 5};
  g.padding = {1, 0, 2};
  const HaloWidths h = haloWidthsForGrid(g, {12, 12, 12}, {2, 2, 2});
  EXPECT_EQ(h.lo, (std::array<int, 3>{1, 0, 2}));
  EXPECT_EQ(h.hi, (std::array<int, 3>{1, 0, 2}));
}

// The widths must equal what a tap-by-tap walk of the window reads, for every block.
TEST(HaloWidths, MatchBruteForceTapEnumeration) {
  for (int k = 1; k <= 5; ++k)
    for (int s = 1; s <= 3; ++s)
      for (int dil = 1; dil <= 2; ++dil)
        for (int p = 0; p <= 2; ++p)
          for (index_t e = 6; e <= 17; e += 5)
            for (int parts = 1; parts <= 3; ++parts) {
              const WindowGeometry g = along(k, s, p, dil);
              index_t out = 0;
              try {
                out = g.outputExtent(0, e);
              } catch (const ShapeError&) {
                continue;
              }
              if (out < parts) continue;
              int want_lo = 0, want_hi = 0;
              for (int i = 0; i < parts; ++i) {
                const index_t i0 = blockOffset(e, parts, i), i1 = i0 + blockExtent(e, parts, i);
                const index_t o0 = blockOffset(out, parts, i), o1 = o0 + blockExtent(out, parts, i);
                index_t lo = i0, hi = i1;
                for (index_t o = o0; o < o1; ++o)
                  for (int t = 0; t < k; ++t) {
                    const index_t x = o * s - p + t * dil;
                    lo = std::min(lo, x);
                    hi = std::max(hi, x + 1);
                  }
                want_lo = std::max<int>(want_lo, int(i0 - lo));
                want_hi = std::max<int>(want_hi, int(hi - i1));
              }
              std::array<int, 2> got;
              try {
                got = gridWidths(g, e, parts);
              } catch (const ShapeError&) {
                continue;  // a block whose window misses its own cells: reported, not silently
                           // wrong
              }
              ASSERT_EQ(got, (std::array<int, 2>{want_lo, want_hi}))
                  << "k=" << k << " s=" << s << " dil=" << dil << " p=" << p << " E=" << e
                  << " parts=" << parts;
            }
}

TEST(HaloWidths, OutputExtentFollowsPyTorch) {
  EXPECT_EQ(along(3, 1, 1).outputExtent(0, 64), 64);
  EXPECT_EQ(along(3, 2, 1).outputExtent(0, 64), 32);
  EXPECT_EQ(along(3, 2, 1).outputExtent(0, 7), 4);
  EXPECT_EQ(along(2, 2, 0).outputExtent(0, 7), 3);
  EXPECT_EQ(along(3, 1, 0, 2).outputExtent(0, 9), 5);
}

TEST(HaloWidths, BadGeometryNamesTheValues) {
  try {
    along(7, 1, 0).outputExtent(1, 4);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("extent 4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(along(3, 0, 1).validate(), ShapeError);
  EXPECT_THROW(along(3, 1, -1).validate(), ShapeError);
  EXPECT_THROW(along(3, 1, 1).outputExtent(0, 0), ShapeError);
}

}  // namespace
}  // namespace halo3d
