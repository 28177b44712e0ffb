#pragma once
// What the convolution (and pooling) benchmarks share: the three passes and their names, one
// sample's block, the conv3d shapes (a)-(e) that bench_conv3d_onednn and bench_conv3d_cudnn both
// time, deterministic fills, and halo3d's conv3d on one set of buffers, so that halo3d's figures in
// the two comparisons come from the same code.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/TensorBlock.hpp"
#include "halo3d/kernels/Conv3d.hpp"

namespace halo3d::bench {

enum class Pass { Forward, BackwardData, BackwardFilter };
constexpr Pass kPasses[] = {Pass::Forward, Pass::BackwardData, Pass::BackwardFilter};

inline const char* passName(Pass p) {
  return p == Pass::Forward ? "fwd" : (p == Pass::BackwardData ? "bwd_data" : "bwd_filter");
}

// One sample of `channels` channels on the given volume, without ghosts.
inline TensorBlock sampleBlock(index_t channels, const Extents3& e) {
  return TensorBlock::whole({1, channels, e[0], e[1], e[2]});
}

// One sample, a cubic input, a cubic kernel (3^3, stride 1, padding 1 unless named).
struct Conv3dShape {
  const char* name;
  index_t in_ch, out_ch, extent;  // input C, output K, input D = H = W
  int kernel = 3, stride = 1, pad = 1;
  index_t outExtent() const { return (extent + 2 * pad - kernel) / stride + 1; }
  // 2 N O I k^3 Do Ho Wo: one pass, no bias.
  double flops() const {
    const double o = double(outExtent());
    return 2.0 * double(out_ch * in_ch) * double(kernel * kernel * kernel) * o * o * o;
  }
};

// A tiny shape for CTest, then (a) C4_K16_D128, (b) C16_K32_D64, (c) C32_K64_D32, (d) C64_K64_D16,
// (e) C32_K32_D64.
inline const Conv3dShape kConv3dShapes[] = {
    {"smoke_C2_K4_D8", 2, 4, 8}, {"C4_K16_D128", 4, 16, 128}, {"C16_K32_D64", 16, 32, 64},
    {"C32_K64_D32", 32, 64, 32}, {"C64_K64_D16", 64, 64, 16}, {"C32_K32_D64", 32, 32, 64}};

// Deterministic values in [-1, 1) from the index: fills large buffers quickly, in parallel.
KOKKOS_INLINE_FUNCTION float hashValue(std::size_t k, std::uint32_t seed) {
  std::uint32_t h = std::uint32_t(k) * 2654435761u ^ seed;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return float(h & 0xffffff) / float(0x800000) - 1.0f;
}

// Every entry of `v`'s span, ghosts included, in [-scale, scale).
template <class View>
void fillHashed(const View& v, std::uint32_t seed, float scale = 1.0f) {
  using Exec = typename View::execution_space;
  auto* p = v.data();
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Exec>(0, v.span()),
      KOKKOS_LAMBDA(std::size_t k) { p[k] = scale * hashValue(k, seed); });
}

// halo3d's conv3d on one shape: x (with the padding as ghosts), y (also dy for the backward
// passes), dx, the weights and their gradient, and a bias and its gradient when asked for (else
// empty: no bias). Weights and dy are filled, x is left zero for the caller to fill.
template <class Memory>
struct Conv3dBuffers {
  using Tensor = HaloTensor<float, Memory>;
  using Weights = Kokkos::View<float*****, Kokkos::LayoutRight, Memory>;
  using Bias = Kokkos::View<float*, Kokkos::LayoutRight, Memory>;

  WindowGeometry g;
  Box in_volume, out_volume;
  Tensor x, dx, y;
  Weights w, dw;
  Bias b, db;

  Conv3dBuffers(const Conv3dShape& s, bool bias)
      : g(WindowGeometry::cubic(s.kernel, s.stride, s.pad)),
        in_volume(Box::fromExtents({s.extent, s.extent, s.extent})),
        out_volume(Box::fromExtents({s.outExtent(), s.outExtent(), s.outExtent()})),
        x("x", block(s.in_ch, s.extent, s.pad)),
        dx("dx", block(s.in_ch, s.extent, s.pad)),
        y("y", block(s.out_ch, s.outExtent(), 0)),
        w(noinit("w"), s.out_ch, s.in_ch, s.kernel, s.kernel, s.kernel),
        dw(noinit("dw"), s.out_ch, s.in_ch, s.kernel, s.kernel, s.kernel),
        b(noinit("b"), bias ? s.out_ch : 0),
        db(noinit("db"), bias ? s.out_ch : 0) {
    fillHashed(w, 1);
    if (bias) fillHashed(b, 2);
    fillHashed(y.view(), 3);
  }

  template <class Exec>
  void run(const Exec& exec, Pass pass) const {
    switch (pass) {
      case Pass::Forward:
        return kernels::conv3dForward(exec, x, w, b, g, y, out_volume);
      case Pass::BackwardData:
        return kernels::conv3dBackwardData(exec, y, w, g, dx, in_volume);
      case Pass::BackwardFilter:
        return kernels::conv3dBackwardFilter(exec, x, y, g, dw, db, out_volume, false);
    }
  }

 private:
  static TensorBlock block(index_t channels, index_t extent, int halo) {
    return TensorBlock::whole({1, channels, extent, extent, extent}, HaloWidths::uniform(halo));
  }
  static auto noinit(const char* label) {
    return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
  }
};

}  // namespace halo3d::bench
