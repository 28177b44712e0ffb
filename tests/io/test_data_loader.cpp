// The data loader on every grid of the communicator's size: batches are the global mini-batches of
// the schedule split over the sample groups, tiles and targets/labels are right, one epoch's
// hyperslabs cover each visited sample exactly once, the data store serves later epochs (across
// groups too) with the same values, prefetching changes nothing, and seek() resumes.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "IoTestSupport.hpp"
#include "halo3d/comm/Allreduce.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/io/DataLoader.hpp"
#include "support/Cells.hpp"
#include "support/GridFactorisations.hpp"

namespace halo3d {
namespace {

using testing::allGrids;
using testing::worldSize;
using Memory = Kokkos::DefaultExecutionSpace::memory_space;

// Wrong owned or ghost cells of every sample of a batch, and wrong targets or labels.
int checkBatch(const Batch<Memory>& b, SampleKind kind) {
  int wrong = 0;
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.input.view());
  const TensorBlock& blk = b.input.block();
  EXPECT_EQ(blk.localSamples(), index_t(b.sample_ids.size()));
  for (index_t n = 0; n < blk.localSamples(); ++n) {
    const index_t id = b.sample_ids[std::size_t(n)];
    const bool int16 = testing::isInt16Sample(id);
    testing::forEachAllocationCell(
        blk, [&](index_t c, index_t d, index_t hh, index_t w, const Extents3& g) {
          const float expected =
              blk.owned().contains(g) ? testing::encode(id, c, g[0], g[1], g[2], int16) : 0.f;
          wrong += h(n, c, d, hh, w) != expected;
        });
    if (kind == SampleKind::CosmoFlow) {
      for (index_t t = 0; t < 4; ++t)
        wrong += b.targets.at(std::size_t(n * 4 + t)) != testing::targetOf(id, t);
    } else {
      auto l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.labels.view());
      const Box& o = b.labels.block().owned();
      for (index_t d = o.min(0); d < o.max(0); ++d)
        for (index_t hh = o.min(1); hh < o.max(1); ++hh)
          for (index_t w = o.min(2); w < o.max(2); ++w)
            wrong += l(n, 0, d - o.min(0), hh - o.min(1), w - o.min(2)) !=
                     testing::labelOf(id, d, hh, w);
    }
  }
  return wrong;
}

// Every rank's values, concatenated in rank order.
std::vector<index_t> allgatherIds(const std::vector<index_t>& mine, MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const int count = int(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[std::size_t(r)] = total;
    total += counts[std::size_t(r)];
  }
  std::vector<index_t> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(mine.data(), count, MPI_INT64_T, all.data(), counts.data(), displs.data(),
                 MPI_INT64_T, comm);
  return all;
}

// The global batch as the ranks of spatial position 0 hold it, gathered in group order.
std::vector<index_t> gatheredBatch(const Batch<Memory>& b, const ProcessGrid& grid) {
  return allgatherIds(grid.spatialRank() == 0 ? b.sample_ids : std::vector<index_t>(), grid.comm());
}

// Every rank's recorded input blocks (the owned boxes the reads delivered), painted into per-sample
// voxel counts.
std::map<index_t, std::vector<int>> paintedCoverage(const ReadStats& stats, const Extents3& e) {
  std::vector<index_t> mine;
  for (const HyperslabRecord& r : stats.records) {
    if (r.labels) continue;
    mine.insert(mine.end(), {r.sample, r.owned.min(0), r.owned.min(1), r.owned.min(2),
                             r.owned.max(0), r.owned.max(1), r.owned.max(2)});
  }
  const std::vector<index_t> all = allgatherIds(mine, MPI_COMM_WORLD);
  std::map<index_t, std::vector<int>> painted;
  for (std::size_t i = 0; i < all.size(); i += 7) {
    auto& v = painted[all[i]];
    v.resize(std::size_t(e[0] * e[1] * e[2]), 0);
    for (index_t d = all[i + 1]; d < all[i + 4]; ++d)
      for (index_t h = all[i + 2]; h < all[i + 5]; ++h)
        for (index_t w = all[i + 3]; w < all[i + 6]; ++w)
          ++v[std::size_t((d * e[1] + h) * e[2] + w)];
  }
  return painted;
}

