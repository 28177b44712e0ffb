// The bf16 conv3d passes against a float64 reference of the same products (bf16 activations,
// weights rounded to bf16), on both paths (the host engine where the build has AVX512-BF16, and the
// generic/device code), over channel counts that leave odd channels and partial blocks of 8 output
// channels, W tails, rows left over by the 3-row tiles, and strided, dilated and non-cubic
// geometries. Forward is checked against its own loops below; backward-data and backward-filter
// against kernels/reference (push form, sums in double) run on float64 copies of the bf16 values.
//
// Tolerances, u = 2^-24 (float's unit roundoff), every product exact in float (bf16 x bf16 has at
// most 16 significant bits):
// - forward, backward-data: the float sum of n products errs by at most n u sum|terms| (n = the
//   products per output: I k^3 for forward, O k^3 bounds backward-data), and the final rounding to
//   bf16 (8 significant bits) by half an ulp, at most 2^-8 |y|. The check allows
//   2^-8 |ref| + 2 n u sum|terms|.
// - backward-filter: dw is float, not rounded to bf16. The generic kernel sums a W row of the box
//   in float (at most W - 1 roundings), then the row sums (at most rows - 1 more, plus one for
//   `accumulate`): (W + rows) u sum|terms|. The AVX512-BF16 engine sums at most 16 rows of W + 1
//   products (cell pairs) per chunk, then one addition per chunk (at most rows), then one into dw:
//   (16 (W + 1) + rows + 1) u sum|terms|. The float route (other geometries on the host: the float
//   kernels on widened copies) sums the n = N D H W products of an entry in some order, partly in
//   double: at most (n + 1) u sum|terms|. The check allows twice the bound of the path that ran. A
//   shifted, missed or doubled term fails it (the engine's x offset moved by one cell fails this
//   test).
//
// Paths: KernelPath::Fastest runs the engines at stride and dilation 1 (where the build targets
// AVX512-BF16) and the float route elsewhere; KernelPath::Device runs the generic kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/kernels/Conv3dBf16.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Generic.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Host.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Weights.hpp"
#include "halo3d/kernels/reference/Conv3d.hpp"
#include "test_conv3d_support.hpp"
#include "test_conv_bf16_support.hpp"

namespace halo3d::kernels {
namespace {

using testing::ConvCase;
using testing::geometry;
using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using Bf16Tensor = HaloTensor<bf16, Memory>;
using testing::fillOwnedBf16;
using testing::HostTensor;
using testing::HostWeights;
using testing::toDouble;

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
    // 16 rows: the engine's tiles of 3, 3, 3, 3, 2 and 2 rows; 20 input channels = 10 pairs, 20
    // output channels = two blocks of 8 and a partial one.
    {1, 20, 20, {3, 16, 16}, geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})},
    // The 2 + 2 remainder on masked lanes and a partial block: 10 rows = 3, 3, 2, 2; W 21 = 16 + a
    // tail of 5; 11 output channels = a block and a partial one of 3; 7 input channels (a half
    // pair).
    {1, 7, 11, {3, 10, 21}, geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})},
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

