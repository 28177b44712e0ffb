#pragma once
// Helpers shared by the tests of the element-wise, batch-norm, dropout, loss, dense and channel
// kernels.
//
// Kernels run on DefaultExecutionSpace tensors; the naive references on host copies (HostTensor),
// so the tests also hold where the two memory spaces differ. A cell's test value is a hash of its
// GLOBAL coordinates, so every block of a split sees the same values as the whole volume.

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "KernelTestSupport.hpp"
#include "halo3d/core/GridShape.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/TensorBlock.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::testing {

template <class T>
using DeviceTensor = kernels::Tensor<T, Exec>;
template <class T>
using DeviceVector = kernels::Vector<T, Exec>;
template <class T>
using HostVector = kernels::Vector<T, HostExec>;

// Both codes of every kernel: the host code, and the device code (what a CUDA build runs) forced
// onto the host backend.
inline constexpr KernelPath kPaths[] = {KernelPath::Fastest, KernelPath::Device};

// Uniform in [lo, hi) from a splitmix64 hash of (seed, key): independent of the generator under
// test.
inline double hashUniform(std::uint64_t seed, std::uint64_t key, double lo = -1.0,
                          double hi = 1.0) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + key + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return lo + (hi - lo) * double(z >> 11) * 0x1p-53;
}

// C-order linear index of global cell (n, c, d, h, w) of a tensor of global shape s.
inline std::uint64_t globalIndex(const Shape5& s, index_t n, index_t c, index_t d, index_t h,
                                 index_t w) {
  return std::uint64_t((((n * s[1] + c) * s[2] + d) * s[3] + h) * s[4] + w);
}

// f(n_local, c, d, h, w, n_global, local d, h, w) for every allocated cell of t inside the global
// volume.
template <class Tensor, class F>
void forEachAllocatedCell(const Tensor& t, const F& f) {
  const TensorBlock& b = t.block();
  const Box volume = Box::fromExtents(b.globalExtents());
  const Box held = intersect(volume, b.owned().grown(b.halo().loExtents(), b.halo().hiExtents()));
  for (index_t n = 0; n < b.localSamples(); ++n)
    for (index_t c = 0; c < b.channels(); ++c)
      for (index_t d = held.min(0); d < held.max(0); ++d)
        for (index_t h = held.min(1); h < held.max(1); ++h)
          for (index_t w = held.min(2); w < held.max(2); ++w) {
            const Extents3 l = b.toLocal({d, h, w});
            f(n, c, d, h, w, b.sampleBegin() + n, l);
          }
}

// A host tensor of `block` whose cells inside the volume (ghosts too) hold hashUniform(seed, global
// index).
template <class T>
HostTensor<T> hostRandom(const std::string& label, const TensorBlock& block, std::uint64_t seed,
                         double lo = -1.0, double hi = 1.0) {
  HostTensor<T> t(label, block);
  const auto v = t.view();
  const Shape5& s = block.globalShape();
  forEachAllocatedCell(
      t, [&](index_t n, index_t c, index_t d, index_t h, index_t w, index_t gn, const Extents3& l) {
        v(n, c, l[0], l[1], l[2]) = T(hashUniform(seed, globalIndex(s, gn, c, d, h, w), lo, hi));
      });
  return t;
}

// Integer labels in [lo, hi) hashed from global coordinates, as hostRandom.
template <class L>
HostTensor<L> hostLabels(const std::string& label, const TensorBlock& block, std::uint64_t seed,
                         L lo, L hi) {
  HostTensor<L> t(label, block);
  const auto v = t.view();
  const Shape5& s = block.globalShape();
  forEachAllocatedCell(
      t, [&](index_t n, index_t c, index_t d, index_t h, index_t w, index_t gn, const Extents3& l) {
        const double u = hashUniform(seed, globalIndex(s, gn, c, d, h, w), 0.0, 1.0);
        v(n, c, l[0], l[1], l[2]) = L(lo + L(u * double(hi - lo)));
      });
  return t;
}

template <class T>
DeviceTensor<T> toDevice(const HostTensor<T>& h) {
  DeviceTensor<T> d(h.label(), h.block());
  Kokkos::deep_copy(d.view(), h.view());
  return d;
}

// Fences, then copies.
template <class T>
HostTensor<T> toHost(const DeviceTensor<T>& d) {
  Kokkos::fence();
  HostTensor<T> h(d.label(), d.block());
  Kokkos::deep_copy(h.view(), d.view());
  return h;
}

