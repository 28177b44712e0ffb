// Synthetic data sets written under MPI (files split over the ranks) hold exactly the samples a
// single process would generate, whatever the grouping into files; the CosmoFlow converter turns
// channels-last files into halo3d's layout; errors reach every rank.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "IoTestSupport.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/io/SampleReader.hpp"
#include "halo3d/io/synthetic/SyntheticDataset.hpp"

namespace halo3d {
namespace {

using testing::worldRank;
using testing::worldSize;
using Memory = Kokkos::DefaultExecutionSpace::memory_space;

// Each rank reads whole samples (a grid of P sample groups) and compares them with a fresh
// generation.
void expectDatasetMatches(const SyntheticDatasetSpec& spec, const std::vector<std::string>& files) {
  const SampleCatalog catalog = SampleCatalog::open(files, spec.kind, MPI_COMM_WORLD);
  ASSERT_EQ(catalog.size(), spec.count);
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(worldSize(), 1, 1, 1));
  SampleReader<Memory> reader(grid, catalog, ReadOptions{});
  for (index_t j = 0; j < spec.count; j += worldSize()) {
    const index_t id = std::min(spec.count - 1, j + worldRank());
    const Sample<Memory> s = reader.read(id);
    const HostSample expected = syntheticSample(spec, id);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.input.view());
    const bool int16 = spec.input_type == ElementType::Int16;
    int wrong = 0;
    for (std::size_t i = 0; i < expected.input.size(); ++i) {
      const float e = int16 ? float(std::lround(expected.input[i])) : expected.input[i];
      wrong += h.data()[i] != e;
    }
    EXPECT_EQ(wrong, 0) << "sample " << id;
    EXPECT_EQ(s.targets, expected.targets);
    if (spec.kind == SampleKind::UNet) {
      auto l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.labels.view());
      EXPECT_TRUE(std::equal(expected.labels.begin(), expected.labels.end(), l.data()))
          << "sample " << id;
    }
  }
}

TEST(Datagen, FilesSplitOverRanksHoldTheSerialSamples) {
  testing::SharedTempDir dir;
  for (index_t per_file : {1, 3}) {
    SyntheticDatasetSpec spec;
    spec.size = 8;
    spec.count = 7;
    spec.per_file = per_file;
    spec.seed = 21;
    spec.out = dir.file("cosmo" + std::to_string(per_file));
    int calls = 0;
    const auto files =
        writeSyntheticDataset(spec, MPI_COMM_WORLD, [&](index_t, index_t) { ++calls; });
    EXPECT_EQ(index_t(files.size()), (7 + per_file - 1) / per_file);
    EXPECT_EQ(calls, int(files.size() / std::size_t(worldSize())) +
                         (worldRank() < int(files.size() % std::size_t(worldSize())) ? 1 : 0));
    EXPECT_TRUE(std::filesystem::exists(spec.out + "/datagen.json"));
    expectDatasetMatches(spec, files);
  }
  SyntheticDatasetSpec seg;
  seg.kind = SampleKind::UNet;
  seg.size = 6;
  seg.count = 3;
  seg.channels = 2;
  seg.per_file = 2;
  seg.input_type = ElementType::Float32;
  seg.out = dir.file("unet");
  expectDatasetMatches(seg, writeSyntheticDataset(seg, MPI_COMM_WORLD));
}

TEST(Datagen, BadSpecsFailOnEveryRank) {
  testing::SharedTempDir dir;
  SyntheticDatasetSpec spec;
  spec.size = 4;
  spec.count = 0;
  spec.out = dir.file("x");
  EXPECT_THROW(writeSyntheticDataset(spec, MPI_COMM_WORLD), InputError);
  if (worldRank() == 0) std::ofstream(dir.file("file")) << "x";
  MPI_Barrier(MPI_COMM_WORLD);
  spec.count = 1;
  spec.out = dir.file("file") + "/sub";
  try {
    writeSyntheticDataset(spec, MPI_COMM_WORLD);
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(spec.out), std::string::npos) << e.what();
  }
}

TEST(Datagen, ConvertsChannelsLastCosmoFlow) {
  testing::SharedTempDir dir;
  const std::string in = dir.file("orig.h5"), out = dir.file("converted.h5");
  const index_t n = 17,
                c = 4;  // > 16, so that halo3d recognises the original layout and refuses it
  if (worldRank() == 0) {
    std::vector<double> full(std::size_t(n * n * n * c));
    for (std::size_t i = 0; i < full.size(); ++i)
      full[i] = double(i % 30000);
    testing::writeRawDataset(in, "full", {n, n, n, c}, H5T_NATIVE_INT16, full);
    testing::writeRawDataset(in, "unitPar", {4}, H5T_NATIVE_FLOAT, {0.5, -0.5, 0.25, 1.0});
    convertCosmoFlowFile(in, out);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_THROW(SampleCatalog::open({in}, SampleKind::CosmoFlow, MPI_COMM_WORLD), IoError);
  const SampleCatalog catalog = SampleCatalog::open({out}, SampleKind::CosmoFlow, MPI_COMM_WORLD);
  EXPECT_EQ(catalog.channels(), c);
  EXPECT_EQ(catalog.file(0).input_type, ElementType::Int16);
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, 1, 1, worldSize()));
  SampleReader<Memory> reader(grid, catalog, ReadOptions{});
  const Sample<Memory> s = reader.read(0);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.input.view());
  const Box& o = s.input.block().owned();
  int wrong = 0;
  for (index_t ch = 0; ch < c; ++ch)
    for (index_t d = 0; d < n; ++d)
      for (index_t hh = 0; hh < n; ++hh)
        for (index_t w = o.min(2); w < o.max(2); ++w)
          wrong +=
              h(0, ch, d, hh, w - o.min(2)) != float((((d * n + hh) * n + w) * c + ch) % 30000);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(s.targets, (std::vector<float>{0.5f, -0.5f, 0.25f, 1.0f}));
}

}  // namespace
}  // namespace halo3d
