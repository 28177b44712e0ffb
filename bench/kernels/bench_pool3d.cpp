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

#include <algorithm>
#include <string>
#include <vector>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/kernels/Pool3d.hpp"
#include "support/ConvPasses.hpp"
#include "support/ManualTime.hpp"
#include "support/StreamBandwidth.hpp"

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

// The fill value of element i, as T (bf16 converts explicitly).
template <class T>
KOKKOS_INLINE_FUNCTION T patternValue(index_t i) {
  return T(float((i * 7919) % 10007) - 5000.0f);
}

// Measured on first use, after Kokkos is initialised, and shared by every row of the run.
double streamBytesPerSecond() {
  static const double bytes_per_second = streamCopyBytesPerSecond();
  return bytes_per_second;
}

template <class T>
void pool3d(benchmark::State& state, const Config& cfg) {
  const Exec exec;
  const index_t e = cfg.extent;
  HaloTensor<T, Memory> x("x", sampleBlock(cfg.channels, {e, e, e}));
  HaloTensor<T, Memory> y("y", sampleBlock(cfg.channels, cfg.g.outputExtents({e, e, e})));
  HaloTensor<index_t, Memory> argmax("argmax", y.block());
  // A pattern with few ties keeps the argmax realistic.
  const auto xv = x.view();
  Kokkos::parallel_for(
      "bench_fill",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<index_t>>(exec, 0, index_t(xv.size())),
      KOKKOS_LAMBDA(const index_t i) { xv.data()[i] = patternValue<T>(i); });
  kernels::maxPool3dForward(exec, x, cfg.g, y, argmax, y.block().owned());
  auto run = [&] {
    if (cfg.backward) {
      if (cfg.is_max)
        kernels::maxPool3dBackward(exec, y, argmax, cfg.g, x, x.block().owned(), y.block().owned(),
                                   cfg.path);
      else
        kernels::avgPool3dBackward(exec, y, cfg.g, x, x.block().owned(), y.block().owned(),
                                   cfg.path);
    } else {
      if (cfg.is_max)
        kernels::maxPool3dForward(exec, x, cfg.g, y, argmax, y.block().owned(), cfg.path);
      else
        kernels::avgPool3dForward(exec, x, cfg.g, y, y.block().owned(), cfg.path);
    }
  };
  const double stream = streamBytesPerSecond();
  const double seconds = timeFenced(state, exec, run);
  const double bytes = double(x.view().size() + y.view().size()) * sizeof(T) +
                       (cfg.is_max ? double(argmax.view().size()) * sizeof(index_t) : 0.0);
  state.SetBytesProcessed(int64_t(bytes) * int64_t(state.iterations()));
  state.counters["stream_GB/s"] = stream / 1e9;
  state.counters["pct_of_stream"] =
      100.0 * bytes * double(state.iterations()) / std::max(seconds, 1e-30) / stream;
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
  benchmark::RegisterBenchmark("pool3d_floor/empty_parallel_for", emptyParallelFor)
      ->Arg(64)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("pool3d_floor/avgpool3d_fwd_C1_D2", smallestCall)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  struct Shape {
    index_t c, d;
    const char* window;
    WindowGeometry g;
  };
  const Shape shapes[] = {
      {16, 64, "k2s2", WindowGeometry::cubic(2, 2)},
      {16, 64, "k3s2p1", WindowGeometry::cubic(3, 2, 1)},
      {16, 64, "k3s1p1", WindowGeometry::cubic(3, 1, 1)},
      {4, 128, "k3s2p1", WindowGeometry::cubic(3, 2, 1)},
  };
  // The models' pooling layers not among the shapes above: CosmoFlow (average, k3s2p1) after
  // convolutions 0-4 at 64^3 and 128^3, width 0.25 (4-64 channels) and 1 (16-256 channels); the
  // U-Net (max, k2s2) after each of its 3 levels at 64^3, base 8 (16, 32, 64 channels).
  std::vector<Shape> models;
  const WindowGeometry k3s2p1 = WindowGeometry::cubic(3, 2, 1);
  for (const Shape& s : std::vector<Shape>{{4, 64, "k3s2p1", k3s2p1},
                                           {8, 32, "k3s2p1", k3s2p1},
                                           {16, 16, "k3s2p1", k3s2p1},
                                           {32, 4, "k3s2p1", k3s2p1},
                                           {32, 32, "k3s2p1", k3s2p1},
                                           {64, 16, "k3s2p1", k3s2p1},
                                           {128, 4, "k3s2p1", k3s2p1},
                                           {8, 64, "k3s2p1", k3s2p1},
                                           {16, 32, "k3s2p1", k3s2p1},
                                           {32, 8, "k3s2p1", k3s2p1},
                                           {64, 4, "k3s2p1", k3s2p1},
                                           {16, 128, "k3s2p1", k3s2p1},
                                           {32, 64, "k3s2p1", k3s2p1},
                                           {64, 32, "k3s2p1", k3s2p1},
                                           {128, 8, "k3s2p1", k3s2p1},
                                           {256, 4, "k3s2p1", k3s2p1},
                                           {32, 32, "k2s2", WindowGeometry::cubic(2, 2)},
                                           {64, 16, "k2s2", WindowGeometry::cubic(2, 2)}})
    models.push_back(s);
  for (bool is_max : {true, false})
    for (bool backward : {false, true})
      for (KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
        const std::string kind = std::string(is_max ? "maxpool3d_" : "avgpool3d_") +
                                 (backward ? "bwd" : "fwd") +
                                 (path == KernelPath::Device ? "_device" : "");
        const std::string prefix = kind + "/";
        // The fp32 row, then (host path) the bf16 row of the same shape.
        const auto add = [&](const Shape& s) {
          const std::string shape =
              "C" + std::to_string(s.c) + "_D" + std::to_string(s.d) + "_" + s.window;
          const Config cfg{s.c, s.d, s.g, is_max, backward, path};
          benchmark::RegisterBenchmark((prefix + shape).c_str(), pool3d<float>, cfg)
              ->UseManualTime()
              ->Unit(benchmark::kMillisecond);
          if (path == KernelPath::Fastest)
            benchmark::RegisterBenchmark((kind + "_bf16/" + shape).c_str(), pool3d<bf16>, cfg)
                ->UseManualTime()
                ->Unit(benchmark::kMillisecond);
        };
        for (const Shape& s : shapes)
          add(s);
        if (path == KernelPath::Fastest)
          for (const Shape& s : models)
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