template <class T, class E = Exec>
kernels::Vector<T, E> makeVector(const std::string& label, const std::vector<double>& values) {
  kernels::Vector<T, E> v(label, values.size());
  auto m = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < values.size(); ++i)
    m(i) = T(values[i]);
  Kokkos::deep_copy(v, m);
  return v;
}

// Fences, then copies the values out as doubles.
template <class View>
std::vector<double> values(const View& v) {
  Kokkos::fence();
  const auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> out(m.size());
  for (std::size_t i = 0; i < m.size(); ++i)
    out[i] = double(m.data()[i]);
  return out;
}

inline std::vector<double> hashValues(std::size_t n, std::uint64_t seed, double lo = -1.0,
                                      double hi = 1.0) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = hashUniform(seed, i, lo, hi);
  return v;
}

inline double maxRelError(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0.0, ref = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    diff = std::max(diff, std::fabs(a.at(i) - b[i]));
    ref = std::max(ref, std::fabs(b[i]));
  }
  return ref > 0.0 ? diff / ref : diff;
}

// The blocks of every rank of `grid` for a tensor of global shape `shape`.
inline std::vector<TensorBlock> gridBlocks(const Shape5& shape, const GridShape& grid,
                                           const HaloWidths& halo = {}) {
  std::vector<TensorBlock> blocks;
  for (int r = 0; r < grid.size(); ++r)
    blocks.push_back(TensorBlock::forGrid(shape, grid, grid.coordsOf(r), halo));
  return blocks;
}

// The owned cells of a host tensor as doubles, in (n, c, d, h, w) order.
template <class T>
std::vector<double> ownedValues(const HostTensor<T>& t) {
  const auto o = t.owned();
  std::vector<double> out;
  forEachIndex5(o, [&](std::size_t n, std::size_t c, std::size_t d, std::size_t h, std::size_t w) {
    out.push_back(double(o(n, c, d, h, w)));
  });
  return out;
}

// Central differences (loss(x + h e_i) - loss(x - h e_i)) / 2h for every owned cell i of `x`, in
// ownedValues order; `x` is restored.
template <class T, class Loss>
std::vector<double> numericGradient(const HostTensor<T>& x, const Loss& loss, double h = 1e-5) {
  const auto o = x.owned();
  std::vector<double> grad;
  forEachIndex5(o, [&](std::size_t n, std::size_t c, std::size_t d, std::size_t hh, std::size_t w) {
    grad.push_back(centralDifference(o(n, c, d, hh, w), h, loss));
  });
  return grad;
}

// The same for every entry of a host View.
template <class View, class Loss>
std::vector<double> numericGradientOf(const View& v, const Loss& loss, double h = 1e-5) {
  std::vector<double> grad;
  for (std::size_t i = 0; i < v.span(); ++i)
    grad.push_back(centralDifference(v.data()[i], h, loss));
  return grad;
}

// sum over the owned cells of a * b (the test loss <r, y> whose gradient with respect to y is r).
template <class T>
double dot(const HostTensor<T>& a, const HostTensor<T>& b) {
  const std::vector<double> va = ownedValues(a), vb = ownedValues(b);
  double s = 0.0;
  for (std::size_t i = 0; i < va.size(); ++i)
    s += va[i] * vb[i];
  return s;
}

// Shape of the shape-sweep tables: (N, C, D, H, W) and a halo (ghosts must not change results).
struct ShapeCase {
  Shape5 shape;
  HaloWidths halo;
};

inline std::vector<ShapeCase> shapeSweep() {
  return {{{1, 1, 1, 1, 1}, {}},
          {{2, 3, 4, 5, 6}, {}},
          {{1, 2, 3, 1, 7}, HaloWidths::uniform(1)},
          {{3, 1, 5, 3, 1}, HaloWidths{{0, 1, 2}, {2, 0, 1}}},
          {{2, 4, 1, 9, 17}, HaloWidths{{1, 0, 0}, {0, 0, 3}}}};
}

// f(path, shape case) on both kernel paths for every case of the shape sweep, traced with the
// path's name.
template <class F>
void forEachPathAndShape(const F& f) {
  for (KernelPath path : kPaths)
    for (const ShapeCase& sc : shapeSweep()) {
      SCOPED_TRACE(kernelPathName(path));
      f(path, sc);
    }
}

}  // namespace halo3d::testing