// A layer's forward on the blocks of a split: x's ghosts inside the volume hold the neighbours'
// cells and must be read; only the padding outside the volume may be skipped. Each block's y is
// bitwise the whole volume's (one summation order, the same taps skipped at the volume's edges).
TEST(Conv3dBf16, ForwardOnTheBlocksOfASplit) {
  // 16 rows and 16 cells: the engine's tiles of 3, 3, 3, 3, 2, 2 rows on one full vector.
  const ConvCase c{1, 6, 8, {7, 16, 16}, geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})};
  const Bf16Problem p(c);  // the weights and the bias
  // x on block xb as a grid's block holds it: the volume's cells (ghosts inside the volume
  // included) the same in every block, zero past the volume.
  const auto blockX = [&](const TensorBlock& xb) {
    HostTensor<bf16> hx("hx", xb);
    testing::fillVolumeCells(hx, 17);
    Bf16Tensor x("x", xb);
    Kokkos::deep_copy(x.view(), hx.view());
    return x;
  };
  Bf16Tensor y_whole("y", TensorBlock::whole(c.outShape()));
  conv3dForwardBf16(Exec(), blockX(TensorBlock::whole(c.inShape(), c.inHalo())), p.w, p.b, c.g,
                    y_whole, c.outBox(), KernelPath::Fastest);
  Kokkos::fence();
  const auto whole = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_whole.view());
  // Uneven cuts along D and H, one block in the middle of both (ghosts inside the volume on
  // every side of D and H).
  const Box owned[] = {Box({0, 0, 0}, {3, 5, 16}), Box({3, 5, 0}, {5, 11, 16}),
                       Box({5, 11, 0}, {7, 16, 16}), Box({2, 4, 0}, {6, 13, 16})};
  for (const Box& o : owned) {
    SCOPED_TRACE(::testing::Message() << "owned " << o);
    const TensorBlock yb(c.outShape(), 0, 1, o, HaloWidths{});
    Bf16Tensor y("y", yb);
    conv3dForwardBf16(Exec(), blockX(TensorBlock(c.inShape(), 0, 1, o, HaloWidths::uniform(1))),
                      p.w, p.b, c.g, y, o, KernelPath::Fastest);
    Kokkos::fence();
    const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y.view());
    std::size_t differ = 0;
    testing::forEachIndex5(
        hy, [&](std::size_t n, std::size_t ch, std::size_t d, std::size_t h, std::size_t q) {
          const Extents3 g = yb.toGlobal({index_t(d), index_t(h), index_t(q)});
          differ += hy(n, ch, d, h, q).bits != whole(n, ch, g[0], g[1], g[2]).bits;
        });
    EXPECT_EQ(differ, 0u);
  }
}

// Backward passes.

// Exactly a bf16, so that it reads back unchanged.
constexpr float kSentinel = -1024.0f;

const ConvCase kBackwardCases[] = {
    kCases[0],
    kCases[1],
    kCases[2],
    kCases[3],
    // Stride 2 on odd extents, padding 1 (cells that no tap reaches along some dimension).
    {2, 5, 7, {7, 9, 11}, geometry({3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1})},
    // Dilation 2, mixed strides, non-cubic kernel.
    {1, 3, 9, {6, 8, 19}, geometry({3, 2, 3}, {1, 2, 1}, {2, 1, 2}, {2, 0, 1})},
    // The backward-data engine: 16 dx channels (two full blocks), 7 dy channels (a half pair), W
    // 37 = two vectors and a tail; then no padding (dx cells at the edges read dy cells past
    // dy's allocation, zero in the engine's buffer) and a 5-tap kernel.
    {1, 16, 7, {5, 7, 37}, geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})},
    {2, 9, 5, {6, 5, 18}, geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0})},
    // 19 rows: backward-filter's engine walks them in two chunks.
    {1, 2, 3, {4, 19, 21}, geometry({5, 1, 5}, {1, 1, 1}, {1, 1, 1}, {2, 0, 1})},
    // Kernel 2 stride 2 (no overlap), no bias.
    {1, 8, 16, {8, 6, 34}, geometry({2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}), false},
};

struct BackwardProblem {
  ConvCase c;
  Kokkos::View<float*****, Kokkos::LayoutRight, Memory> w;
  Bf16Tensor x, dy;

  explicit BackwardProblem(const ConvCase& cc)
      : c(cc),
        w("w", c.out_ch, c.in_ch, c.g.kernel[0], c.g.kernel[1], c.g.kernel[2]),
        x("x", TensorBlock::whole(c.inShape(), c.inHalo())),
        dy("dy", TensorBlock::whole(c.outShape())) {
    auto hw = Kokkos::create_mirror_view(w);
    testing::fillUniform(hw, 21);
    Kokkos::deep_copy(w, hw);
    fillOwnedBf16(x, 22);
    fillOwnedBf16(dy, 23);
  }

