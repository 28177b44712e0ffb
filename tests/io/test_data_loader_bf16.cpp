// bf16 batches (DataLoaderOptions::input) on every grid of the communicator's size: each batch is
// the float batch of the same step rounded once to nearest even, cell for cell and ghosts included,
// with the same samples, targets and labels; with prefetch on and off, the data store on and off
// (it keeps bf16 then, and serves the same bits in later epochs, across groups too), an input
// transform, independent reads staged in slabs of one D plane and collective reads. The bf16 batch
// holds no float tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "IoTestSupport.hpp"
#include "halo3d/comm/Allreduce.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/io/DataLoader.hpp"
#include "support/GridFactorisations.hpp"

namespace halo3d {
namespace {

using testing::allGrids;
using testing::worldSize;
using Memory = Kokkos::DefaultExecutionSpace::memory_space;

struct Compared {
  long cells = 0;    // allocation cells compared
  long wrong = 0;    // bf16 cells that are not the float cell rounded once (bits)
  long rounded = 0;  // owned cells whose float value bf16 does not hold exactly
};

// Compares a bf16 batch with the float batch of the same step.
Compared compare(const Batch<Memory>& f, const Batch<Memory>& b) {
  Compared r;
  EXPECT_TRUE(f.input.isAllocated());
  EXPECT_FALSE(f.input_bf16.isAllocated());
  EXPECT_FALSE(b.input.isAllocated());
  EXPECT_TRUE(b.input_bf16.isAllocated());
  EXPECT_EQ(b.input_bf16.block(), f.input.block());
  EXPECT_EQ(b.sample_ids, f.sample_ids);
  EXPECT_EQ(b.targets, f.targets);
  EXPECT_EQ(b.global_step, f.global_step);
  EXPECT_EQ(b.global_batch, f.global_batch);
  EXPECT_EQ(b.labels.isAllocated(), f.labels.isAllocated());
  if (f.labels.isAllocated()) {
    auto lf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.labels.view());
    auto lb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.labels.view());
    EXPECT_EQ(lf.size(), lb.size());
    EXPECT_EQ(std::memcmp(lf.data(), lb.data(), lf.size() * sizeof(std::int32_t)), 0);
  }
  if (!b.input_bf16.isAllocated() || !f.input.isAllocated()) return r;
  auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f.input.view());
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.input_bf16.view());
  const float* pf = hf.data();
  const bf16* pb = hb.data();
  for (std::size_t i = 0; i < hf.size(); ++i) {
    ++r.cells;
    r.wrong += pb[i] != bf16(pf[i]);
    r.rounded += float(bf16(pf[i])) != pf[i];
  }
  return r;
}

DataLoaderOptions optionsFor(const GridShape& g, SampleKind kind) {
  DataLoaderOptions o;
  o.kind = kind;
  o.batch_size = std::max(g.n(), 3);
  o.seed = 99;
  o.halo = HaloWidths::uniform(1);
  return o;
}

// One configuration of the loader besides the grid.
struct Variant {
  bool prefetch;
  bool store;            // a data store with room for every sample
  bool transform;        // log1p, then a constant factor
  bool one_plane_slabs;  // stage the bf16 reads one D plane at a time (independent reads only)
  bool collective;       // IoMode::Collective: the ranks' reads must match on uneven splits too
};

void expectRoundedBatches(SampleKind kind, index_t channels) {
  testing::StandardCatalog fx(kind, channels);
  const Variant variants[] = {{true, false, false, true, true},
                              {false, true, true, false, false},
                              {true, true, false, true, false},
                              {false, false, true, false, true}};
  const auto grids = allGrids(worldSize());
  long rounded = 0;
  for (std::size_t i = 0; i < grids.size(); ++i) {
    const GridShape& shape = grids[i];
    if (optionsFor(shape, kind).batch_size > fx.catalog.size()) continue;
    // Each grid runs two of the variants (one with collective reads), so that every variant meets
    // several grids.
    for (std::size_t j : {i % 4, (i + 2) % 4}) {
      const Variant v = variants[j];
      SCOPED_TRACE(concat("grid ", shape.str(), " prefetch ", v.prefetch, " store ", v.store,
                          " transform ", v.transform, " one-plane slabs ", v.one_plane_slabs,
                          " collective ", v.collective));
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      DataLoaderOptions opt = optionsFor(shape, kind);
      opt.prefetch = v.prefetch;
      opt.store_budget_bytes = v.store ? std::size_t(1) << 24 : 0;
      if (v.transform) opt.read.transform = InputTransform::parse("log1p+constant:0.37");
      opt.read.record_hyperslabs = true;
      if (v.collective) opt.read.mode = IoMode::Collective;
      DataLoader<Memory> f(grid, fx.catalog, opt);
      opt.input = BatchInput::BFloat16;
      if (v.one_plane_slabs) opt.read.bf16_staging_bytes = 1;
      DataLoader<Memory> b(grid, fx.catalog, opt);
      // Two epochs: the second comes from the store when it is on.
      for (index_t s = 0; s < 2 * f.stepsPerEpoch(); ++s) {
        const Batch<Memory> bf = f.next(), bb = b.next();
        const Compared c = compare(bf, bb);
        EXPECT_GT(c.cells, 0) << "step " << s;
        EXPECT_EQ(c.wrong, 0) << "step " << s;
        rounded += c.rounded;
      }
      const ReadStats rf = f.readStats(), rb = b.readStats();
      EXPECT_EQ(rb.samples, rf.samples);
      EXPECT_EQ(rb.bytes, rf.bytes);
      // Slabs of one plane: one input read per D plane of each sample's block; collective reads are
      // whole.
      std::size_t input_reads = 0, planes = 0;
      for (const HyperslabRecord& r : rb.records)
        if (!r.labels) {
          ++input_reads;
          planes += std::size_t(r.box.extent(0));
        }
      if (v.one_plane_slabs && !v.collective)
        EXPECT_EQ(input_reads, planes);
      else
        EXPECT_EQ(input_reads, std::size_t(rb.samples));
      EXPECT_EQ(b.storeSize(), f.storeSize());
      if (v.store && f.storeSize() > 0) {
        EXPECT_LT(b.storeBytes(), f.storeBytes());
      } else {
        EXPECT_EQ(b.storeBytes(), f.storeBytes());
      }
    }
  }
  // The test means something only if rounding changed values (the files' values need more than
  // bf16's 8 significant bits).
  EXPECT_GT(sumOver(rounded, MPI_COMM_WORLD), 0);
}

