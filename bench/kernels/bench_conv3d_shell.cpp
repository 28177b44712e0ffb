// What the halo overlap's box split costs a convolution: conv3d forward on one block computed
// whole, or as an interior plus the shell slabs along one dimension (the pieces a layer computes
// before and after its exchange, nn/layers/WindowLayer.cpp). Arguments {C, D, H, W, split dim,
// slab}: slab 0 = the whole block in one call; 1 = shell slabs one cell thick (what a 3^3
// convolution's overlap needs); 16 = slabs a vector thick (nn::narrowAlongW's rule for W). The
// host kernels vectorise along W, so one-cell W slabs run every row at one lane of 16.
#include <benchmark/benchmark.h>

#include <vector>

#include "halo3d/kernels/Conv3d.hpp"
#include "support/ConvPasses.hpp"
#include "support/ManualTime.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;

// The interior (the block less `slab` cells on both sides of `dim`) first, then the two slabs.
std::vector<Box> pieces(const Box& all, int dim, index_t slab) {
  if (slab == 0) return {all};
  return {all.withRange(dim, slab, all.max(dim) - slab), all.withRange(dim, 0, slab),
          all.withRange(dim, all.max(dim) - slab, all.max(dim))};
}

void conv3dShell(benchmark::State& state) {
  const index_t C = state.range(0), D = state.range(1), H = state.range(2), W = state.range(3);
  const int dim = int(state.range(4));
  const index_t slab = state.range(5);
  const Exec exec;
  HaloTensor<float> x("x", TensorBlock::whole({1, C, D, H, W}, HaloWidths::uniform(1)));
  HaloTensor<float> y("y", TensorBlock::whole({1, C, D, H, W}));
  Kokkos::View<float*****, Kokkos::LayoutRight> w("w", C, C, 3, 3, 3);
  Kokkos::View<float*, Kokkos::LayoutRight> b("b", 0);
  fillHashed(w, 1);
  const auto g = WindowGeometry::cubic(3, 1, 1);
  const std::vector<Box> boxes = pieces(Box::fromExtents({D, H, W}), dim, slab);
  timeFenced(state, exec, [&] {
    for (const Box& box : boxes)
      kernels::conv3dForward(exec, x, w, b, g, y, box);
  });
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(C * C * 27 * D * H * W) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"C", "D", "H", "W", "dim", "slab"});
  for (const auto& e : {std::vector<int64_t>{64, 64, 32}, {64, 64, 64}}) {
    for (int64_t slab : {0, 1, 16})
      b->Args({16, e[0], e[1], e[2], 2, slab});
  }
  for (int64_t slab : {0, 1})
    b->Args({16, 32, 64, 64, 0, slab});
  b->UseManualTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(conv3dShell)->Name("conv3d_fwd_shell")->Apply(shapes);
BENCHMARK(conv3dShell)->Name("conv3d_fwd_shell_smoke")->Args({2, 8, 8, 8, 2, 1})->UseManualTime();

}  // namespace
}  // namespace halo3d::bench
