// Bad input throws on every rank together, with a message naming the file and the dataset: missing
// file, missing dataset, wrong rank, shape or element type, truncated or corrupt file, samples of
// different sizes, channels-last data, labels out of range (found by one rank while reading),
// impossible batches and ids.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "IoTestSupport.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/io/DataLoader.hpp"
#include "halo3d/io/SampleReader.hpp"

namespace halo3d {
namespace {

using testing::worldRank;
using testing::worldSize;
using Memory = Kokkos::DefaultExecutionSpace::memory_space;

// Runs f on every rank and checks that each throws ErrorType whose message holds every string of
// `needles`.
template <class ErrorType, class F>
void expectEveryRankThrows(F&& f, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const ErrorType& e) {
    for (const std::string& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "'" << n << "' not in: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected error type: " << e.what();
  }
}

HostSample cosmo(index_t id, const Extents3& e = {6, 5, 4}) {
  return testing::encodedSample(SampleKind::CosmoFlow, id, 2, e, false);
}

// A dataset of zeros that a malformed file holds. The type is an ElementType, not an hid_t: the
// H5T_NATIVE_* macros expand to comma expressions that nvcc's front end cannot take inside a
// braced initializer list.
struct RawDataset {
  const char* name;
  std::vector<index_t> shape;
  ElementType type;
};

struct BadFile {
  const char* name;
  SampleKind kind;
  std::vector<RawDataset> datasets;               // written on rank 0
  std::function<void(const std::string&)> write;  // or this, run on rank 0
  std::vector<std::string> needles;               // besides the file's path

  void writeTo(const std::string& path) const {
    for (const RawDataset& d : datasets) {
      index_t count = 1;
      for (index_t e : d.shape)
        count *= e;
      testing::writeRawDataset(path, d.name, d.shape, h5::nativeType(d.type),
                               std::vector<double>(std::size_t(count), 0.0));
    }
    if (write) write(path);
  }
};

std::vector<BadFile> badFiles() {
  return {
      {"missing_dataset",
       SampleKind::CosmoFlow,
       {{"full", {2, 4, 4, 4}, ElementType::Float32}},
       nullptr,
       {"unitPar", "no dataset"}},
      {"wrong_rank",
       SampleKind::CosmoFlow,
       {{"full", {2, 4, 4}, ElementType::Float32}},
       nullptr,
       {"'full'", "rank 3"}},
      {"wrong_dtype",
       SampleKind::CosmoFlow,
       {{"full", {2, 4, 4, 4}, ElementType::Float64}, {"unitPar", {4}, ElementType::Float32}},
       nullptr,
       {"'full'", "float64"}},
      {"targets_shape",
       SampleKind::CosmoFlow,
       {{"full", {3, 2, 4, 4, 4}, ElementType::Int16}, {"unitPar", {2, 4}, ElementType::Float32}},
       nullptr,
       {"'unitPar'", "(2, 4)", "3 samples"}},
      {"channels_last",
       SampleKind::CosmoFlow,
       {{"full", {20, 20, 20, 4}, ElementType::Int16}, {"unitPar", {4}, ElementType::Float32}},
       nullptr,
       {"'full'", "channels-last", "convert-cosmoflow"}},
      {"labels_float",
       SampleKind::UNet,
       {{"volume", {1, 4, 4, 4}, ElementType::Float32},
        {"segmentation", {4, 4, 4}, ElementType::Float32}},
       nullptr,
       {"'segmentation'", "integer"}},
      {"labels_shape",
       SampleKind::UNet,
       {{"volume", {1, 4, 4, 4}, ElementType::Float32},
        {"segmentation", {4, 4, 3}, ElementType::UInt8}},
       nullptr,
       {"'segmentation'", "(4, 4, 3)", "(4, 4, 4)"}},
      {"truncated",
       SampleKind::CosmoFlow,
       {},
       [](const std::string& p) {
         writeSampleFile(p, SampleKind::CosmoFlow, {cosmo(0, {16, 16, 16})});
         std::filesystem::resize_file(p, std::filesystem::file_size(p) / 2);
       },
       {"truncated"}},
      {"corrupt",
       SampleKind::CosmoFlow,
       {},
       [](const std::string& p) { std::ofstream(p) << std::string(3000, '\x5a'); },
       {"cannot open", "HDF5"}},
  };
}

TEST(BadInput, EveryMalformedFileThrowsOnEveryRank) {
  testing::SharedTempDir dir;
  const std::string good = dir.file("good.h5");
  if (worldRank() == 0) writeSampleFile(good, SampleKind::CosmoFlow, {cosmo(0)});
  const std::string good_unet = dir.file("good_unet.h5");
  if (worldRank() == 0)
    writeSampleFile(good_unet, SampleKind::UNet,
                    {testing::encodedSample(SampleKind::UNet, 0, 1, {4, 4, 4}, false)});
  for (const BadFile& b : badFiles()) {
    SCOPED_TRACE(b.name);
    const std::string path = dir.file(std::string(b.name) + ".h5");
    if (worldRank() == 0) b.writeTo(path);
    MPI_Barrier(MPI_COMM_WORLD);
    // The bad file comes second: on two or more ranks another rank than rank 0 inspects it.
    const std::vector<std::string> files{b.kind == SampleKind::CosmoFlow ? good : good_unet, path};
    std::vector<std::string> needles = b.needles;
    needles.push_back(path);
    expectEveryRankThrows<IoError>([&] { SampleCatalog::open(files, b.kind, MPI_COMM_WORLD); },
                                   needles);
  }
  const std::string missing = dir.file("missing.h5");
  expectEveryRankThrows<IoError>(
      [&] {
        SampleCatalog::open({good, missing}, SampleKind::CosmoFlow, MPI_COMM_WORLD);
      },
      {missing, "no such file"});
  expectEveryRankThrows<IoError>(
      [&] { SampleCatalog::open({}, SampleKind::CosmoFlow, MPI_COMM_WORLD); }, {"no sample files"});
}

TEST(BadInput, SamplesOfDifferentSizesAreRefused) {
  testing::SharedTempDir dir;
  const std::string a = dir.file("a.h5"), b = dir.file("b.h5");
  if (worldRank() == 0) {
    writeSampleFile(a, SampleKind::CosmoFlow, {cosmo(0, {6, 5, 4})});
    writeSampleFile(b, SampleKind::CosmoFlow, {cosmo(1, {6, 5, 3})});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expectEveryRankThrows<IoError>(
      [&] {
        SampleCatalog::open({a, b}, SampleKind::CosmoFlow, MPI_COMM_WORLD);
      },
      {a, b, "'full'", "same size", "(2, 6, 5, 3)", "(2, 6, 5, 4)"});
}

TEST(BadInput, LabelOutOfRangeSeenByOneRankStopsEveryRank) {
  testing::SharedTempDir dir;
  const Extents3 e = testing::extentsFor(worldSize());
  const std::string path = dir.file("labels.h5");
  if (worldRank() == 0) {
    std::vector<HostSample> samples;
    for (index_t id = 0; id < 8; ++id)
      samples.push_back(testing::encodedSample(SampleKind::UNet, id, 1, e, false));
    // Only the rank owning the last voxel of sample 5 sees the bad class.
    samples[5].labels.back() = 7;
    writeSampleFile(path, SampleKind::UNet, samples, {ElementType::Float32, true});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const SampleCatalog catalog = SampleCatalog::open({path}, SampleKind::UNet, MPI_COMM_WORLD);
  for (bool prefetch : {false, true}) {
    ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, 1, worldSize(), 1));
    DataLoaderOptions opt;
    opt.kind = SampleKind::UNet;
    opt.batch_size = 8;
    opt.shuffle = false;
    opt.prefetch = prefetch;
    DataLoader<Memory> loader(grid, catalog, opt);
    expectEveryRankThrows<IoError>([&] { loader.next(); }, {path, "'segmentation'", "class 7",
                                                            "(sample 5 of the file)", "[0, 3)"});
    // The loader refuses to go on after a failed batch, on every rank.
    EXPECT_THROW(loader.next(), Error);
  }
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, worldSize(), 1, 1));
  SampleReader<Memory> reader(grid, catalog, ReadOptions{});
  expectEveryRankThrows<IoError>([&] { reader.read(5); }, {path, "class 7"});
  expectEveryRankThrows<InputError>([&] { reader.read(8); }, {"sample id 8", "8 samples"});
  EXPECT_NO_THROW(reader.read(4));
}

