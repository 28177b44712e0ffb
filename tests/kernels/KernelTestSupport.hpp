#pragma once
// Scaffolding shared by every kernel test: the host tensor types, global-coordinate fills, the
// relative error measure, bitwise comparison, the interior-and-slabs split a layer computes around
// its halo exchange, the one-rank block split, and shape-error messages.

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/TensorBlock.hpp"
#include "halo3d/kernels/KernelTypes.hpp"
#include "support/Cells.hpp"

namespace halo3d::testing {

using Exec = Kokkos::DefaultExecutionSpace;
using HostExec = Kokkos::DefaultHostExecutionSpace;
template <class T>
using HostTensor = HaloTensor<T, Kokkos::HostSpace>;

// A deterministic value in [-1, 1) for every global element, so that blocks of one tensor agree.
inline double valueAt(unsigned seed, index_t n, index_t c, index_t d, index_t h, index_t w) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull +
                    std::uint64_t((((n * 131 + c) * 1031 + d) * 1031 + h) * 1031 + w);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) / double(1ull << 52) - 1.0;
}

// value(n, c, global cell) as valueAt(seed) + offset.
inline auto randomValues(unsigned seed, double offset = 0) {
  return [=](index_t n, index_t c, const Extents3& g) {
    return valueAt(seed, n, c, g[0], g[1], g[2]) + offset;
  };
}

// Fills the allocation of t with value(n, c, global cell) inside the volume and `past` past it
// (zero is what a halo exchange leaves there; a huge value there catches reads past the volume).
template <class T, class M, class Value>
void fillGlobal(const HaloTensor<T, M>& t, const Value& value, T past = T(0)) {
  auto host = Kokkos::create_mirror_view(t.view());
  const TensorBlock& b = t.block();
  const Box volume = Box::fromExtents(b.globalExtents());
  forEachIndex5(
      host, [&](std::size_t n, std::size_t c, std::size_t d, std::size_t h, std::size_t w) {
        const Extents3 g = b.toGlobal({index_t(d), index_t(h), index_t(w)});
        host(n, c, d, h, w) =
            volume.contains(g) ? T(value(b.sampleBegin() + index_t(n), index_t(c), g)) : past;
      });
  Kokkos::deep_copy(t.view(), host);
}

// Every element of a (parameter) View from valueAt(seed) of its linear index.
template <class View>
void fillView(const View& v, unsigned seed) {
  auto host = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < host.size(); ++i)
    host.data()[i] = typename View::value_type(valueAt(seed, 0, 0, 0, 0, index_t(i)));
  Kokkos::deep_copy(v, host);
}

// A host copy of a tensor in any memory space.
template <class T, class M>
HostTensor<T> hostCopy(const HaloTensor<T, M>& t) {
  HostTensor<T> h(t.label() + "_host", t.block());
  Kokkos::deep_copy(h.view(), t.view());
  return h;
}

// max |a - b| / max |b| over two equally shaped Views in any memory space (the relative error
// measure of the kernel tests; 0 for exact equality).
template <class A, class B>
double maxRelError(const A& a, const B& b) {
  const auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  double diff = 0, ref = 0;
  for (std::size_t k = 0; k < hb.span(); ++k) {
    diff = std::max(diff, std::fabs(double(ha.data()[k]) - double(hb.data()[k])));
    ref = std::max(ref, std::fabs(double(hb.data()[k])));
  }
  return ref > 0 ? diff / ref : diff;
}

// f(a's element, b's element) at every global cell of `box`, for all samples and channels of a.
template <class A, class B, class F>
void forEachCellPair(const A& a, const B& b, const Box& box, const F& f) {
  for (index_t n = 0; n < a.block().localSamples(); ++n)
    for (index_t c = 0; c < a.block().channels(); ++c)
      for (index_t d = box.min(0); d < box.max(0); ++d)
        for (index_t h = box.min(1); h < box.max(1); ++h)
          for (index_t w = box.min(2); w < box.max(2); ++w) {
            const Extents3 la = a.toLocal({d, h, w}), lb = b.toLocal({d, h, w});
            f(a.view()(n, c, la[0], la[1], la[2]), b.view()(n, c, lb[0], lb[1], lb[2]));
          }
}

// max |a - b| / max |b| over the global cells `box` of two host tensors.
template <class T, class U>
double maxRelError(const HostTensor<T>& a, const HostTensor<U>& b, const Box& box) {
  double diff = 0, ref = 0;
  forEachCellPair(a, b, box, [&](const T& va, const U& vb) {
    diff = std::max(diff, std::fabs(double(va) - double(vb)));
    ref = std::max(ref, std::fabs(double(vb)));
  });
  return ref > 0 ? diff / ref : diff;
}

// Bitwise equality of two allocations of the same block.
template <class T>
::testing::AssertionResult identical(const HostTensor<T>& a, const HostTensor<T>& b) {
  if (!(a.block() == b.block())) return ::testing::AssertionFailure() << "different blocks";
  for (std::size_t k = 0; k < a.view().span(); ++k)
    if (!(a.view().data()[k] == b.view().data()[k]))
      return ::testing::AssertionFailure() << "first difference at linear index " << k << ": "
                                           << a.view().data()[k] << " vs " << b.view().data()[k];
  return ::testing::AssertionSuccess();
}

