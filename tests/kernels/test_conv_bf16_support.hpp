#pragma once
// Helpers of the bf16 convolution tests: random bf16 fills, and float64 copies of bf16 tensors and
// of bf16-rounded weights (their values or magnitudes) for the float64 references, which bound the
// float rounding error by sum|terms| when run on the magnitudes.

#include <Kokkos_Core.hpp>

#include <cmath>
#include <random>

#include "KernelTestSupport.hpp"
#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/HaloTensor.hpp"

namespace halo3d::testing {

// Uniform bf16 values in [-1, 1) in t's owned cells; ghosts as they are (zero: the padding).
template <class MemorySpace>
void fillOwnedBf16(const HaloTensor<bf16, MemorySpace>& t, unsigned seed) {
  HaloTensor<bf16, Kokkos::HostSpace> h("h", t.block());
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const auto o = h.owned();
  forEachIndex5(o, [&](std::size_t n, std::size_t c, std::size_t d, std::size_t hh, std::size_t w) {
    o(n, c, d, hh, w) = bf16(dist(gen));
  });
  Kokkos::deep_copy(t.view(), h.view());
}

// A float64 host copy of a bf16 tensor (same block): its values, or their magnitudes.
template <class MemorySpace>
HostTensor<double> toDouble(const HaloTensor<bf16, MemorySpace>& t, bool magnitude = false) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.view());
  HostTensor<double> d("d", t.block());
  for (std::size_t i = 0; i < h.span(); ++i) {
    const double v = double(float(h.data()[i]));
    d.view().data()[i] = magnitude ? std::abs(v) : v;
  }
  return d;
}

// A float64 host copy of float weights (rank 5, LayoutRight), rounded through bf16 when `round`:
// their values, or their magnitudes.
template <class View>
Kokkos::View<double*****, Kokkos::LayoutRight, Kokkos::HostSpace> toDoubleWeights(
    const View& w, bool round, bool magnitude = false) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
  Kokkos::View<double*****, Kokkos::LayoutRight, Kokkos::HostSpace> d(
      "wd", w.extent(0), w.extent(1), w.extent(2), w.extent(3), w.extent(4));
  for (std::size_t i = 0; i < h.span(); ++i) {
    const double v = round ? double(float(bf16(h.data()[i]))) : double(h.data()[i]);
    d.data()[i] = magnitude ? std::abs(v) : v;
  }
  return d;
}

// A float64 host copy of a float bias (rank 1): its values, or their magnitudes.
template <class View>
Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::HostSpace> toDoubleBias(const View& b,
                                                                           bool magnitude = false) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::HostSpace> d("bd", b.extent(0));
  for (std::size_t i = 0; i < h.span(); ++i)
    d.data()[i] = magnitude ? std::abs(double(h.data()[i])) : double(h.data()[i]);
  return d;
}

}  // namespace halo3d::testing
