// Reading (4, E, E, E) float32 CosmoFlow samples through the data loader, one sample per step, on a
// grid 1xPx1x1 (the P ranks of one spatial group share each sample):
//   whole_sample    every rank reads the whole sample and keeps its block (ReadMethod::WholeSample)
//   hyperslab/coll  every rank reads only its block, collective MPI-IO
//   hyperslab/indep every rank reads only its block, independent MPI-IO
//   data_store      after a first epoch has filled the in-memory store, no file reads at all
//   hyperslab/indep_bf16  as hyperslab/indep into a bf16 batch (DataLoaderOptions::input): the
//                   float values staged in slabs, converted and rounded (the anchor is indep)
// Rates: bytes_per_second counts one whole sample per step (what the group receives); the time is
// the slowest rank's. Counters: read_MiB_per_rank (file bytes one rank reads per step, max over
// ranks) and read_fraction (that over the sample's size: 1 for whole_sample, about 1/P for
// hyperslabs, 0 from the store). Files are written once per size under $TMPDIR and are in the page
// cache when timed.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/io/DataLoader.hpp"
#include "halo3d/io/SampleWriter.hpp"
#include "support/MpiTiming.hpp"

namespace halo3d::bench {
namespace {

using Memory = Kokkos::DefaultExecutionSpace::memory_space;
constexpr index_t kChannels = 4;
constexpr index_t kSamples = 4;

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// The sample files of each size, written by rank 0 on first use and removed at exit.
class Datasets {
 public:
  ~Datasets() {
    std::error_code ec;
    if (_owner) std::filesystem::remove_all(_dir, ec);
  }
  const std::vector<std::string>& files(index_t e) {
    auto it = _files.find(e);
    if (it != _files.end()) return it->second;
    if (_dir.empty()) makeDir();
    std::vector<std::string> paths;
    for (index_t s = 0; s < kSamples; ++s) {
      paths.push_back(_dir + "/s" + std::to_string(e) + "_" + std::to_string(s) + ".h5");
      if (!_owner) continue;
      HostSample sample;
      sample.channels = kChannels;
      sample.extents = {e, e, e};
      sample.input.resize(std::size_t(kChannels * e * e * e));
      for (std::size_t i = 0; i < sample.input.size(); ++i)
        sample.input[i] = float((i * 7 + std::size_t(s)) % 251);
      sample.targets = {0.1f, 0.2f, 0.3f, 0.4f};
      writeSampleFile(paths.back(), SampleKind::CosmoFlow, {sample});
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return _files[e] = paths;
  }

 private:
  void makeDir() {
    _owner = worldRank() == 0;
    char buf[4096] = {0};
    if (_owner) {
      const char* base = std::getenv("TMPDIR");
      std::string templ = std::string(base && *base ? base : "/tmp") + "/halo3d_bench_io_XXXXXX";
      if (::mkdtemp(templ.data()) != nullptr) templ.copy(buf, sizeof(buf) - 1);
    }
    MPI_Bcast(buf, sizeof(buf), MPI_CHAR, 0, MPI_COMM_WORLD);
    _dir = buf;
  }
  std::string _dir;
  bool _owner = false;
  std::map<index_t, std::vector<std::string>> _files;
};

Datasets& datasets() {
  static Datasets d;
  return d;
}

enum Variant : int {
  kWholeSample = 0,
  kHyperslabCollective = 1,
  kHyperslabIndependent = 2,
  kDataStore = 3,
  kHyperslabIndependentBf16 = 4
};

void readSamples(benchmark::State& state, Variant variant) {
  const index_t e = state.range(0);
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, worldSize(), 1, 1));
  DataLoaderOptions opt;
  opt.batch_size = 1;
  opt.seed = 1;
  opt.prefetch = false;
  opt.read.method = variant == kWholeSample ? ReadMethod::WholeSample : ReadMethod::Hyperslab;
  const bool bf16_batch = variant == kHyperslabIndependentBf16;
  opt.read.mode =
      variant == kHyperslabIndependent || bf16_batch ? IoMode::Independent : IoMode::Collective;
  if (bf16_batch) opt.input = BatchInput::BFloat16;
  const std::size_t sample_bytes = std::size_t(kChannels * e * e * e) * sizeof(float);
  if (variant == kDataStore) opt.store_budget_bytes = 2 * kSamples * sample_bytes;
  DataLoader<Memory> loader(grid, datasets().files(e), opt);
  // Warm-up: one epoch (fills the store, and the page cache for every variant).
  for (index_t s = 0; s < loader.stepsPerEpoch(); ++s)
    loader.next();
  const std::uint64_t bytes0 = loader.readStats().bytes;
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    Batch<Memory> b = loader.next();
    benchmark::DoNotOptimize(bf16_batch ? static_cast<void*>(b.input_bf16.view().data())
                                        : static_cast<void*>(b.input.view().data()));
    state.SetIterationTime(maxOverRanks(MPI_Wtime() - t0));
  }
  const double per_step = double(loader.readStats().bytes - bytes0) / double(state.iterations());
  const double worst = maxOverRanks(per_step);
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(sample_bytes));
  state.counters["read_MiB_per_rank"] = worst / (1024.0 * 1024.0);
  state.counters["read_fraction"] = worst / double(sample_bytes);
  state.counters["ranks"] = worldSize();
}

// readSamples/<case>/E:<sample edge>, as BENCHMARK_CAPTURE names them; the smoke_ cases (16^3
// samples) are CTest's.
const bool registered = [] {
  const struct {
    const char* name;
    Variant variant;
    index_t e;
  } cases[] = {{"whole_sample", kWholeSample, 128},
               {"hyperslab_collective", kHyperslabCollective, 128},
               {"hyperslab_independent", kHyperslabIndependent, 128},
               {"hyperslab_independent_bf16", kHyperslabIndependentBf16, 128},
               {"data_store", kDataStore, 128},
               {"smoke_whole_sample", kWholeSample, 16},
               {"smoke_hyperslab", kHyperslabCollective, 16},
               {"smoke_data_store", kDataStore, 16}};
  for (const auto& c : cases)
    benchmark::RegisterBenchmark((std::string("readSamples/") + c.name).c_str(), readSamples,
                                 c.variant)
        ->ArgName("E")
        ->Arg(c.e)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace
}  // namespace halo3d::bench