// Bitwise equality of two host tensors over the global cells `box`.
template <class T>
bool identicalOn(const HostTensor<T>& a, const HostTensor<T>& b, const Box& box) {
  bool same = true;
  forEachCellPair(a, b, box, [&](const T& va, const T& vb) {
    if (va != vb) same = false;
  });
  return same;
}

// sum over the allocations of a * b, in memory order (the test loss <y, dy>).
template <class T>
double flatDot(const HostTensor<T>& a, const HostTensor<T>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.view().size(); ++i)
    sum += a.view().data()[i] * b.view().data()[i];
  return sum;
}

// The interior of `box` (shrunk by `margin` on every side, clipped) and the six slabs around it, D
// first: disjoint boxes whose union is `box`, as a layer computes them around a halo exchange. Some
// may be empty. The interior comes last unless `interior_first` (the order partial sums add up in).
inline std::vector<Box> interiorAndSlabs(const Box& box, index_t margin,
                                         bool interior_first = false) {
  std::vector<Box> pieces;
  Box rest = box;
  for (int d = 0; d < 3; ++d) {
    const index_t lo = std::min(rest.max(d), rest.min(d) + margin);
    const index_t hi = std::max(lo, rest.max(d) - margin);
    pieces.push_back(rest.withRange(d, rest.min(d), lo));
    pieces.push_back(rest.withRange(d, hi, rest.max(d)));
    rest = rest.withRange(d, lo, hi);
  }
  pieces.insert(interior_first ? pieces.begin() : pieces.end(), rest);
  return pieces;
}

// The input cells inside the volume `extents` that the outputs `box` of a window geometry read:
// where a block of a split adds its backward-data (scatter-sum form, ghosts included).
template <class Geometry>
Box inputWindowOf(const Geometry& g, Box box, const Extents3& extents) {
  for (int d = 0; d < 3; ++d) {
    const auto win = g.inputWindow(d, box.min(d), box.max(d));
    box = box.withRange(d, std::max<index_t>(0, win[0]),
                        std::max<index_t>(0, std::min(win[1], extents[d])));
  }
  return box;
}

// Adds the global cells `box` of a block's tensor onto a one-block sum (whole volume, no ghosts).
template <class T>
void addOnto(const HostTensor<T>& sum, const HostTensor<T>& part, const Box& box) {
  forEachCellPair(sum, part, box, [](T& s, const T& p) { s += p; });
}

// The message of the `Error` f throws (fails the test if it throws nothing).
template <class Error, class F>
std::string errorMessage(const F& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return {};
}

inline void expectContains(const std::string& message, const std::string& what) {
  EXPECT_NE(message.find(what), std::string::npos)
      << "message '" << message << "' lacks '" << what << "'";
}

inline void expectContainsAll(const std::string& message,
                              std::initializer_list<const char*> whats) {
  for (const char* what : whats)
    expectContains(message, what);
}

// A one-sample block of a split volume: it owns the global cells [0, hi), without ghosts.
inline TensorBlock cornerBlock(const Shape5& global_shape, const Extents3& hi) {
  return TensorBlock(global_shape, 0, 1, Box({0, 0, 0}, hi), HaloWidths{});
}

}  // namespace halo3d::testing

// Two tests: Suite.FloatTest runs check<float> float_args, Suite.DoubleTest check<double>
// double_args (the args: parenthesised argument lists).
#define HALO3D_FLOAT_DOUBLE_TESTS(Suite, FloatTest, DoubleTest, check, float_args, double_args) \
  TEST(Suite, FloatTest) {                                                                      \
    check<float> float_args;                                                                    \
  }                                                                                             \
  TEST(Suite, DoubleTest) {                                                                     \
    check<double> double_args;                                                                  \
  }

// The four tests of a sweep fixture Suite, checkAgainstReference<T>(GetParam(), path) on both
// kernel paths in both precisions: Suite.FastestPathMatchesReferenceFloat, ...Double, and
// Suite.DevicePathMatchesReferenceFloat, ...Double.
#define HALO3D_PATH_SWEEP_TESTS(Suite)                              \
  TEST_P(Suite, FastestPathMatchesReferenceFloat) {                 \
    checkAgainstReference<float>(GetParam(), KernelPath::Fastest);  \
  }                                                                 \
  TEST_P(Suite, FastestPathMatchesReferenceDouble) {                \
    checkAgainstReference<double>(GetParam(), KernelPath::Fastest); \
  }                                                                 \
  TEST_P(Suite, DevicePathMatchesReferenceFloat) {                  \
    checkAgainstReference<float>(GetParam(), KernelPath::Device);   \
  }                                                                 \
  TEST_P(Suite, DevicePathMatchesReferenceDouble) {                 \
    checkAgainstReference<double>(GetParam(), KernelPath::Device);  \
  }
