// 3D pooling, fp32, one sample: max and average, forward and backward, on the host row path
// (KernelPath::Fastest) and the device path (the code a CUDA build runs). Names:
// <kind>pool3d_<pass>[_device]/C<channels>_D<input extent>_<window>. GB/s counts the compulsory
// traffic: forward reads x and writes y (and the int64 argmax for max); backward reads dy (and
// argmax) and writes dx. Manual time, fenced on both sides. Besides the shapes of the original
// rows, the host path runs every pooling layer of the two models at the sizes the docs use, in both
// kinds: CosmoFlow's k3s2p1 pools (64^3 and 128^3, width 0.25 and 1) and the U-Net's k2s2 pools
// (64^3, base 8, depth 3). `pct_of_stream` compares the compulsory bytes per second with a STREAM
// copy measured once in the same process (`stream_GB/s`, with as many threads as the run has).
// The host path also has bf16 rows (`<kind>pool3d_<pass>_bf16/...`, registered right after the
// fp32 row of the same shape): bf16 activations, float arithmetic, the same int64 argmax; their
// GB/s counts 2-byte x and y.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "halo3d/core/BFloat16.hpp"
#include "support/ManualTime.hpp"
#include "support/Pool3dRows.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;

struct Config {
  index_t channels, extent;
  WindowGeometry g;
  bool is_max, backward;
  KernelPath path;
};

template <class T>
void pool3d(benchmark::State& state, const Config& cfg) {
  const Exec exec;
  const PoolBuffers<T, Memory> b(cfg.channels, cfg.extent, cfg.g);
  streamBytesPerSecond();  // measured before the row's timing, not inside it
  const double seconds =
      timeFenced(state, exec, [&] { b.run(exec, cfg.is_max, cfg.backward, cfg.path); });
  setPoolCounters(state, poolBytes(cfg.channels, cfg.extent, cfg.g, cfg.is_max, sizeof(T)),
                  seconds);
}

// The floor of a host call, to read the small rows against: an empty Kokkos parallel_for over as
// many work items as C32_D4's average forward has planes (64), fenced like the rows; and a whole
// average forward call on the smallest volume (one channel of 2^3, one output cell).
void emptyParallelFor(benchmark::State& state) {
  const Exec exec;
  const index_t items = state.range(0);
  const double seconds = timeFenced(state, exec, [&] {
    Kokkos::parallel_for("bench_empty",
                         Kokkos::RangePolicy<Exec, Kokkos::IndexType<index_t>>(exec, 0, items),
                         KOKKOS_LAMBDA(const index_t){});
  });
  state.counters["ns_per_call"] = 1e9 * seconds / double(state.iterations());
}

void smallestCall(benchmark::State& state) {
  const Exec exec;
  const WindowGeometry g = WindowGeometry::cubic(3, 2, 1);
  HaloTensor<float, Memory> x("x", sampleBlock(1, {2, 2, 2}));
  HaloTensor<float, Memory> y("y", sampleBlock(1, g.outputExtents({2, 2, 2})));
  Kokkos::deep_copy(x.view(), 1.0f);
  const double seconds =
      timeFenced(state, exec, [&] { kernels::avgPool3dForward(exec, x, g, y, y.block().owned()); });
  state.counters["ns_per_call"] = 1e9 * seconds / double(state.iterations());
}

void registerAll() {
  // Streaming (non-temporal) dx stores from this many bytes of dx, so that a run can measure them
  // against the cached stores (kernels::setPoolStreamBytes): average backward (off by default) and
  // max backward (16 MiB by default).
  kernels::PoolStreamBytes stream = kernels::poolStreamBytes();
  if (const char* bytes = std::getenv("HALO3D_POOL_STREAM_MIN_BYTES"))
    stream.avg_pool = std::atof(bytes);
  if (const char* bytes = std::getenv("HALO3D_MAXPOOL_STREAM_MIN_BYTES"))
    stream.max_pool = std::atof(bytes);
  kernels::setPoolStreamBytes(stream);
  benchmark::RegisterBenchmark("pool3d_floor/empty_parallel_for", emptyParallelFor)
      ->Arg(64)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("pool3d_floor/avgpool3d_fwd_C1_D2", smallestCall)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  const PoolShape shapes[] = {
      {16, 64, "k2s2", WindowGeometry::cubic(2, 2)},
      {16, 64, "k3s2p1", WindowGeometry::cubic(3, 2, 1)},
      {16, 64, "k3s1p1", WindowGeometry::cubic(3, 1, 1)},
      {4, 128, "k3s2p1", WindowGeometry::cubic(3, 2, 1)},
  };
  const std::vector<PoolShape> models = modelPoolShapes();
  for (bool is_max : {true, false})
    for (bool backward : {false, true})
      for (KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
        const std::string kind = std::string(is_max ? "maxpool3d_" : "avgpool3d_") +
                                 (backward ? "bwd" : "fwd") +
                                 (path == KernelPath::Device ? "_device" : "");
        const std::string prefix = kind + "/";
        // The fp32 row, then (host path) the bf16 row of the same shape.
        const auto add = [&](const PoolShape& s) {
          const std::string shape = s.name();
          const Config cfg{s.c, s.d, s.g, is_max, backward, path};
          benchmark::RegisterBenchmark((prefix + shape).c_str(), pool3d<float>, cfg)
              ->UseManualTime()
              ->Unit(benchmark::kMillisecond);
          if (path == KernelPath::Fastest)
            benchmark::RegisterBenchmark((kind + "_bf16/" + shape).c_str(), pool3d<bf16>, cfg)
                ->UseManualTime()
                ->Unit(benchmark::kMillisecond);
        };
        for (const PoolShape& s : shapes)
          add(s);
        if (path == KernelPath::Fastest)
          for (const PoolShape& s : models)
            add(s);
        benchmark::RegisterBenchmark(
            (prefix + "smoke").c_str(), pool3d<float>,
            Config{2, 5, WindowGeometry::cubic(3, 2, 1), is_max, backward, path})
            ->UseManualTime();
      }
}

const bool registered = (registerAll(), true);

}  // namespace
}  // namespace halo3d::bench
