// Batch norm, fp32, on one (N, C, D, H, W) block: the partial statistics, the forward apply, the
// backward partial sums and the backward apply. Names: batchnorm_<part>/N<n>_C<c>_D<d> (cube D^3).
// GB/s counts the compulsory traffic: stats reads x; forward reads x and writes y; backward sums
// read x and dy; backward reads x and dy and writes dx. Manual time, fenced on both sides.
#include <benchmark/benchmark.h>

#include <string>

#include "halo3d/kernels/BatchNorm.hpp"
#include "support/ManualTime.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using kernels::Tensor;
using kernels::Vector;

enum class Part { Stats, Forward, BackwardSums, Backward };

struct Config {
  Part part;
  index_t samples, channels, extent;
};

void batchnorm(benchmark::State& state, const Config& cfg) {
  const Exec exec;
  const index_t c = cfg.channels, e = cfg.extent;
  const TensorBlock block = TensorBlock::whole({cfg.samples, c, e, e, e});
  const Box box = block.owned();
  Tensor<float, Exec> x("x", block), dy("dy", block), y("y", block);
  const auto xv = x.view(), dyv = dy.view();
  Kokkos::parallel_for(
      "bench_fill",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<index_t>>(exec, 0, index_t(xv.size())),
      KOKKOS_LAMBDA(index_t i) {
        xv.data()[i] = float((i * 7919) % 10007) * 1e-3f;
        dyv.data()[i] = float((i * 104729) % 10007) * 1e-4f - 0.5f;
      });
  Vector<double, Exec> stats("stats", kernels::batchNormStatsSize(c));
  Vector<double, Exec> sums("sums", kernels::batchNormBackwardSumsSize(c));
  Vector<float, Exec> mean("mean", c), var("var", c), gamma("gamma", c), beta("beta", c);
  Kokkos::deep_copy(gamma, 1.0f);
  kernels::batchNormStatistics(exec, x, stats, box);
  kernels::batchNormMoments(exec, stats, mean, var);
  const double count = double(cfg.samples * box.size());
  auto run = [&] {
    switch (cfg.part) {
      case Part::Stats:
        return kernels::batchNormStatistics(exec, x, stats, box);
      case Part::Forward:
        return kernels::batchNormForward(exec, x, mean, var, gamma, beta, 1e-5, y, box);
      case Part::BackwardSums:
        return kernels::batchNormBackwardSums(exec, x, dy, mean, var, 1e-5, sums, box);
      case Part::Backward:
        return kernels::batchNormBackward(exec, x, dy, mean, var, gamma, 1e-5, sums, count, y, box);
    }
  };
  const double seconds = timeFenced(state, exec, run);
  const int tensors = cfg.part == Part::Stats ? 1 : cfg.part == Part::Backward ? 3 : 2;
  const double bytes = double(tensors) * double(x.view().size()) * sizeof(float);
  setBandwidth(state, bytes, seconds);
}

void registerAll() {
  const std::pair<Part, const char*> parts[] = {{Part::Stats, "stats"},
                                                {Part::Forward, "forward"},
                                                {Part::BackwardSums, "backward_sums"},
                                                {Part::Backward, "backward"}};
  for (const auto& [part, name] : parts) {
    const std::string prefix = std::string("batchnorm_") + name + "/";
    benchmark::RegisterBenchmark((prefix + "N1_C32_D64").c_str(), batchnorm,
                                 Config{part, 1, 32, 64})
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((prefix + "smoke").c_str(), batchnorm, Config{part, 1, 2, 5})
        ->UseManualTime();
  }
}

const bool registered = (registerAll(), true);

}  // namespace
}  // namespace halo3d::bench
