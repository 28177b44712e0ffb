#pragma once
// The manual-time loop the on-node benchmarks share: one untimed run first (first touch of the
// outputs, lazy set-up in the libraries), then each iteration timed on the wall clock between two
// synchronisations, so that asynchronous launches are counted whole.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

#include "halo3d/core/KokkosCompat.hpp"

namespace halo3d::bench {

// `sync(what)` waits for all work `run()` queued; returns the seconds of all timed iterations.
template <class Sync, class Run>
double timeManually(benchmark::State& state, Sync&& sync, Run&& run) {
  run();
  sync("warm-up");
  double seconds = 0.0;
  for (auto _ : state) {
    sync("before timing");
    const auto t0 = std::chrono::steady_clock::now();
    run();
    sync("after the run");
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(t);
    seconds += t;
  }
  return seconds;
}

// The same, synchronised by fencing the Kokkos execution space instance the run launches on.
template <class Exec, class Run>
double timeFenced(benchmark::State& state, const Exec& exec, Run&& run) {
  return timeManually(
      state, [&](const char* what) { halo3d::fence(exec, what); }, run);
}

// The anchors' measure (StreamBandwidth.hpp, FmaPeak.hpp): `run()` (which waits for its own
// work) once untimed, then the seconds of the fastest of `repeats` runs.
template <class Run>
double bestOfSeconds(int repeats, Run&& run) {
  run();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// `GB/s`: `bytes` moved per iteration over the timed seconds of all iterations.
inline void setBandwidth(benchmark::State& state, double bytes, double seconds) {
  state.counters["GB/s"] = bytes * double(state.iterations()) / seconds / 1e9;
}

}  // namespace halo3d::bench