TEST(BadInput, ImpossibleBatchesAndGridsAreRefusedEverywhere) {
  testing::SharedTempDir dir;
  const std::string path = dir.file("s.h5");
  if (worldRank() == 0) {
    std::vector<HostSample> samples;
    for (index_t id = 0; id < 3; ++id)
      samples.push_back(cosmo(id, {3, 3, 3}));
    writeSampleFile(path, SampleKind::CosmoFlow, samples, {ElementType::Int16, true});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const SampleCatalog catalog = SampleCatalog::open({path}, SampleKind::CosmoFlow, MPI_COMM_WORLD);
  DataLoaderOptions opt;
  opt.batch_size = 2;
  if (worldSize() > 2) {
    // More sample groups than the batch has samples.
    ProcessGrid grid(MPI_COMM_WORLD, GridShape(worldSize(), 1, 1, 1));
    expectEveryRankThrows<InputError>(
        [&] { DataLoader<Memory>(grid, catalog, opt); },
        {"batch size 2", std::to_string(worldSize()) + " sample groups"});
  }
  if (worldSize() > 3) {
    // A volume of 3 cells cannot be split over more than 3 blocks.
    ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, worldSize(), 1, 1));
    expectEveryRankThrows<ShapeError>([&] { DataLoader<Memory>(grid, catalog, opt); }, {"3"});
  }
  // A loader for U-Net samples over a CosmoFlow catalog.
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, 1, 1, worldSize()));
  opt.kind = SampleKind::UNet;
  expectEveryRankThrows<InputError>([&] { DataLoader<Memory>(grid, catalog, opt); },
                                    {"unet", "cosmoflow"});
}

}  // namespace
}  // namespace halo3d