TEST(DataLoaderBf16, CosmoFlowBatchesAreTheFloatBatchesRoundedOnce) {
  expectRoundedBatches(SampleKind::CosmoFlow, 2);
}

TEST(DataLoaderBf16, UNetBatchesAreTheFloatBatchesRoundedOnce) {
  expectRoundedBatches(SampleKind::UNet, 1);
}

// The reader's bf16 tiles directly: every read method and slab size gives the float tile rounded
// once, owned cells only (the rest of the allocation stays untouched).
TEST(HyperslabReaderBf16, TilesAreTheFloatTilesRoundedForEverySlabSize) {
  testing::StandardCatalog fx(SampleKind::CosmoFlow, 3);
  const Extents3 e = fx.extents;
  const Box owned({1, 0, 2}, {e[0] - 1, e[1], e[2]});
  const Shape5 a{2, 3, e[0], e[1] + 1, e[2] + 2};
  const Box local = owned.shifted({0, 1, 0});
  const std::size_t n = std::size_t(a[0] * a[1] * a[2] * a[3] * a[4]);
  for (ReadMethod method : {ReadMethod::Hyperslab, ReadMethod::WholeSample})
    for (std::size_t staging : {std::size_t(1), std::size_t(100), std::size_t(1) << 20}) {
      SCOPED_TRACE(
          concat("whole sample ", method == ReadMethod::WholeSample, " staging ", staging));
      ReadOptions o;
      o.method = method;
      o.transform = InputTransform::parse("log1p");
      o.bf16_staging_bytes = staging;
      o.record_hyperslabs = true;
      auto reader = HyperslabReader::open(fx.catalog, MPI_COMM_SELF, o);
      for (index_t id = 0; id < fx.catalog.size(); ++id) {
        std::vector<float> f(n, -7.0f);
        std::vector<bf16> b(n, bf16(-7.0f));
        reader->readInput(id, owned, HostTile<float>{f.data(), a, 1, local});
        reader->resetStats();
        reader->readInput(id, owned, HostTile<bf16>{b.data(), a, 1, local});
        long wrong = 0, written = 0;
        for (std::size_t i = 0; i < n; ++i) {
          wrong += b[i] != bf16(f[i]);
          written += f[i] != -7.0f;
        }
        EXPECT_EQ(wrong, 0) << "sample " << id;
        EXPECT_EQ(written, a[1] * owned.size()) << "sample " << id;
        // The slabs tile the read box along D and deliver each owned cell once.
        const std::vector<HyperslabRecord>& records = reader->stats().records;
        const index_t depth = method == ReadMethod::WholeSample ? e[0] : owned.extent(0);
        const std::size_t plane_bytes =
            std::size_t(a[1] * e[1] * e[2]) * (testing::isInt16Sample(id) ? 2 : 4);
        const index_t planes = std::clamp(index_t(staging / plane_bytes), index_t(1), depth);
        EXPECT_EQ(index_t(records.size()), (depth + planes - 1) / planes) << "sample " << id;
        index_t covered = 0, delivered = 0;
        for (const HyperslabRecord& r : records) {
          covered += r.box.extent(0);
          delivered += r.owned.size();
        }
        EXPECT_EQ(covered, depth);
        EXPECT_EQ(delivered, owned.size());
        EXPECT_EQ(reader->stats().samples, 1u);
      }
      EXPECT_EQ(reader->takeProblem(), nullptr);
    }
}

}  // namespace
}  // namespace halo3d
