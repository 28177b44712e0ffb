// conv3dForwardBf16 against a float64 reference of the same products (bf16 inputs, weights rounded
// to bf16), on both paths (the host engine where the build has AVX512-BF16, and the generic/device
// code), over channel counts that leave odd channels and partial blocks of 8 output channels, W
// tails, rows left over by the 3-row tiles, and a strided geometry that takes the generic code.
//
// Tolerance, per output: the float sum of n exact products (bf16 x bf16 fits in float) errs by at
// most n u sum|terms| (u = 2^-24), and the final rounding to bf16 by half an ulp: 2^-8 |y|. The
// check allows 2^-8 |ref| + 2 n u sum|terms|.
#include <gtest/gtest.h>

#include <cmath>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/kernels/Conv3dBf16.hpp"
#include "test_conv3d_support.hpp"

namespace halo3d::kernels {
namespace {

using testing::ConvCase;
using testing::geometry;
using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using Bf16Tensor = HaloTensor<bf16, Memory>;

struct Bf16Problem {
  ConvCase c;
  Kokkos::View<float*****, Kokkos::LayoutRight, Memory> w;
  Kokkos::View<float*, Kokkos::LayoutRight, Memory> b;
  Bf16Tensor x;

  explicit Bf16Problem(const ConvCase& cc)
      : c(cc),
        w("w", c.out_ch, c.in_ch, c.g.kernel[0], c.g.kernel[1], c.g.kernel[2]),
        b("b", c.bias ? c.out_ch : 0),
        x("x", TensorBlock::whole(c.inShape(), c.inHalo())) {
    auto hw = Kokkos::create_mirror_view(w);
    auto hb = Kokkos::create_mirror_view(b);
    testing::fillUniform(hw, 11);
    testing::fillUniform(hb, 12);
    Kokkos::deep_copy(w, hw);
    Kokkos::deep_copy(b, hb);
    // Owned cells random, ghosts zero (the padding).
    HaloTensor<bf16, Kokkos::HostSpace> hx("hx", x.block());
    std::mt19937 gen(13);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const auto o = hx.owned();
    testing::forEachIndex5(o, [&](std::size_t n, std::size_t ch, std::size_t d, std::size_t h,
                                  std::size_t ww) { o(n, ch, d, h, ww) = bf16(dist(gen)); });
    Kokkos::deep_copy(x.view(), hx.view());
  }

  Bf16Tensor run(KernelPath path, const std::vector<Box>& boxes) const {
    Bf16Tensor y("y", TensorBlock::whole(c.outShape()));
    Kokkos::deep_copy(y.view(), bf16(-999.0f));  // a sentinel: every owned cell must be written
    for (const Box& box : boxes)
      conv3dForwardBf16(Exec(), x, w, b, c.g, y, box, path);
    Kokkos::fence();
    return y;
  }

