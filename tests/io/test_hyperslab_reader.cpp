// Hyperslab reads of single samples (SampleReader) on every grid of the communicator's size, uneven
// splits included: every rank's owned tile equals the matching slice of the whole sample, ghosts
// stay zero, int16 is converted, targets and labels arrive, and each rank reads exactly its own
// block.
#include <gtest/gtest.h>

#include "IoTestSupport.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/io/SampleReader.hpp"
#include "support/Cells.hpp"
#include "support/GridFactorisations.hpp"

namespace halo3d {
namespace {

using testing::allGrids;
using testing::encode;
using testing::worldSize;
using Memory = Kokkos::DefaultExecutionSpace::memory_space;

// Wrong cells of a sample's tile (owned cells against the encoding, ghosts against zero).
int checkTile(const HaloTensor<float, Memory>& t, index_t slot, index_t id, bool int16) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.view());
  int wrong = 0;
  testing::forEachAllocationCell(
      t.block(), [&](index_t c, index_t d, index_t hh, index_t w, const Extents3& g) {
        const float expected =
            t.block().owned().contains(g) ? encode(id, c, g[0], g[1], g[2], int16) : 0.0f;
        if (h(slot, c, d, hh, w) != expected && ++wrong <= 3)
          ADD_FAILURE() << "sample " << id << " c " << c << " global (" << g[0] << "," << g[1]
                        << "," << g[2] << "): " << h(slot, c, d, hh, w) << " != " << expected;
      });
  return wrong;
}

struct Case {
  const char* name;
  IoMode mode;
  ReadMethod method;
  HaloWidths halo;
};

const Case kCases[] = {
    {"collective_halo1", IoMode::Collective, ReadMethod::Hyperslab, HaloWidths::uniform(1)},
    {"independent_asymmetric", IoMode::Independent, ReadMethod::Hyperslab,
     HaloWidths{{1, 0, 1}, {0, 1, 1}}},
    {"whole_sample_nohalo", IoMode::Independent, ReadMethod::WholeSample, HaloWidths{}},
};

TEST(HyperslabReader, CosmoFlowTilesOnEveryGrid) {
  const int P = worldSize();
  const index_t C = 3;
  const testing::StandardCatalog files(SampleKind::CosmoFlow, C);
  const SampleCatalog& catalog = files.catalog;
  ASSERT_EQ(catalog.size(), 7);
  for (const Case& cs : kCases)
    for (const GridShape& shape : allGrids(P)) {
      SCOPED_TRACE(std::string(cs.name) + " grid " + shape.str());
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      ReadOptions opt;
      opt.mode = cs.mode;
      opt.method = cs.method;
      opt.record_hyperslabs = true;
      SampleReader<Memory> reader(grid, catalog, opt, cs.halo);
      for (index_t j = 0; j < catalog.size(); j += 2) {
        const index_t id = (j + grid.coords().n) % catalog.size();
        const Sample<Memory> s = reader.read(id);
        EXPECT_EQ(checkTile(s.input, 0, id, testing::isInt16Sample(id)), 0);
        ASSERT_EQ(s.targets.size(), 4u);
        for (index_t t = 0; t < 4; ++t)
          EXPECT_EQ(s.targets[std::size_t(t)], testing::targetOf(id, t));
      }
      // Each rank read its own block (or, for WholeSample, the whole volume) and nothing else;
      // a block split along W reads whole rows (rows of 5 cells are far below
      // HyperslabReader::kMinRunBytes).
      const Box owned = reader.block().owned();
      const index_t w = files.extents[2];
      const Box rows = owned.extent(2) < w ? owned.withRange(2, 0, w) : owned;
      const Box expected =
          cs.method == ReadMethod::Hyperslab ? rows : Box::fromExtents(files.extents);
      for (const HyperslabRecord& r : reader.stats().records) {
        EXPECT_EQ(r.box, expected);
        EXPECT_EQ(r.owned, owned);
      }
    }
}

TEST(HyperslabReader, UNetLabelsAndBytesOnEveryGrid) {
  const int P = worldSize();
  const index_t C = 2;
  const testing::StandardCatalog files(SampleKind::UNet, C);
  const SampleCatalog& catalog = files.catalog;
  for (const GridShape& shape : allGrids(P)) {
    SCOPED_TRACE("grid " + shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    SampleReader<Memory> reader(grid, catalog, ReadOptions{}, HaloWidths::uniform(1));
    const index_t id = (3 + grid.coords().n) % catalog.size();
    const Sample<Memory> s = reader.read(id);
    const bool int16 = testing::isInt16Sample(id);
    EXPECT_EQ(checkTile(s.input, 0, id, int16), 0);
    EXPECT_TRUE(s.targets.empty());
    // Labels: same owned block, no ghosts.
    ASSERT_EQ(s.labels.block().owned(), s.input.block().owned());
    EXPECT_TRUE(s.labels.block().halo().isZero());
    auto l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.labels.view());
    const Box& o = s.labels.block().owned();
    int wrong = 0;
    for (index_t d = o.min(0); d < o.max(0); ++d)
      for (index_t h = o.min(1); h < o.max(1); ++h)
        for (index_t w = o.min(2); w < o.max(2); ++w)
          wrong +=
              l(0, 0, d - o.min(0), h - o.min(1), w - o.min(2)) != testing::labelOf(id, d, h, w);
    EXPECT_EQ(wrong, 0);
    // Bytes: the owned block of the input in its file type, plus the uint8 labels of the block,
    // over whole rows when the block is split along W (as in the test above).
    const index_t w_full = files.extents[2];
    const Box read = o.extent(2) < w_full ? o.withRange(2, 0, w_full) : o;
    const std::uint64_t expected =
        std::uint64_t(read.size()) * (std::uint64_t(C) * (int16 ? 2 : 4) + 1);
    EXPECT_EQ(reader.stats().bytes, expected);
    EXPECT_EQ(reader.stats().hyperslabs, 2u);
  }
}

TEST(HyperslabReader, InputTransformMatchesFormula) {
  const int P = worldSize();
  const testing::StandardCatalog files(SampleKind::CosmoFlow, 2);
  const SampleCatalog& catalog = files.catalog;
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, 1, 1, P));
  ReadOptions opt;
  opt.transform = InputTransform::parse("log1p+meanstd:1,2:0.5,4");
  SampleReader<Memory> reader(grid, catalog, opt);
  const index_t id = 3;  // int16
  const Sample<Memory> s = reader.read(id);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.input.view());
  const Box& o = s.input.block().owned();
  const float mean[] = {1, 2}, stdev[] = {0.5f, 4};
  for (index_t c = 0; c < 2; ++c)
    for (index_t w = o.min(2); w < o.max(2); ++w) {
      const float x = testing::encode(id, c, 1, 2, w, true);
      const float expected = (std::log1p(x) - mean[c]) / stdev[c];
      EXPECT_NEAR(h(0, c, 1, 2, w - o.min(2)), expected, 1e-5f * std::fabs(expected) + 1e-6f);
    }
}

}  // namespace
}  // namespace halo3d
