#include "halo3d/nn/plan/SpeedProbe.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/kernels/Activations.hpp"
#include "halo3d/kernels/Conv3d.hpp"

namespace halo3d::nn {

namespace {

using Clock = std::chrono::steady_clock;
using Exec = Kokkos::DefaultExecutionSpace;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Values in [-1, 1) that differ per element, so that LeakyReLU takes both branches.
template <class View>
void fillSpan(const View& v, unsigned seed) {
  float* p = v.data();
  const std::size_t n = v.span();
  Kokkos::parallel_for(
      "halo3d::speed_probe::fill", Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(std::size_t i) {
        const unsigned x = unsigned(i) * 2654435761u + seed * 40503u + 1u;
        p[i] = float(x >> 8) / float(1u << 23) - 1.0f;
      });
}

}  // namespace

SpeedProbe timeSpeedProbe(int repetitions) {
  require<InputError>(repetitions >= 1, "speed probe repetitions must be >= 1, got ", repetitions);
  const Exec exec;
  constexpr index_t kC = 8, kE = 32;  // the convolution's channels and edge
  HaloTensor<float> x("halo3d::speed_probe::x",
                      TensorBlock::whole({1, kC, kE, kE, kE}, HaloWidths::uniform(1)));
  HaloTensor<float> dx("halo3d::speed_probe::dx",
                       TensorBlock::whole({1, kC, kE, kE, kE}, HaloWidths::uniform(1)));
  HaloTensor<float> y("halo3d::speed_probe::y", TensorBlock::whole({1, kC, kE, kE, kE}));
  Kokkos::View<float*****, Kokkos::LayoutRight> w("halo3d::speed_probe::w", kC, kC, 3, 3, 3);
  Kokkos::View<float*****, Kokkos::LayoutRight> dw("halo3d::speed_probe::dw", kC, kC, 3, 3, 3);
  Kokkos::View<float*, Kokkos::LayoutRight> b("halo3d::speed_probe::b", kC);
  Kokkos::View<float*, Kokkos::LayoutRight> db("halo3d::speed_probe::db", kC);
  // 16 MiB per tensor: well past the caches, so the LeakyReLU runs at memory speed.
  const TensorBlock big = TensorBlock::whole({1, 16, 64, 64, 64});
  HaloTensor<float> a("halo3d::speed_probe::a", big), ay("halo3d::speed_probe::ay", big),
      ady("halo3d::speed_probe::ady", big);
  fillSpan(x.view(), 1);
  fillSpan(w, 2);
  fillSpan(a.view(), 3);
  fillSpan(ady.view(), 4);
  exec.fence();
  const WindowGeometry g = WindowGeometry::cubic(3, 1, 1);
  const Box cells = Box::fromExtents({kE, kE, kE}), all = Box::fromExtents({64, 64, 64});
  std::vector<double> total, compute, memory;
  for (int r = 0; r <= repetitions; ++r) {  // the first run warms up
    const auto t0 = Clock::now();
    kernels::conv3dForward(exec, x, w, b, g, y, cells);
    kernels::conv3dBackwardData(exec, y, w, g, dx, cells);
    kernels::conv3dBackwardFilter(exec, x, y, g, dw, db, cells, false);
    exec.fence();
    const auto t1 = Clock::now();
    kernels::leakyReluForward(exec, a, kernels::kLeakyReluSlope, ay, all);
    kernels::leakyReluBackward(exec, a, ady, kernels::kLeakyReluSlope, ay, all);
    exec.fence();
    const auto t2 = Clock::now();
    if (r == 0) continue;
    compute.push_back(std::chrono::duration<double>(t1 - t0).count());
    memory.push_back(std::chrono::duration<double>(t2 - t1).count());
    total.push_back(std::chrono::duration<double>(t2 - t0).count());
  }
  SpeedProbe p;
  p.seconds = median(total);
  p.compute_s = median(compute);
  p.memory_s = median(memory);
  p.repetitions = repetitions;
  return p;
}

}  // namespace halo3d::nn
