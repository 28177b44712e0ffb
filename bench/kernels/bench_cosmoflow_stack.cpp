// One training step's worth of CosmoFlow's convolution stack on one device, from the kernels alone
// (no nn/, no MPI, so the kernels-only build times it on a GPU): forward through the seven
// convolutions (3^3 without bias, the fourth with stride 2), LeakyReLU and the average pools of the
// model's schedule (nn/models/CosmoFlow.cpp), then backward (pool, LeakyReLU, weight gradient and
// input gradient of every convolution). tests/kernels/test_cosmoflow_stack.cpp checks the same
// chain against the naive references.
//
// Arguments: {input size, channel width in percent, samples}. `cosmoflow128` is the model at
// 128^3 with full width, one sample (a single GPU's share of a data-parallel run); `smoke` is 32^3
// at a quarter width (CTest). Manual time, fenced; counters: the conv GFLOP/s of the whole step
// (2 N O I 27 Do Ho Wo per conv and pass, three passes), and fwd_ms / bwd_ms of the last iteration.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/core/TensorBlock.hpp"
#include "halo3d/kernels/Activations.hpp"
#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/Pool3d.hpp"
#include "support/ConvPasses.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using Tensor = HaloTensor<float, Memory>;
using Weights = Kokkos::View<float*****, Kokkos::LayoutRight, Memory>;
using Clock = std::chrono::steady_clock;

constexpr double kSlope = 0.01;
const WindowGeometry kPool = WindowGeometry::cubic(3, 2, 1);

struct Layer {
  index_t in_ch, out_ch;
  WindowGeometry g;
  bool pool;
  Tensor x, z, a, p, dx, dz, da, dp;
  Weights w, dw;
  double flops = 0;  // one pass of the convolution
};

Box volumeOf(const Tensor& t) {
  return Box::fromExtents(t.block().globalExtents());
}

// The stack of nn/models/CosmoFlow.cpp's schedule, allocated on the default device.
std::vector<Layer> makeStack(index_t samples, index_t input, double width) {
  constexpr int kChannels[7] = {16, 32, 64, 128, 256, 256, 256};
  const HaloWidths halo = HaloWidths::uniform(1);
  auto block = [&](index_t c, index_t e) {
    return TensorBlock::whole({samples, c, e, e, e}, halo);
  };
  std::vector<Layer> layers;
  index_t e = input, in_ch = 4;
  for (int i = 0; i < 7; ++i) {
    Layer L;
    const std::string s = std::to_string(i);
    L.in_ch = in_ch;
    L.out_ch = std::max<index_t>(1, index_t(std::lround(kChannels[i] * width)));
    L.g = WindowGeometry::cubic(3, i == 3 ? 2 : 1, 1);
    if (i == 0) {
      L.x = Tensor("x0", block(in_ch, e));
      L.dx = Tensor("dx0", block(in_ch, e));
    } else {
      const Layer& prev = layers.back();
      L.x = prev.pool ? prev.p : prev.a;
      L.dx = prev.pool ? prev.dp : prev.da;
    }
    e = L.g.outputExtents({e, e, e})[0];
    L.flops = 2.0 * double(samples * L.out_ch * L.in_ch) * 27.0 * double(e * e * e);
    L.z = Tensor("z" + s, block(L.out_ch, e));
    L.dz = Tensor("dz" + s, block(L.out_ch, e));
    L.a = Tensor("a" + s, block(L.out_ch, e));
    L.da = Tensor("da" + s, block(L.out_ch, e));
    const bool scheduled = i < 5 || (i == 5 && input >= 256) || (i == 6 && input >= 512);
    L.pool = scheduled && e > 2;
    if (L.pool) {
      e = kPool.outputExtents({e, e, e})[0];
      L.p = Tensor("p" + s, block(L.out_ch, e));
      L.dp = Tensor("dp" + s, block(L.out_ch, e));
    }
    const auto noinit = Kokkos::view_alloc(Kokkos::WithoutInitializing, "w" + s);
    L.w = Weights(noinit, L.out_ch, L.in_ch, 3, 3, 3);
    L.dw = Weights(Kokkos::view_alloc(Kokkos::WithoutInitializing, "dw" + s), L.out_ch, L.in_ch, 3,
                   3, 3);
    fillHashed(L.w, 10 + i, float(std::sqrt(6.0 / double(in_ch * 27))));
    layers.push_back(L);
    in_ch = L.out_ch;
  }
  return layers;
}

void forward(const Exec& exec, const std::vector<Layer>& s) {
  const Kokkos::View<float*, Kokkos::LayoutRight, Memory> none("no bias", 0);
  for (const Layer& L : s) {
    const Box zbox = volumeOf(L.z);
    kernels::conv3dForward(exec, L.x, L.w, none, L.g, L.z, zbox);
    kernels::leakyReluForward(exec, L.z, kSlope, L.a, zbox);
    if (L.pool) kernels::avgPool3dForward(exec, L.a, kPool, L.p, volumeOf(L.p));
  }
}

void backward(const Exec& exec, const std::vector<Layer>& s) {
  const Kokkos::View<float*, Kokkos::LayoutRight, Memory> none("no bias", 0);
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    const Layer& L = *it;
    const Box zbox = volumeOf(L.z);
    if (L.pool) kernels::avgPool3dBackward(exec, L.dp, kPool, L.da, zbox);
    kernels::leakyReluBackward(exec, L.z, L.da, kSlope, L.dz, zbox);
    kernels::conv3dBackwardFilter(exec, L.x, L.dz, L.g, L.dw, none, zbox, false);
    kernels::conv3dBackwardData(exec, L.dz, L.w, L.g, L.dx, volumeOf(L.x));
  }
}

void cosmoflowStack(benchmark::State& state) {
  const index_t input = state.range(0), samples = state.range(2);
  const double width = double(state.range(1)) / 100.0;
  const auto stack = makeStack(samples, input, width);
  // Constant input and output gradient (the ghosts stay zero: the padding); the kernels' time does
  // not depend on the values.
  Kokkos::deep_copy(stack.front().x.owned(), 0.5f);
  const Layer& last = stack.back();
  Kokkos::deep_copy(last.pool ? last.dp.owned() : last.da.owned(), 0.01f);
  double flops = 0;
  for (const Layer& L : stack)
    flops += 3 * L.flops;
  const Exec exec;
  forward(exec, stack);  // warm-up
  backward(exec, stack);
  double fwd = 0, bwd = 0;
  for (auto _ : state) {
    fence(exec, "before timing");
    const auto t0 = Clock::now();
    forward(exec, stack);
    fence(exec, "forward done");
    const auto t1 = Clock::now();
    backward(exec, stack);
    fence(exec, "backward done");
    const auto t2 = Clock::now();
    fwd = std::chrono::duration<double>(t1 - t0).count();
    bwd = std::chrono::duration<double>(t2 - t1).count();
    state.SetIterationTime(fwd + bwd);
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["fwd_ms"] = fwd * 1e3;
  state.counters["bwd_ms"] = bwd * 1e3;
}

BENCHMARK(cosmoflowStack)
    ->Name("cosmoflow_stack/smoke")
    ->Args({32, 25, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(cosmoflowStack)
    ->Name("cosmoflow_stack/cosmoflow128")
    ->Args({128, 100, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace halo3d::bench
