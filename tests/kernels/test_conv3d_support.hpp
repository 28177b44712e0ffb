#pragma once
// Helpers shared by the conv3d test files: a conv problem (shapes + geometry) with host tensors
// sized for a one-block run, random fills, and the error measure the tests report.

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
#include <string>

#include "KernelTestSupport.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/core/TensorBlock.hpp"

namespace halo3d::testing {

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

// The weights and bias of a conv problem and their gradients (no bias: zero extent).
template <class T>
struct ConvParams {
  HostWeights<T> w, dw;
  HostBias<T> b, db;

  explicit ConvParams(const ConvCase& c)
      : w("w", c.out_ch, c.in_ch, c.g.kernel[0], c.g.kernel[1], c.g.kernel[2]),
        dw("dw", c.out_ch, c.in_ch, c.g.kernel[0], c.g.kernel[1], c.g.kernel[2]),
        b("b", c.bias ? c.out_ch : 0),
        db("db", c.bias ? c.out_ch : 0) {}
};

// A case's parameters and its x, y and dx tensors: whole volumes, x and dx with the input halo the
// window needs.
template <class T>
struct ConvProblem : ConvParams<T> {
  ConvCase c;
  HostTensor<T> x, y, dx;

  explicit ConvProblem(const ConvCase& cc)
      : ConvParams<T>(cc),
        c(cc),
        x("x", TensorBlock::whole(c.inShape(), c.inHalo())),
        y("y", TensorBlock::whole(c.outShape())),
        dx("dx", TensorBlock::whole(c.inShape(), c.inHalo())) {}
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
  forEachIndex5(o, [&](std::size_t n, std::size_t c, std::size_t d, std::size_t h, std::size_t w) {
    o(n, c, d, h, w) = T(dist(gen));
  });
}

// Every allocated cell (owned or ghost) of a host tensor that lies inside the global volume set to
// a value in [-1, 1) that depends only on the seed, the sample, the channel and the global cell, so
// that the blocks of a split and the whole volume hold the same data where they overlap (the ghosts
// inside the volume are what a halo exchange delivers); ghosts past the volume set to `outside`
// (zero: the padding, as a grid's blocks hold it).
template <class T>
void fillVolumeCells(const HostTensor<T>& t, unsigned seed, T outside = T(0)) {
  const TensorBlock& b = t.block();
  const Box volume = Box::fromExtents(b.globalExtents());
  const auto v = t.view();
  for (index_t n = 0; n < b.localSamples(); ++n)
    forEachAllocationCell(b, [&](index_t c, index_t d, index_t h, index_t w, const Extents3& g) {
      T value = outside;
      if (volume.contains(g)) {
        const index_t cell =
            (((b.sampleBegin() + n) * b.channels() + c) * volume.extent(0) + g[0]) *
                volume.extent(1) * volume.extent(2) +
            g[1] * volume.extent(2) + g[2];
        // splitmix64 of the cell's index
        std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * std::uint64_t(cell + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        value = T(double(z >> 11) * 0x1.0p-52 - 1.0);
      }
      v(n, c, d, h, w) = value;
    });
}

// Every cell of the allocation set to `value` (a sentinel showing which cells a kernel wrote).
template <class T>
void fillAll(const HostTensor<T>& t, T value) {
  Kokkos::deep_copy(t.view(), value);
}

}  // namespace halo3d::testing