DataLoaderOptions optionsFor(const GridShape& g, SampleKind kind) {
  DataLoaderOptions o;
  o.kind = kind;
  o.batch_size = std::max(g.n(), 3);
  o.seed = 1234;
  o.halo = HaloWidths::uniform(1);
  return o;
}

TEST(DataLoader, EpochIsTheGlobalScheduleAndCoversEverySampleOnce) {
  testing::StandardCatalog fx(SampleKind::CosmoFlow, 2);
  const index_t S = fx.catalog.size();
  for (const GridShape& shape : allGrids(worldSize())) {
    SCOPED_TRACE("grid " + shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    DataLoaderOptions opt = optionsFor(shape, SampleKind::CosmoFlow);
    opt.read.record_hyperslabs = true;
    opt.prefetch =
        false;  // a prefetch would read the next epoch's first batch before the count below
    if (opt.batch_size > S) {
      // Fewer samples than sample groups: no batch can be made, and every rank says so.
      EXPECT_THROW(DataLoader<Memory>(grid, fx.catalog, opt), InputError);
      continue;
    }
    DataLoader<Memory> loader(grid, fx.catalog, opt);
    // The reference: the same seed on a one-group schedule (membership of full batches is
    // grid-independent).
    const EpochSchedule one(S, opt.batch_size, 1, opt.seed);
    const std::vector<index_t> order = one.permutation(0);
    std::vector<index_t> visited;
    for (index_t step = 0; step < loader.stepsPerEpoch(); ++step) {
      const Batch<Memory> b = loader.next();
      EXPECT_EQ(b.epoch, 0);
      EXPECT_EQ(b.step, step);
      EXPECT_EQ(checkBatch(b, SampleKind::CosmoFlow), 0);
      const auto [n0, n1] = loader.schedule().groupRange(b.global_batch, grid.coords().n);
      EXPECT_EQ(index_t(b.sample_ids.size()), n1 - n0);
      EXPECT_EQ(b.input.block(), grid.blockOf(fx.catalog.batchShape(b.global_batch), opt.halo));
      const std::vector<index_t> global = gatheredBatch(b, grid);
      const std::vector<index_t> expected(order.begin() + step * opt.batch_size,
                                          order.begin() + step * opt.batch_size + b.global_batch);
      EXPECT_EQ(global, expected);
      visited.insert(visited.end(), global.begin(), global.end());
    }
    const auto painted = paintedCoverage(loader.readStats(), fx.extents);
    EXPECT_EQ(painted.size(), visited.size());
    for (index_t id : visited) {
      ASSERT_TRUE(painted.count(id)) << "sample " << id;
      const auto& v = painted.at(id);
      EXPECT_EQ(std::count(v.begin(), v.end(), 1), index_t(v.size()))
          << "sample " << id << " not covered once";
    }
  }
}

TEST(DataLoader, DataStoreServesLaterEpochsAcrossGroups) {
  testing::StandardCatalog fx(SampleKind::CosmoFlow, 2);
  // Each grid runs two of the four (prefetch, budget) combinations, so that every combination meets
  // several grids while the 8-rank run stays short.
  const std::pair<bool, index_t> combos[] = {{false, 100}, {true, 2}, {true, 100}, {false, 2}};
  const auto grids = allGrids(worldSize());
  for (std::size_t i = 0; i < grids.size(); ++i) {
    const GridShape& shape = grids[i];
    if (optionsFor(shape, SampleKind::CosmoFlow).batch_size > fx.catalog.size()) continue;
    for (std::size_t j : {i % 4, (i + 1) % 4}) {
      const auto [prefetch, budget_samples] = combos[j];
      SCOPED_TRACE("grid " + shape.str() + " prefetch " + std::to_string(prefetch) + " budget " +
                   std::to_string(budget_samples));
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      DataLoaderOptions opt = optionsFor(shape, SampleKind::CosmoFlow);
      opt.prefetch = prefetch;
      opt.read.record_hyperslabs = true;
      // The largest tile is rank 0's (the first block of an uneven split).
      const TensorBlock largest =
          TensorBlock::forGrid(fx.catalog.batchShape(opt.batch_size), shape, {}, {});
      const std::size_t tile_bytes =
          std::size_t(largest.owned().size() * 2) * sizeof(float) + 4 * sizeof(float);
      opt.store_budget_bytes = std::size_t(budget_samples) * tile_bytes;
      DataLoader<Memory> loader(grid, fx.catalog, opt);
      EXPECT_EQ(loader.prefetching(), prefetch);
      EXPECT_EQ(loader.storeCapacity(), budget_samples);
      const index_t steps = loader.stepsPerEpoch();
      std::set<index_t> visited;
      for (index_t s = 0; s < steps; ++s) {
        const Batch<Memory> b = loader.next();
        EXPECT_EQ(checkBatch(b, SampleKind::CosmoFlow), 0);
        for (index_t id : gatheredBatch(b, grid))
          visited.insert(id);
      }
      const ReadStats first = loader.readStats();
      EXPECT_GT(first.bytes, 0u);
      EXPECT_LE(index_t(loader.storeSize()), budget_samples);
      for (index_t s = 0; s < 2 * steps; ++s)
        EXPECT_EQ(checkBatch(loader.next(), SampleKind::CosmoFlow), 0);
      const ReadStats later = loader.readStats();
      // Later epochs read from file again only samples the first epoch visited but could not keep:
      // none if every group had room for all it read (a sample the first epoch skipped, in a
      // dropped partial batch, is read once).
      int rereads = 0;
      for (std::size_t r = first.records.size(); r < later.records.size(); ++r)
        rereads += visited.count(later.records[r].sample) > 0;
      rereads = sumOver(rereads, MPI_COMM_WORLD);
      index_t most_read = 0;
      for (int g = 0; g < shape.n(); ++g) {
        index_t n = 0;
        for (index_t s = 0; s < steps; ++s) {
          const auto [k0, k1] = loader.schedule().groupRange(loader.schedule().batchSizeOf(s), g);
          n += k1 - k0;
        }
        most_read = std::max(most_read, n);
      }
      if (most_read <= budget_samples)
        EXPECT_EQ(rereads, 0);
      else
        EXPECT_GT(rereads, 0);
    }
  }
}

TEST(DataLoader, UNetLabelsAndPrefetchMatchSynchronous) {
  testing::StandardCatalog fx(SampleKind::UNet, 1);
  for (const GridShape& shape : allGrids(worldSize())) {
    if (optionsFor(shape, SampleKind::UNet).batch_size > fx.catalog.size()) continue;
    SCOPED_TRACE("grid " + shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    DataLoaderOptions opt = optionsFor(shape, SampleKind::UNet);
    opt.prefetch = true;
    DataLoader<Memory> fast(grid, fx.catalog, opt);
    opt.prefetch = false;
    opt.read.mode = IoMode::Collective;
    DataLoader<Memory> slow(grid, fx.catalog, opt);
    // Two steps, the second read while the first was in use (prefetched) on one loader and not the
    // other.
    for (index_t s = 0; s < 2; ++s) {
      const Batch<Memory> a = fast.next(), b = slow.next();
      EXPECT_EQ(a.sample_ids, b.sample_ids);
      EXPECT_EQ(a.global_step, b.global_step);
      EXPECT_EQ(checkBatch(a, SampleKind::UNet), 0);
      EXPECT_EQ(checkBatch(b, SampleKind::UNet), 0);
    }
  }
}

TEST(DataLoader, ReusedBuffersNeverTouchHeldBatchesAndComeBackWithZeroGhosts) {
  testing::StandardCatalog fx(SampleKind::CosmoFlow, 2);
  const GridShape shape(1, 1, worldSize(), 1);
  ProcessGrid grid(MPI_COMM_WORLD, shape);
  DataLoaderOptions opt = optionsFor(shape, SampleKind::CosmoFlow);
  opt.prefetch = true;
  DataLoader<Memory> loader(grid, fx.catalog, opt);
  std::vector<Batch<Memory>> held;
  for (int s = 0; s < 6; ++s) {
    Batch<Memory> b = loader.next();
    EXPECT_EQ(checkBatch(b, SampleKind::CosmoFlow), 0) << "step " << s;
    // Every batch still held is intact; the one let go had its ghosts (and cells) scribbled over.
    for (const Batch<Memory>& h : held)
      EXPECT_EQ(checkBatch(h, SampleKind::CosmoFlow), 0) << "held at step " << s;
    if (s % 2 == 0) {
      held.push_back(std::move(b));
    } else {
      Kokkos::deep_copy(b.input.view(), 99.0f);
    }
  }
}

// A file's first open costs more than its read (HyperslabReader::openAhead), so the loader opens
// the files of its first samples before the first step: every file of the catalog here, since each
// rank of a spatial group reads every sample. The steps then open none; at most open_files are
// opened ahead; collective reads open nothing ahead.
TEST(DataLoader, OpensItsFirstFilesBeforeTheFirstStep) {
  testing::StandardCatalog fx(SampleKind::CosmoFlow, 2);
  const std::uint64_t files = std::uint64_t(fx.catalog.fileCount());
  ASSERT_GT(files, 2u);
  const GridShape shape(1, 1, worldSize(), 1);
  ProcessGrid grid(MPI_COMM_WORLD, shape);
  for (const bool prefetch : {false, true}) {
    SCOPED_TRACE(prefetch ? "prefetch" : "no prefetch");
    DataLoaderOptions opt = optionsFor(shape, SampleKind::CosmoFlow);
    opt.prefetch = prefetch;
    DataLoader<Memory> loader(grid, fx.catalog, opt);
    const ReadStats before = loader.readStats();
    EXPECT_EQ(before.file_opens, files);
    EXPECT_EQ(before.samples, 0u);
    for (index_t s = 0; s < 2 * loader.stepsPerEpoch(); ++s)
      EXPECT_EQ(checkBatch(loader.next(), SampleKind::CosmoFlow), 0) << "step " << s;
    const ReadStats after = loader.readStats();
    EXPECT_GT(after.samples, 0u);
    EXPECT_EQ(after.file_opens, files) << "the steps opened files";
  }
  DataLoaderOptions two = optionsFor(shape, SampleKind::CosmoFlow);
  two.read.open_files = 2;
  EXPECT_EQ(DataLoader<Memory>(grid, fx.catalog, two).readStats().file_opens, 2u);
  DataLoaderOptions collective = optionsFor(shape, SampleKind::CosmoFlow);
  collective.read.mode = IoMode::Collective;
  EXPECT_EQ(DataLoader<Memory>(grid, fx.catalog, collective).readStats().file_opens, 0u);
}

// A file that cannot be opened ahead (removed after the catalog was made) is not the loader's
// construction's error: the read that needs it fails, on every rank.
TEST(DataLoader, AFileGoneBeforeItsFirstReadFailsThatReadEverywhere) {
  testing::StandardCatalog fx(SampleKind::CosmoFlow, 2);
  const GridShape shape(1, 1, worldSize(), 1);
  ProcessGrid grid(MPI_COMM_WORLD, shape);
  DataLoaderOptions opt = optionsFor(shape, SampleKind::CosmoFlow);
  opt.prefetch = false;
  MPI_Barrier(MPI_COMM_WORLD);
  if (grid.isRoot()) std::filesystem::remove(fx.catalog.file(0).path);
  MPI_Barrier(MPI_COMM_WORLD);
  DataLoader<Memory> loader(grid, fx.catalog, opt);
  EXPECT_LT(loader.readStats().file_opens, std::uint64_t(fx.catalog.fileCount()));
  bool failed = false;
  for (index_t s = 0; s < loader.stepsPerEpoch() && !failed; ++s) {
    try {
      loader.next();
    } catch (const IoError&) {
      failed = true;
    }
  }
  EXPECT_TRUE(failed) << "no step read the removed file";
}

TEST(DataLoader, SeekResumesWhereAFreshRunWouldBe) {
  testing::StandardCatalog fx(SampleKind::CosmoFlow, 1);
  const GridShape shape(1, 1, 1, worldSize());
  ProcessGrid grid(MPI_COMM_WORLD, shape);
  DataLoaderOptions opt = optionsFor(shape, SampleKind::CosmoFlow);
  DataLoader<Memory> run(grid, fx.catalog, opt);
  std::vector<std::vector<index_t>> seen;
  for (int s = 0; s < 5; ++s)
    seen.push_back(run.next().sample_ids);
  opt.first_epoch = 1;
  opt.first_step = 0;
  DataLoader<Memory> resumed(grid, fx.catalog, opt);
  const index_t steps = resumed.stepsPerEpoch();
  ASSERT_LT(steps, 5);
  EXPECT_EQ(resumed.next().sample_ids, seen[std::size_t(steps)]);
  resumed.seek(0, 1);
  const Batch<Memory> b = resumed.next();
  EXPECT_EQ(b.sample_ids, seen[1]);
  EXPECT_EQ(b.global_step, 1);
}

}  // namespace
}  // namespace halo3d