  // dx over dx_box from the dy cells dy_box, the boxes `pieces` of dx_box computed one by one; the
  // rest of dx holds a sentinel.
  Bf16Tensor backwardData(KernelPath path, const Box& dy_box,
                          const std::vector<Box>& pieces) const {
    Bf16Tensor dx("dx", x.block());
    Kokkos::deep_copy(dx.view(), bf16(kSentinel));
    for (const Box& piece : pieces)
      conv3dBackwardDataBf16(Exec(), dy, w, c.g, dx, piece, dy_box, path);
    Kokkos::fence();
    return dx;
  }

  // Cells of dx_box off the tolerance, and cells outside it not left at the sentinel.
  int checkBackwardData(const Bf16Tensor& dx, const Box& dx_box, const Box& dy_box) const {
    const Kokkos::DefaultHostExecutionSpace host;
    const auto wd = testing::toDoubleWeights(w, true);
    const auto wa = testing::toDoubleWeights(w, true, true);
    const auto dyd = toDouble(dy), dya = toDouble(dy, true);
    HostTensor<double> ref("ref", x.block()), mag("mag", x.block());
    reference::conv3dBackwardData(host, dyd, wd, c.g, ref, dx_box, dy_box);
    reference::conv3dBackwardData(host, dya, wa, c.g, mag, dx_box, dy_box);
    const auto got = toDouble(dx);
    const double n_terms = double(c.out_ch * c.g.kernel[0] * c.g.kernel[1] * c.g.kernel[2]);
    int wrong = 0;
    testing::forEachIndex5(
        got.view(), [&](std::size_t n, std::size_t i, std::size_t d, std::size_t h, std::size_t q) {
          const Extents3 gc = dx.block().toGlobal({index_t(d), index_t(h), index_t(q)});
          const double v = got.view()(n, i, d, h, q);
          if (!dx_box.contains(gc)) {
            if (v != kSentinel && ++wrong <= 3) ADD_FAILURE() << "dx written outside dx_box";
            return;
          }
          const double r = ref.view()(n, i, d, h, q);
          const double tol = std::ldexp(std::abs(r), -8) +
                             2.0 * n_terms * std::ldexp(mag.view()(n, i, d, h, q), -24);
          if (!(std::abs(v - r) <= tol) && ++wrong <= 3)
            ADD_FAILURE() << c << ": dx(" << n << ',' << i << ", global " << gc[0] << ',' << gc[1]
                          << ',' << gc[2] << ") = " << v << ", reference " << r << " (tolerance "
                          << tol << ")";
        });
    return wrong;
  }