  // Outputs off the tolerance (reported, the first few).
  int check(const Bf16Tensor& y) const {
    const auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x.view());
    const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.view());
    const auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
    const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
    const auto shift_in = x.block().halo();
    const Extents3 out = c.outVolume();
    const double n_terms = double(c.in_ch * c.g.kernel[0] * c.g.kernel[1] * c.g.kernel[2]);
    int wrong = 0;
    for (index_t n = 0; n < c.samples; ++n)
      for (index_t o = 0; o < c.out_ch; ++o)
        for (index_t d = 0; d < out[0]; ++d)
          for (index_t h = 0; h < out[1]; ++h)
            for (index_t ww = 0; ww < out[2]; ++ww) {
              double ref = c.bias ? double(hb(o)) : 0.0, abs_sum = std::abs(ref);
              for (index_t i = 0; i < c.in_ch; ++i)
                for (int a = 0; a < c.g.kernel[0]; ++a)
                  for (int bb = 0; bb < c.g.kernel[1]; ++bb)
                    for (int k = 0; k < c.g.kernel[2]; ++k) {
                      const index_t xd =
                          d * c.g.stride[0] - c.g.padding[0] + a * c.g.dilation[0] + shift_in.lo[0];
                      const index_t xh = h * c.g.stride[1] - c.g.padding[1] + bb * c.g.dilation[1] +
                                         shift_in.lo[1];
                      const index_t xw = ww * c.g.stride[2] - c.g.padding[2] + k * c.g.dilation[2] +
                                         shift_in.lo[2];
                      const double t = double(float(hx(n, i, xd, xh, xw))) *
                                       double(float(bf16(hw(o, i, a, bb, k))));
                      ref += t;
                      abs_sum += std::abs(t);
                    }
              const double got = double(float(hy(n, o, d, h, ww)));
              const double tol =
                  std::ldexp(std::abs(ref), -8) + 2.0 * n_terms * std::ldexp(abs_sum, -24);
              if (!(std::abs(got - ref) <= tol) && ++wrong <= 3)
                ADD_FAILURE() << c << ": y(" << n << ',' << o << ',' << d << ',' << h << ',' << ww
                              << ") = " << got << ", reference " << ref << " (tolerance " << tol
                              << ")";
            }
    return wrong;
  }
};

const ConvCase kCases[] = {
    // CosmoFlow-like 3^3 pad 1; 16 output channels = two full blocks of 8; W 16 = one vector.
    {1, 4, 16, {6, 7, 16}, geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})},
    // Odd input channels (a pair half zero), 12 output channels (a partial block), W tail 20 = 16 +
    // 4,
    // 5 rows = a 3-row tile and a 2-row tile, two samples.
    {2, 3, 12, {4, 5, 20}, geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})},
    // Non-cubic kernel without padding, no bias, 1 output channel, W shorter than a vector.
    {1, 5, 1, {5, 4, 9}, geometry({2, 3, 1}, {1, 1, 1}, {1, 1, 1}, {0, 1, 0}), false},
    // Stride 2 (the generic code on every path).
    {1, 6, 8, {8, 8, 10}, geometry({3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1})},
};

TEST(Conv3dBf16, ForwardMatchesTheFloat64ReferenceOnEveryPath) {
  for (const ConvCase& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c);
    const Bf16Problem p(c);
    for (const KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
      SCOPED_TRACE(path == KernelPath::Fastest ? "fastest" : "device");
      EXPECT_EQ(p.check(p.run(path, {c.outBox()})), 0);
    }
  }
}

// Each output's sum does not depend on the box it is computed in: the interior and the boundary
// slabs computed apart give the whole-box result bit for bit (what a layer overlapping its halo
// exchange relies on).
TEST(Conv3dBf16, BoxByBoxIsBitwiseTheWholeBox) {
  for (const ConvCase& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c);
    const Bf16Problem p(c);
    for (const KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
      const auto whole = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                             p.run(path, {c.outBox()}).view());
      const auto parts = Kokkos::create_mirror_view_and_copy(
          Kokkos::HostSpace(), p.run(path, testing::interiorAndSlabs(c.outBox(), 1)).view());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < whole.span(); ++i)
        differ += whole.data()[i] != parts.data()[i];
      EXPECT_EQ(differ, 0u);
    }
  }
}

TEST(Conv3dBf16, EngineAppliesToUnitStrideOnly) {
  const WindowGeometry strided = geometry({3, 3, 3}, {2, 1, 1}, {1, 1, 1}, {1, 1, 1});
  EXPECT_FALSE(conv3dBf16HostEngine(strided));
  const WindowGeometry dilated = geometry({3, 3, 3}, {1, 1, 1}, {1, 2, 1}, {1, 1, 1});
  EXPECT_FALSE(conv3dBf16HostEngine(dilated));
#if defined(__AVX512BF16__) && !defined(KOKKOS_ENABLE_CUDA)
  EXPECT_TRUE(conv3dBf16HostEngine(geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})));
#endif
}

}  // namespace
}  // namespace halo3d::kernels
