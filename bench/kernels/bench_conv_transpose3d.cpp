// Transposed conv3d, fp32, one sample: forward, backward-data and backward-filter on the
// host-blocked path (KernelPath::Fastest) and the device path (the code a CUDA build runs). Names:
// conv_transpose3d_<pass>[_device]/C<in>_K<out>_D<in extent>[_<geometry>]; no geometry suffix is
// the U-Net upsampling, k2 s2. GFLOP/s counts 2 flops per (input cell, tap, in channel, out
// channel) that lands in the output volume. Manual time, fenced on both sides.
#include <benchmark/benchmark.h>

#include <string>

#include "halo3d/kernels/ConvTranspose3d.hpp"
#include "support/ConvPasses.hpp"
#include "support/ManualTime.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using kernels::ConvTranspose3dGeometry;

struct Config {
  index_t in_channels, out_channels, extent;
  ConvTranspose3dGeometry g;
  Pass pass;
  KernelPath path;
};

// Multiply-adds of one sample and channel pair: per dimension, the (input cell, tap) pairs whose
// output cell lies in the volume, multiplied over the dimensions.
double tapPairs(const ConvTranspose3dGeometry& g, index_t extent) {
  double pairs = 1;
  for (int d = 0; d < 3; ++d) {
    const index_t out = g.outputExtent(d, extent);
    index_t count = 0;
    for (index_t i = 0; i < extent; ++i)
      for (int k = 0; k < g.window.kernel[d]; ++k) {
        const index_t o =
            i * g.window.stride[d] - g.window.padding[d] + index_t(k) * g.window.dilation[d];
        count += (o >= 0 && o < out) ? 1 : 0;
      }
    pairs *= double(count);
  }
  return pairs;
}

void convTranspose3d(benchmark::State& state, const Config& cfg) {
  const Exec exec;
  const index_t e = cfg.extent;
  HaloTensor<float, Memory> x("x", sampleBlock(cfg.in_channels, {e, e, e}));
  HaloTensor<float, Memory> y("y", sampleBlock(cfg.out_channels, cfg.g.outputExtents({e, e, e})));
  const auto& k = cfg.g.window.kernel;
  Kokkos::View<float*****, Kokkos::LayoutRight, Memory> w("w", cfg.in_channels, cfg.out_channels,
                                                          k[0], k[1], k[2]);
  Kokkos::View<float*, Kokkos::LayoutRight, Memory> b("b", cfg.out_channels);
  Kokkos::deep_copy(x.view(), 0.5f);
  Kokkos::deep_copy(y.view(), 0.25f);
  Kokkos::deep_copy(w, 0.1f);
  auto run = [&] {
    switch (cfg.pass) {
      case Pass::Forward:
        return kernels::convTranspose3dForward(exec, x, w, b, cfg.g, y, y.block().owned(),
                                               cfg.path);
      case Pass::BackwardData:
        return kernels::convTranspose3dBackwardData(exec, y, w, cfg.g, x, x.block().owned(),
                                                    y.block().owned(), cfg.path);
      case Pass::BackwardFilter:
        return kernels::convTranspose3dBackwardFilter(exec, x, y, cfg.g, w, b, y.block().owned(),
                                                      false, cfg.path);
    }
  };
  timeFenced(state, exec, run);
  const double flops = 2.0 * double(cfg.in_channels * cfg.out_channels) * tapPairs(cfg.g, e);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * double(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

void registerAll() {
  struct Shape {
    index_t c, k, d;
    const char* suffix;
    ConvTranspose3dGeometry g;
  };
  const Shape shapes[] = {
      {16, 16, 32, "", ConvTranspose3dGeometry::cubic(2, 2)},
      {32, 32, 16, "", ConvTranspose3dGeometry::cubic(2, 2)},
      {64, 32, 16, "", ConvTranspose3dGeometry::cubic(2, 2)},
      {16, 16, 32, "_k3s2p1op1", ConvTranspose3dGeometry::cubic(3, 2, 1, 1)},
      {16, 16, 32, "_k3s1p1", ConvTranspose3dGeometry::cubic(3, 1, 1)},
  };
  for (Pass pass : kPasses)
    for (KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
      const std::string prefix = std::string("conv_transpose3d_") + passName(pass) +
                                 (path == KernelPath::Device ? "_device" : "") + "/";
      for (const Shape& s : shapes) {
        const std::string name = prefix + "C" + std::to_string(s.c) + "_K" + std::to_string(s.k) +
                                 "_D" + std::to_string(s.d) + s.suffix;
        benchmark::RegisterBenchmark(name.c_str(), convTranspose3d,
                                     Config{s.c, s.k, s.d, s.g, pass, path})
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
      benchmark::RegisterBenchmark(
          (prefix + "smoke").c_str(), convTranspose3d,
          Config{2, 3, 4, ConvTranspose3dGeometry::cubic(3, 2, 1, 1), pass, path})
          ->UseManualTime();
    }
}

const bool registered = (registerAll(), true);

}  // namespace
}  // namespace halo3d::bench