  // dw, db over out_box, starting from `dw0`, `db0` when accumulating; the returned counts are the
  // entries off the tolerance.
  int checkBackwardFilter(KernelPath path, int team_size, const Box& out_box,
                          bool accumulate) const {
    Kokkos::View<float*****, Kokkos::LayoutRight, Memory> dw("dw", c.out_ch, c.in_ch, c.g.kernel[0],
                                                             c.g.kernel[1], c.g.kernel[2]);
    Kokkos::View<float*, Kokkos::LayoutRight, Memory> db("db", c.bias ? c.out_ch : 0);
    auto hdw0 = Kokkos::create_mirror(dw);  // a copy: dw is overwritten below
    auto hdb0 = Kokkos::create_mirror(db);
    testing::fillUniform(hdw0, 31);
    testing::fillUniform(hdb0, 32);
    Kokkos::deep_copy(dw, hdw0);
    Kokkos::deep_copy(db, hdb0);
    if (team_size > 0) {
      impl::checkBackwardFilter(x, dy, c.g, dw, db, out_box);
      impl::conv3dBackwardFilterBf16Generic(Exec(), x, dy, c.g, dw, db, out_box, accumulate,
                                            impl::TeamTuning{team_size});
    } else {
      conv3dBackwardFilterBf16(Exec(), x, dy, c.g, dw, db, out_box, accumulate, path);
    }
    Kokkos::fence();
    const Kokkos::DefaultHostExecutionSpace host;
    HostWeights<double> rdw("rdw", dw.extent(0), dw.extent(1), dw.extent(2), dw.extent(3),
                            dw.extent(4));
    HostWeights<double> mdw("mdw", dw.extent(0), dw.extent(1), dw.extent(2), dw.extent(3),
                            dw.extent(4));
    testing::HostBias<double> rdb("rdb", db.extent(0)), mdb("mdb", db.extent(0));
    for (std::size_t i = 0; i < hdw0.span(); ++i) {
      rdw.data()[i] = accumulate ? double(hdw0.data()[i]) : 0.0;
      mdw.data()[i] = std::abs(rdw.data()[i]);
    }
    for (std::size_t i = 0; i < hdb0.span(); ++i) {
      rdb.data()[i] = accumulate ? double(hdb0.data()[i]) : 0.0;
      mdb.data()[i] = std::abs(rdb.data()[i]);
    }
    reference::conv3dBackwardFilter(host, toDouble(x), toDouble(dy), c.g, rdw, rdb, out_box, true);
    reference::conv3dBackwardFilter(host, toDouble(x, true), toDouble(dy, true), c.g, mdw, mdb,
                                    out_box, true);
    const auto hdw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dw);
    const auto hdb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), db);
    const index_t rows = c.samples * out_box.extent(0) * out_box.extent(1);
    const bool float_route = path == KernelPath::Fastest && team_size == 0 &&
                             !conv3dBf16HostEngine(c.g) &&
                             std::is_same<Exec, Kokkos::DefaultHostExecutionSpace>::value;
    const double bound = 2.0 * double(float_route ? rows * out_box.extent(2) + 1
                                                  : 16 * (out_box.extent(2) + 1) + rows + 1);
    int wrong = 0;
    const auto compare = [&](const char* what, std::size_t k, double got, double ref, double mag) {
      const double tol = bound * std::ldexp(mag, -24);
      if (!(std::abs(got - ref) <= tol) && ++wrong <= 3)
        ADD_FAILURE() << c << ": " << what << " entry " << k << " = " << got << ", reference "
                      << ref << " (tolerance " << tol << ")";
    };
    for (std::size_t k = 0; k < hdw.span(); ++k)
      compare("dw", k, hdw.data()[k], rdw.data()[k], mdw.data()[k]);
    for (std::size_t k = 0; k < hdb.span(); ++k)
      compare("db", k, hdb.data()[k], rdb.data()[k], mdb.data()[k]);
    return wrong;
  }
};

// dx over the whole volume from dy's owned cells, and over an uneven part of the volume from an
// uneven part of dy (what a block computes around its halo exchange).
TEST(Conv3dBf16, BackwardDataMatchesTheFloat64ReferenceOnEveryPath) {
  for (const ConvCase& c : kBackwardCases) {
    SCOPED_TRACE(::testing::Message() << c);
    const BackwardProblem p(c);
    const Extents3 in = c.volume, out = c.outVolume();
    const Box part_dx({1, 0, in[2] / 3}, {in[0], in[1] - 1, in[2]});
    const Box part_dy({0, out[1] > 1 ? 1 : 0, 0}, {out[0] - out[0] / 3, out[1], out[2]});
    for (const KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
      SCOPED_TRACE(path == KernelPath::Fastest ? "fastest" : "device");
      EXPECT_EQ(
          p.checkBackwardData(p.backwardData(path, c.outBox(), {c.inBox()}), c.inBox(), c.outBox()),
          0);
      EXPECT_EQ(p.checkBackwardData(p.backwardData(path, part_dy, {part_dx}), part_dx, part_dy), 0);
    }
  }
}

