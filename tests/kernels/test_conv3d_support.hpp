#pragma once
// Helpers shared by the conv3d test files: a conv problem (shapes + geometry) with host tensors
// sized for a one-block run, random fills, and the error measure the tests report.

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <random>
#include <string>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/core/TensorBlock.hpp"

namespace halo3d::testing {

using HostExec = Kokkos::DefaultHostExecutionSpace;
template <class T>
using HostTensor = HaloTensor<T, Kokkos::HostSpace>;
template <class T>
using HostWeights = Kokkos::View<T*****, Kokkos::LayoutRight, Kokkos::HostSpace>;
template <class T>
using HostBias = Kokkos::View<T*, Kokkos::LayoutRight, Kokkos::HostSpace>;

// One conv3d problem: x is (samples, in_ch, volume), y (samples, out_ch, g.outputExtents(volume)).
struct ConvCase {
  index_t samples = 1, in_ch = 1, out_ch = 1;
  Extents3 volume{1, 1, 1};
  WindowGeometry g;
  bool bias = true;

  Extents3 outVolume() const { return g.outputExtents(volume); }
  Box inBox() const { return Box::fromExtents(volume); }
  Box outBox() const { return Box::fromExtents(outVolume()); }
  // The ghost widths a one-block x needs for its whole output: the padding, trimmed to what is
  // read.
  HaloWidths inHalo() const { return haloWidthsForBlock(g, inBox(), outBox()); }
  Shape5 inShape() const { return {samples, in_ch, volume[0], volume[1], volume[2]}; }
  Shape5 outShape() const {
    const Extents3 o = outVolume();
    return {samples, out_ch, o[0], o[1], o[2]};
  }
  friend std::ostream& operator<<(std::ostream& os, const ConvCase& c) {
    return os << "N" << c.samples << " I" << c.in_ch << " O" << c.out_ch << " vol(" << c.volume[0]
              << ',' << c.volume[1] << ',' << c.volume[2] << ") k(" << c.g.kernel[0] << ','
              << c.g.kernel[1] << ',' << c.g.kernel[2] << ") s(" << c.g.stride[0] << ','
              << c.g.stride[1] << ',' << c.g.stride[2] << ") dil(" << c.g.dilation[0] << ','
              << c.g.dilation[1] << ',' << c.g.dilation[2] << ") p(" << c.g.padding[0] << ','
              << c.g.padding[1] << ',' << c.g.padding[2] << ")" << (c.bias ? "" : " no-bias");
  }
};

inline WindowGeometry geometry(std::array<int, 3> k, std::array<int, 3> s, std::array<int, 3> dil,
                               std::array<int, 3> p) {
  return WindowGeometry{k, s, dil, p};
}

// Uniform values in [-1, 1) in every element of `view`'s span (for a tensor's View, ghosts too).
template <class View>
void fillUniform(const View& view, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  auto* p = view.data();
  for (std::size_t k = 0; k < view.span(); ++k)
    p[k] = typename View::value_type(dist(gen));
}

// Uniform values in the owned cells; ghosts stay as they are (zero after allocation: the padding).
template <class T>
void fillOwned(const HostTensor<T>& t, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  const auto o = t.owned();
  for (std::size_t n = 0; n < o.extent(0); ++n)
    for (std::size_t c = 0; c < o.extent(1); ++c)
      for (std::size_t d = 0; d < o.extent(2); ++d)
        for (std::size_t h = 0; h < o.extent(3); ++h)
          for (std::size_t w = 0; w < o.extent(4); ++w)
            o(n, c, d, h, w) = T(dist(gen));
}

// Every cell of the allocation set to `value` (a sentinel showing which cells a kernel wrote).
template <class T>
void fillAll(const HostTensor<T>& t, T value) {
  Kokkos::deep_copy(t.view(), value);
}

// max |a - b| / max |b| over two equally shaped Views (the relative error measure of these tests).
template <class A, class B>
double maxRelError(const A& a, const B& b) {
  double diff = 0, ref = 0;
  for (std::size_t k = 0; k < b.span(); ++k) {
    diff = std::max(diff, std::fabs(double(a.data()[k]) - double(b.data()[k])));
    ref = std::max(ref, std::fabs(double(b.data()[k])));
  }
  return ref > 0 ? diff / ref : diff;
}

// The same over the global cells `box` of two tensors with the same samples and channels.
template <class T, class U>
double maxRelError(const HostTensor<T>& a, const HostTensor<U>& b, const Box& box) {
  double diff = 0, ref = 0;
  const auto sa = a.block(), sb = b.block();
  for (index_t n = 0; n < sa.localSamples(); ++n)
    for (index_t c = 0; c < sa.channels(); ++c)
      for (index_t d = box.min(0); d < box.max(0); ++d)
        for (index_t h = box.min(1); h < box.max(1); ++h)
          for (index_t w = box.min(2); w < box.max(2); ++w) {
            const Extents3 la = sa.toLocal({d, h, w}), lb = sb.toLocal({d, h, w});
            const double va = double(a.view()(n, c, la[0], la[1], la[2]));
            const double vb = double(b.view()(n, c, lb[0], lb[1], lb[2]));
            diff = std::max(diff, std::fabs(va - vb));
            ref = std::max(ref, std::fabs(vb));
          }
  return ref > 0 ? diff / ref : diff;
}

// Bitwise equality of two allocations (same block): forward and backward-data must not depend on
// boxes.
template <class T>
::testing::AssertionResult identical(const HostTensor<T>& a, const HostTensor<T>& b) {
  for (std::size_t k = 0; k < a.view().span(); ++k)
    if (!(a.view().data()[k] == b.view().data()[k]))
      return ::testing::AssertionFailure() << "first difference at linear index " << k << ": "
                                           << a.view().data()[k] << " vs " << b.view().data()[k];
  return ::testing::AssertionSuccess();
}

// The interior of `box` (shrunk by `margin` on every side, clipped) and the six slabs around it, D
// first: disjoint boxes whose union is `box`, as a layer computes them around a halo exchange.
inline std::vector<Box> interiorAndSlabs(const Box& box, index_t margin) {
  std::vector<Box> pieces;
  Box rest = box;
  for (int d = 0; d < 3; ++d) {
    const index_t lo = std::min(rest.max(d), rest.min(d) + margin);
    const index_t hi = std::max(lo, rest.max(d) - margin);
    pieces.push_back(rest.withRange(d, rest.min(d), lo));
    pieces.push_back(rest.withRange(d, hi, rest.max(d)));
    rest = rest.withRange(d, lo, hi);
  }
  pieces.insert(pieces.begin(), rest);
  return pieces;
}

}  // namespace halo3d::testing
