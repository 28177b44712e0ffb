// The gradient allreduce as nn/GradientReducer runs it: MPI_Iallreduce of one float bucket, then
// MPI_Wait, in place (MPI_IN_PLACE) or into a separate receive buffer. Open MPI's libnbc picks its
// algorithm differently for the two (a binomial reduce + broadcast for every in-place call;
// Rabenseifner's reduce-scatter + allgather for large out-of-place ones), which is why the reducer
// keeps receive buffers and why nn/plan/StepModel prices the allreduce as it does.
//
//   mpirun -np 4 bench_allreduce --benchmark_filter=iallreduce
//
// Manual time: the slowest rank's wall clock from the call to the end of the wait.
// `bytes_per_second` counts the bucket's bytes once per call.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "support/MpiTiming.hpp"

namespace halo3d::bench {
namespace {

void iallreduce(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0)) / sizeof(float);
  const bool in_place = state.range(1) != 0;
  std::vector<float> send(count, 1.0f), receive(count, 0.0f);
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    MPI_Request request = MPI_REQUEST_NULL;
    if (in_place)
      MPI_Iallreduce(MPI_IN_PLACE, send.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                     MPI_COMM_WORLD, &request);
    else
      MPI_Iallreduce(send.data(), receive.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                     MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(maxOverRanks(seconds));
    // In place, the sums grow every call: keep them finite and equal.
    if (in_place) std::fill(send.begin(), send.end(), 1.0f);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
  state.counters["ranks"] = worldSize();
  state.SetLabel(in_place ? "in place" : "receive buffer");
}

BENCHMARK(iallreduce)
    ->ArgNames({"bytes", "in_place"})
    ->ArgsProduct({{64 << 10, 1 << 20, 4 << 20}, {1, 0}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(iallreduce)
    ->Name("iallreduce_smoke")
    ->Args({64 << 10, 0})
    ->UseManualTime()
    ->Iterations(3);

}  // namespace
}  // namespace halo3d::bench