// A layer's backward-data on a block of a split: dx_box holds ghost cells of dx inside the volume
// and dy_box is the block's owned dy cells, so the engine's dy buffer is cut by dy_box on one side.
TEST(Conv3dBf16, BackwardDataOnTheBlocksOfASplit) {
  const ConvCase c{1, 5, 6, {9, 5, 6}, geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}), false};
  const BackwardProblem p(c);
  const Kokkos::DefaultHostExecutionSpace host;
  const auto wd = testing::toDoubleWeights(p.w, true);
  const auto wa = testing::toDoubleWeights(p.w, true, true);
  const auto dyd = toDouble(p.dy), dya = toDouble(p.dy, true);
  const double n_terms = double(c.out_ch * 27);
  struct Part {
    Box owned, dx_box, dy_box;
  };
  const Part parts[] = {
      {Box({0, 0, 0}, {4, 5, 6}), Box({0, 0, 0}, {5, 5, 6}), Box({0, 0, 0}, {4, 5, 6})},
      {Box({4, 0, 0}, {9, 5, 6}), Box({3, 0, 0}, {9, 5, 6}), Box({4, 0, 0}, {9, 5, 6})}};
  for (const Part& part : parts)
    for (const KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
      SCOPED_TRACE(path == KernelPath::Fastest ? "fastest" : "device");
      const TensorBlock block(c.inShape(), 0, 1, part.owned, HaloWidths::uniform(1));
      Bf16Tensor dx("dx", block);
      conv3dBackwardDataBf16(Exec(), p.dy, p.w, c.g, dx, part.dx_box, part.dy_box, path);
      Kokkos::fence();
      HostTensor<double> ref("ref", block), mag("mag", block);
      reference::conv3dBackwardData(host, dyd, wd, c.g, ref, part.dx_box, part.dy_box);
      reference::conv3dBackwardData(host, dya, wa, c.g, mag, part.dx_box, part.dy_box);
      const auto got = toDouble(dx);
      int wrong = 0;
      testing::forEachIndex5(got.view(), [&](std::size_t n, std::size_t i, std::size_t d,
                                             std::size_t h, std::size_t q) {
        const Extents3 gc = block.toGlobal({index_t(d), index_t(h), index_t(q)});
        if (!part.dx_box.contains(gc)) return;
        const double v = got.view()(n, i, d, h, q), r = ref.view()(n, i, d, h, q);
        const double tol = std::ldexp(std::abs(r), -8) +
                           2.0 * n_terms * std::ldexp(mag.view()(n, i, d, h, q), -24);
        if (!(std::abs(v - r) <= tol) && ++wrong <= 3)
          ADD_FAILURE() << "dx(global " << gc[0] << ',' << gc[1] << ',' << gc[2] << ") = " << v
                        << ", reference " << r;
      });
      EXPECT_EQ(wrong, 0);
    }
}

// dx computed box by box (interior, then boundary slabs) is bitwise the whole-box dx.
TEST(Conv3dBf16, BackwardDataBoxByBoxIsBitwiseTheWholeBox) {
  for (const ConvCase& c : kBackwardCases) {
    SCOPED_TRACE(::testing::Message() << c);
    const BackwardProblem p(c);
    for (const KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
      const auto whole = Kokkos::create_mirror_view_and_copy(
          Kokkos::HostSpace(), p.backwardData(path, c.outBox(), {c.inBox()}).view());
      const auto parts = Kokkos::create_mirror_view_and_copy(
          Kokkos::HostSpace(),
          p.backwardData(path, c.outBox(), testing::interiorAndSlabs(c.inBox(), 2)).view());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < whole.span(); ++i)
        differ += whole.data()[i] != parts.data()[i];
      EXPECT_EQ(differ, 0u);
    }
  }
}

