#pragma once
// Registration of the MPI step benchmarks, all on manual time (the slowest rank's): the timed
// configurations report milliseconds; a CTest smoke configuration runs two iterations, enough to
// show that it works without the minimum time.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

namespace halo3d::bench {

using StepBenchmark = void (*)(benchmark::State&);

inline benchmark::internal::Benchmark* registerTimed(
    const std::string& name, StepBenchmark fn, const std::vector<std::string>& arg_names,
    const std::vector<std::vector<std::int64_t>>& configurations) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), fn)->ArgNames(arg_names);
  for (const auto& args : configurations)
    b->Args(args);
  return b->UseManualTime()->Unit(benchmark::kMillisecond);
}

inline benchmark::internal::Benchmark* registerSmoke(const std::string& name, StepBenchmark fn,
                                                     const std::vector<std::string>& arg_names,
                                                     const std::vector<std::int64_t>& args) {
  return benchmark::RegisterBenchmark(name.c_str(), fn)
      ->ArgNames(arg_names)
      ->Args(args)
      ->UseManualTime()
      ->Iterations(2);
}

}  // namespace halo3d::bench
