#pragma once
// What the pooling benchmarks share: the pooling layers of the two models (CosmoFlow's average
// k3s2p1 pools after convolutions 0-4 at 64^3 and 128^3, width 0.25 and 1; the U-Net's max k2s2
// pools at 64^3, base 8, depth 3), halo3d's pooling call on one sample with the compulsory bytes it
// moves, and the STREAM anchor those bytes are compared with. bench_pool3d times halo3d's paths;
// bench_pool3d_onednn times the same rows and oneDNN's pooling side by side.
#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/kernels/Pool3d.hpp"
#include "support/ConvPasses.hpp"
#include "support/StreamBandwidth.hpp"

namespace halo3d::bench {

struct PoolShape {
  index_t c, d;  // channels, input D = H = W
  const char* window;
  WindowGeometry g;
  std::string name() const {
    return "C" + std::to_string(c) + "_D" + std::to_string(d) + "_" + window;
  }
};

// Every pooling layer of the two models, each in its model's kind (max for the k2s2 rows, average
// for the k3s2p1 rows), not counting C16_D64_k2s2 and C4_D128_k3s2p1, which bench_pool3d registers
// among its original shapes.
inline std::vector<PoolShape> modelPoolShapes() {
  const WindowGeometry k3s2p1 = WindowGeometry::cubic(3, 2, 1);
  return {{4, 64, "k3s2p1", k3s2p1},
          {8, 32, "k3s2p1", k3s2p1},
          {16, 16, "k3s2p1", k3s2p1},
          {32, 4, "k3s2p1", k3s2p1},
          {32, 32, "k3s2p1", k3s2p1},
          {64, 16, "k3s2p1", k3s2p1},
          {128, 4, "k3s2p1", k3s2p1},
          {8, 64, "k3s2p1", k3s2p1},
          {16, 32, "k3s2p1", k3s2p1},
          {32, 8, "k3s2p1", k3s2p1},
          {64, 4, "k3s2p1", k3s2p1},
          {16, 128, "k3s2p1", k3s2p1},
          {32, 64, "k3s2p1", k3s2p1},
          {64, 32, "k3s2p1", k3s2p1},
          {128, 8, "k3s2p1", k3s2p1},
          {256, 4, "k3s2p1", k3s2p1},
          {32, 32, "k2s2", WindowGeometry::cubic(2, 2)},
          {64, 16, "k2s2", WindowGeometry::cubic(2, 2)}};
}

// The STREAM copy rate, measured on first use (after Kokkos is initialised) and shared by every row
// of the run.
inline double streamBytesPerSecond() {
  static const double bytes_per_second = streamCopyBytesPerSecond();
  return bytes_per_second;
}

// The compulsory bytes of one call: x and y in T, plus the int64 argmax for max pooling (read
// backward, written forward).
inline double poolBytes(index_t channels, index_t extent, const WindowGeometry& g, bool is_max,
                        double value_bytes) {
  const Extents3 o = g.outputExtents({extent, extent, extent});
  const double in = double(channels) * double(extent * extent * extent);
  const double out = double(channels) * double(o[0] * o[1] * o[2]);
  return (in + out) * value_bytes + (is_max ? out * double(sizeof(index_t)) : 0.0);
}

// `GB/s` (rate of the compulsory bytes), `stream_GB/s` and `pct_of_stream`.
inline void setPoolCounters(benchmark::State& state, double bytes, double seconds) {
  const double stream = streamBytesPerSecond();
  state.SetBytesProcessed(int64_t(bytes) * int64_t(state.iterations()));
  state.counters["stream_GB/s"] = stream / 1e9;
  state.counters["pct_of_stream"] =
      100.0 * bytes * double(state.iterations()) / (seconds > 1e-30 ? seconds : 1e-30) / stream;
}

// A pattern of few ties. A free function, not the constructor below: nvcc refuses an extended
// device lambda inside a constructor, whose address cannot be taken.
template <class T, class Exec, class View>
void fillPoolPattern(const View& xv) {
  Kokkos::parallel_for(
      "bench_fill",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<index_t>>(Exec(), 0, index_t(xv.size())),
      KOKKOS_LAMBDA(const index_t i) { xv.data()[i] = T(float((i * 7919) % 10007) - 5000.0f); });
}

// One sample's tensors for a pooling row, x filled with a pattern of few ties, y and argmax from a
// forward pass, and the call of one pass on them.
template <class T, class Memory>
struct PoolBuffers {
  using Exec = typename Memory::execution_space;
  WindowGeometry g;
  HaloTensor<T, Memory> x, y;
  HaloTensor<index_t, Memory> argmax;

  PoolBuffers(index_t channels, index_t e, const WindowGeometry& geometry)
      : g(geometry),
        x("x", sampleBlock(channels, {e, e, e})),
        y("y", sampleBlock(channels, geometry.outputExtents({e, e, e}))),
        argmax("argmax", y.block()) {
    fillPoolPattern<T, Exec>(x.view());
    kernels::maxPool3dForward(Exec(), x, g, y, argmax, y.block().owned());
  }

  // Backward passes write dx into x and read y as dy.
  void run(const Exec& exec, bool is_max, bool backward, KernelPath path) const {
    if (backward) {
      if (is_max)
        kernels::maxPool3dBackward(exec, y, argmax, g, x, x.block().owned(), y.block().owned(),
                                   path);
      else
        kernels::avgPool3dBackward(exec, y, g, x, x.block().owned(), y.block().owned(), path);
    } else {
      if (is_max)
        kernels::maxPool3dForward(exec, x, g, y, argmax, y.block().owned(), path);
      else
        kernels::avgPool3dForward(exec, x, g, y, y.block().owned(), path);
    }
  }
};

}  // namespace halo3d::bench