// dw and db over the whole output, assigned and accumulated, on both paths and on the team kernel
// with one and several threads per team; and over an uneven part of the output.
TEST(Conv3dBf16, BackwardFilterMatchesTheFloat64Reference) {
  for (const ConvCase& c : kBackwardCases) {
    SCOPED_TRACE(::testing::Message() << c);
    const BackwardProblem p(c);
    const Extents3 out = c.outVolume();
    const Box part({0, out[1] / 2, 1}, {out[0], out[1], out[2]});
    const int several = std::min(3, Exec().concurrency());
    for (const bool accumulate : {false, true}) {
      SCOPED_TRACE(accumulate ? "accumulate" : "assign");
      EXPECT_EQ(p.checkBackwardFilter(KernelPath::Fastest, 0, c.outBox(), accumulate), 0);
      EXPECT_EQ(p.checkBackwardFilter(KernelPath::Device, 0, c.outBox(), accumulate), 0);
      EXPECT_EQ(p.checkBackwardFilter(KernelPath::Device, 1, c.outBox(), accumulate), 0);
      EXPECT_EQ(p.checkBackwardFilter(KernelPath::Device, several, part, accumulate), 0);
      EXPECT_EQ(p.checkBackwardFilter(KernelPath::Fastest, 0, part, accumulate), 0);
    }
  }
}

TEST(Conv3dBf16, BackwardPassesCheckShapes) {
  const BackwardProblem p(kCases[0]);
  const ConvCase& c = p.c;
  Kokkos::View<float*****, Kokkos::LayoutRight, Memory> w2("w2", c.out_ch + 1, c.in_ch, 3, 3, 3);
  Bf16Tensor dx("dx", p.x.block());
  EXPECT_THROW(conv3dBackwardDataBf16(Exec(), p.dy, w2, c.g, dx, c.inBox()), ShapeError);
  // dx_box past the volume: those ghosts are the padding.
  EXPECT_THROW(conv3dBackwardDataBf16(Exec(), p.dy, p.w, c.g, dx, Box({-1, 0, 0}, {6, 7, 16})),
               ShapeError);
  Kokkos::View<float*****, Kokkos::LayoutRight, Memory> dw("dw", c.out_ch, c.in_ch, 3, 3, 3);
  Kokkos::View<float*, Kokkos::LayoutRight, Memory> db("db", c.out_ch + 2);
  EXPECT_THROW(conv3dBackwardFilterBf16(Exec(), p.x, p.dy, c.g, dw, db, c.outBox(), false),
               ShapeError);
}

#if HALO3D_CONV3D_AVX512BF16
// The engine rounds the weights 16 at a time in integer lanes; every class of float must round as
// bf16() does: ties to even, carries into the exponent and to infinity, subnormals (which
// vcvtneps2bf16 would flush), infinities and NaNs (kept quiet with their sign).
TEST(Conv3dBf16, EngineWeightRoundingIsBf16s) {
  std::vector<std::uint32_t> bits = {
      0x00000000u, 0x80000000u, 0x3f800000u, 0x3f808000u, 0x3f818000u, 0x3f808001u,
      0x3f80ffffu, 0x7f7fffffu, 0xff7fffffu, 0x7f7f7fffu, 0x7f7f8000u, 0x7f800000u,
      0xff800000u, 0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu, 0x00008000u,
      0x00018000u, 0x00007fffu, 0x807fffffu, 0x00000001u, 0x80008001u};
  std::mt19937 gen(41);
  for (int i = 0; i < 4000; ++i)
    bits.push_back(std::uint32_t(gen()));
  std::vector<float> f(bits.size());
  std::memcpy(f.data(), bits.data(), bits.size() * sizeof(float));
  std::vector<std::uint16_t> got(f.size());
  impl::bf16BitsOfFloats(f.data(), index_t(f.size()), got.data());
  int wrong = 0;
  for (std::size_t i = 0; i < f.size(); ++i)
    if (got[i] != bf16(f[i]).bits && ++wrong <= 5)
      ADD_FAILURE() << std::hex << "bits 0x" << bits[i] << ": 0x" << got[i] << ", bf16() 0x"
                    << bf16(f[i]).bits;
  EXPECT_EQ(wrong, 0);
}
#endif

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
