// Google Benchmark main for on-node benchmarks: Kokkos initialised around the run.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("OMP_PROC_BIND", "false", 0);
  Kokkos::ScopeGuard kokkos(argc, argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
