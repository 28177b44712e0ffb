// Google Benchmark main for MPI benchmarks: every rank runs every benchmark in lockstep and only
// rank 0 reports. Benchmarks set their manual time to the maximum over ranks (see maxOverRanks), so
// every rank sees the same times and makes the same iteration-count decisions.
#include <benchmark/benchmark.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  // THREAD_MULTIPLE: the data pipeline reads on a background thread while the main thread
  // communicates.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  setenv("OMP_PROC_BIND", "false", 0);
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    // Only rank 0 writes --benchmark_out files. Random interleaving shuffles the runs with a seed
    // from std::random_device, different on every rank, so the ranks would enter different
    // benchmarks and deadlock in their collectives: it is dropped with a notice.
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
      const bool out = std::strncmp(argv[i], "--benchmark_out", 15) == 0;
      const bool interleave =
          std::strncmp(argv[i], "--benchmark_enable_random_interleaving", 38) == 0;
      if (interleave && rank == 0 && std::strstr(argv[i], "=false") == nullptr)
        std::fprintf(stderr,
                     "note: %s ignored: MPI ranks must run the benchmarks in the same order\n",
                     argv[i]);
      if (interleave || (out && rank != 0)) continue;
      argv[kept++] = argv[i];
    }
    argc = kept;
    benchmark::Initialize(&argc, argv);
    if (rank == 0) {
      benchmark::RunSpecifiedBenchmarks();
    } else {
      NullReporter display;
      benchmark::RunSpecifiedBenchmarks(&display);
    }
    benchmark::Shutdown();
  }
  MPI_Finalize();
  return 0;
}
