// The bf16 transposed-convolution passes (kernels/ConvTranspose3dBf16.hpp) against the naive
// float64 reference (kernels/reference/ConvTranspose3d.hpp, scatter form) run on float64 copies of
// the bf16 activations and of the weights rounded to bf16, over strides 1 and 2, output_padding,
// dilation, non-cubic kernels, ghosts on x and dy, whole and uneven boxes, both KernelPaths (host:
// the float host kernels on widened copies; device: the generic kernels) and the generic
// backward-filter teams at one and several threads.
//
// Tolerances, u = 2^-24, every product of two bf16 exact in float:
// - forward, backward-data: a float sum of n products errs by at most n u sum|terms| (n = I k^3
//   for forward, O k^3 for backward-data, bounds on the taps that land), and rounding the sum to
//   bf16 by at most 2^-8 |y|. Allowed: 2^-8 |ref| + 2 n u sum|terms|.
// - backward-filter (float dw, db): the generic kernel (KernelPath::Device) sums a source row of
//   at most W products in float, then at most N D H row sums (plus one for `accumulate`):
//   |error| <= (W + N D H + 1) u sum|terms|, W, D, H the larger of the input and output extents.
//   The host path (KernelPath::Fastest: the float host kernel on widened copies) sums the at most
//   n = N D H W products of an entry in chunks: at most (n + 1) u sum|terms|. Allowed: twice the
//   bound of the path that ran.
// sum|terms| is the reference run on the magnitudes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "KernelTestSupport.hpp"
#include "halo3d/core/BFloat16.hpp"
#include "halo3d/kernels/ConvTranspose3dBf16.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dBf16Generic.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dChecks.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"
#include "halo3d/kernels/reference/ConvTranspose3d.hpp"
#include "test_conv_bf16_support.hpp"

namespace halo3d::kernels {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using Host = Kokkos::DefaultHostExecutionSpace;
using Bf16Tensor = HaloTensor<bf16, Memory>;
using testing::HostTensor;
using testing::toDouble;
using testing::toDoubleBias;
using testing::toDoubleWeights;
using HostWeights = Kokkos::View<double*****, Kokkos::LayoutRight, Kokkos::HostSpace>;
using HostBias = Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::HostSpace>;

struct Case {
  std::string name;
  Shape5 x_shape;  // (N, I, D, H, W)
  index_t out_channels;
  ConvTranspose3dGeometry g;
  bool bias = true;
};

ConvTranspose3dGeometry general(std::array<int, 3> k, std::array<int, 3> s, std::array<int, 3> p,
                                std::array<int, 3> dil, std::array<int, 3> op) {
  return ConvTranspose3dGeometry{WindowGeometry{k, s, dil, p}, op};
}

const Case kCases[] = {
    {"unet_k2s2", {2, 5, 4, 5, 6}, 3, ConvTranspose3dGeometry::cubic(2, 2)},
    {"k3s2p1op1", {1, 3, 3, 3, 5}, 19, ConvTranspose3dGeometry::cubic(3, 2, 1, 1)},
    {"k3s1p1", {1, 17, 5, 2, 4}, 4, ConvTranspose3dGeometry::cubic(3, 1, 1), false},
    {"k4s2p1", {1, 6, 3, 3, 3}, 5, ConvTranspose3dGeometry::cubic(4, 2, 1)},
    {"k3s2p2dil2op1", {1, 4, 4, 3, 5}, 9, ConvTranspose3dGeometry::cubic(3, 2, 2, 1, 2)},
    {"non_cubic",
     {1, 3, 3, 4, 2},
     6,
     general({2, 3, 1}, {2, 1, 3}, {0, 1, 0}, {1, 2, 1}, {1, 0, 2})},
    {"long_rows_k2s2", {1, 9, 2, 2, 21}, 33, ConvTranspose3dGeometry::cubic(2, 2)},
};

// Ghosts on every side, different for x and dy, so that both index shifts count (zero: past the
// volume).
const HaloWidths kHaloX{{1, 2, 0}, {0, 1, 3}};
const HaloWidths kHaloY{{2, 0, 1}, {1, 1, 0}};

// Exactly a bf16, so that it reads back unchanged.
constexpr float kSentinel = -1024.0f;

struct Problem {
  Case c;
  Shape5 y_shape;
  Bf16Tensor x, dy;
  Kokkos::View<float*****, Kokkos::LayoutRight, Memory> w;
  Kokkos::View<float*, Kokkos::LayoutRight, Memory> b;

  explicit Problem(const Case& cc)
      : c(cc),
        y_shape(outputShape(cc)),
        x("x", TensorBlock::whole(c.x_shape, kHaloX)),
        dy("dy", TensorBlock::whole(y_shape, kHaloY)),
        w("w", c.x_shape[1], c.out_channels, c.g.window.kernel[0], c.g.window.kernel[1],
          c.g.window.kernel[2]),
        b("b", c.bias ? c.out_channels : 0) {
    testing::fillOwnedBf16(x, 41);
    testing::fillOwnedBf16(dy, 42);
    auto hw = Kokkos::create_mirror_view(w);
    auto hb = Kokkos::create_mirror_view(b);
    fillUniform(hw, 43);
    fillUniform(hb, 44);
    Kokkos::deep_copy(w, hw);
    Kokkos::deep_copy(b, hb);
  }

  static Shape5 outputShape(const Case& c) {
    const Extents3 e = c.g.outputExtents({c.x_shape[2], c.x_shape[3], c.x_shape[4]});
    return {c.x_shape[0], c.out_channels, e[0], e[1], e[2]};
  }
  Box inBox() const { return Box::fromExtents({c.x_shape[2], c.x_shape[3], c.x_shape[4]}); }
  Box outBox() const { return Box::fromExtents({y_shape[2], y_shape[3], y_shape[4]}); }
  index_t taps() const {
    return index_t(c.g.window.kernel[0]) * c.g.window.kernel[1] * c.g.window.kernel[2];
  }

  template <class View>
  static void fillUniform(const View& v, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (std::size_t i = 0; i < v.span(); ++i)
      v.data()[i] = dist(gen);
  }

  // Cells of `box` in `got` off 2^-8 |ref| + 2 n u mag, and cells outside it not at the sentinel.
  int compare(const Bf16Tensor& got_bf16, const HostTensor<double>& ref,
              const HostTensor<double>& mag, const Box& box, double n_terms) const {
    const auto got = toDouble(got_bf16);
    int wrong = 0;
    testing::forEachIndex5(got.view(), [&](std::size_t n, std::size_t ch, std::size_t d,
                                           std::size_t h, std::size_t q) {
      const Extents3 g = got.block().toGlobal({index_t(d), index_t(h), index_t(q)});
      const double v = got.view()(n, ch, d, h, q);
      if (!box.contains(g)) {
        if (v != kSentinel && ++wrong <= 3) ADD_FAILURE() << c.name << ": written outside the box";
        return;
      }
      const double r = ref.view()(n, ch, d, h, q);
      const double tol =
          std::ldexp(std::abs(r), -8) + 2.0 * n_terms * std::ldexp(mag.view()(n, ch, d, h, q), -24);
      if (!(std::abs(v - r) <= tol) && ++wrong <= 3)
        ADD_FAILURE() << c.name << ": (" << n << ',' << ch << ", global " << g[0] << ',' << g[1]
                      << ',' << g[2] << ") = " << v << ", reference " << r << " (tolerance " << tol
                      << ")";
    });
    return wrong;
  }

  Bf16Tensor forward(KernelPath path, const std::vector<Box>& boxes) const {
    Bf16Tensor y("y", dy.block());
    Kokkos::deep_copy(y.view(), bf16(kSentinel));
    for (const Box& box : boxes)
      convTranspose3dForwardBf16(Exec(), x, w, b, c.g, y, box, path);
    Kokkos::fence();
    return y;
  }

  int checkForward(const Bf16Tensor& y, const Box& box) const {
    HostTensor<double> ref("ref", y.block()), mag("mag", y.block());
    const auto xd = toDouble(x), xa = toDouble(x, true);
    const HostWeights wd = toDoubleWeights(w, true), wa = toDoubleWeights(w, true, true);
    const HostBias bd = toDoubleBias(b), ba = toDoubleBias(b, true);
    reference::convTranspose3dForward(Host(), xd, wd, bd, c.g, ref, box);
    reference::convTranspose3dForward(Host(), xa, wa, ba, c.g, mag, box);
    return compare(y, ref, mag, box, double(c.x_shape[1] * taps() + 1));
  }

  Bf16Tensor backwardData(KernelPath path, const Box& dy_box, const std::vector<Box>& boxes) const {
    Bf16Tensor dx("dx", x.block());
    Kokkos::deep_copy(dx.view(), bf16(kSentinel));
    for (const Box& box : boxes)
      convTranspose3dBackwardDataBf16(Exec(), dy, w, c.g, dx, box, dy_box, path);
    Kokkos::fence();
    return dx;
  }

  int checkBackwardData(const Bf16Tensor& dx, const Box& dx_box, const Box& dy_box) const {
    HostTensor<double> ref("ref", dx.block()), mag("mag", dx.block());
    const auto dyd = toDouble(dy), dya = toDouble(dy, true);
    const HostWeights wd = toDoubleWeights(w, true), wa = toDoubleWeights(w, true, true);
    reference::convTranspose3dBackwardData(Host(), dyd, wd, c.g, ref, dx_box, dy_box);
    reference::convTranspose3dBackwardData(Host(), dya, wa, c.g, mag, dx_box, dy_box);
    return compare(dx, ref, mag, dx_box, double(c.out_channels * taps()));
  }

  // team_size 0: the public function; otherwise the generic kernel with that team size.
  int checkBackwardFilter(KernelPath path, int team_size, const Box& out_box,
                          bool accumulate) const {
    Kokkos::View<float*****, Kokkos::LayoutRight, Memory> dw("dw", w.extent(0), w.extent(1),
                                                             w.extent(2), w.extent(3), w.extent(4));
    Kokkos::View<float*, Kokkos::LayoutRight, Memory> db("db", b.extent(0));
    auto dw0 = Kokkos::create_mirror(dw);  // copies: dw and db are overwritten below
    auto db0 = Kokkos::create_mirror(db);
    fillUniform(dw0, 45);
    fillUniform(db0, 46);
    Kokkos::deep_copy(dw, dw0);
    Kokkos::deep_copy(db, db0);
    if (team_size == 0) {
      convTranspose3dBackwardFilterBf16(Exec(), x, dy, c.g, dw, db, out_box, accumulate, path);
    } else {
      impl::FilterGradBf16<Memory> p;
      p.x = x.view();
      p.x_shift = impl::localShift(x);
      p.dy = dy.view();
      p.dy_shift = impl::localShift(dy);
      p.box = out_box;
      p.axes = impl::forwardAxes(c.g, x.block().globalExtents());
      p.dw = dw;
      p.db = db;
      p.accumulate = accumulate;
      p.tuning = impl::TeamTuning{team_size};
      impl::filterGradBf16(Exec(), p);
    }
    Kokkos::fence();
    HostWeights rdw = toDoubleWeights(dw0, false), mdw = toDoubleWeights(dw0, false, true);
    HostBias rdb = toDoubleBias(db0), mdb = toDoubleBias(db0, true);
    if (!accumulate) {
      Kokkos::deep_copy(rdw, 0.0);
      Kokkos::deep_copy(mdw, 0.0);
      Kokkos::deep_copy(rdb, 0.0);
      Kokkos::deep_copy(mdb, 0.0);
    }
    reference::convTranspose3dBackwardFilter(Host(), toDouble(x), toDouble(dy), c.g, rdw, rdb,
                                             out_box, true);
    reference::convTranspose3dBackwardFilter(Host(), toDouble(x, true), toDouble(dy, true), c.g,
                                             mdw, mdb, out_box, true);
    const index_t N = c.x_shape[0];
    const index_t W = std::max(c.x_shape[4], y_shape[4]);
    const index_t rows =
        N * std::max(c.x_shape[2], y_shape[2]) * std::max(c.x_shape[3], y_shape[3]);
    const bool host_route = path == KernelPath::Fastest && team_size == 0 &&
                            std::is_same<Exec, Kokkos::DefaultHostExecutionSpace>::value;
    const double factor = 2.0 * double(host_route ? rows * W + 1 : W + rows + 1);
    const auto hdw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dw);
    const auto hdb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), db);
    int wrong = 0;
    const auto check = [&](const char* what, std::size_t k, double got, double ref, double mag) {
      const double tol = factor * std::ldexp(mag, -24);
      if (!(std::abs(got - ref) <= tol) && ++wrong <= 3)
        ADD_FAILURE() << c.name << ": " << what << " entry " << k << " = " << got << ", reference "
                      << ref << " (tolerance " << tol << ")";
    };
    for (std::size_t k = 0; k < hdw.span(); ++k)
      check("dw", k, hdw.data()[k], rdw.data()[k], mdw.data()[k]);
    for (std::size_t k = 0; k < hdb.span(); ++k)
      check("db", k, hdb.data()[k], rdb.data()[k], mdb.data()[k]);
    return wrong;
  }
};

// An uneven part of `box`: one cell off the low side of D and W (where there is one to spare),
// a third off the high side of H.
Box unevenPart(const Box& box) {
  return Box({box.min(0) + (box.extent(0) > 1), box.min(1), box.min(2) + (box.extent(2) > 1)},
             {box.max(0), box.max(1) - box.extent(1) / 3, box.max(2)});
}

TEST(ConvTranspose3dBf16, ForwardMatchesTheFloat64Reference) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const Problem p(c);
    for (const KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
      EXPECT_EQ(p.checkForward(p.forward(path, {p.outBox()}), p.outBox()), 0);
      const Box part = unevenPart(p.outBox());
      EXPECT_EQ(p.checkForward(p.forward(path, {part}), part), 0);
    }
  }
}

TEST(ConvTranspose3dBf16, BackwardDataMatchesTheFloat64Reference) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const Problem p(c);
    for (const KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
      EXPECT_EQ(
          p.checkBackwardData(p.backwardData(path, p.outBox(), {p.inBox()}), p.inBox(), p.outBox()),
          0);
      const Box dx_part = unevenPart(p.inBox()), dy_part = unevenPart(p.outBox());
      EXPECT_EQ(p.checkBackwardData(p.backwardData(path, dy_part, {dx_part}), dx_part, dy_part), 0);
    }
  }
}

// Box by box (interior, then boundary slabs) is bitwise the whole box, for forward and
// backward-data.
TEST(ConvTranspose3dBf16, BoxByBoxIsBitwiseTheWholeBox) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const Problem p(c);
    const auto same = [](const Bf16Tensor& a, const Bf16Tensor& b) {
      const auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.view());
      const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.view());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < ha.span(); ++i)
        differ += ha.data()[i] != hb.data()[i];
      return differ;
    };
    EXPECT_EQ(same(p.forward(KernelPath::Fastest, {p.outBox()}),
                   p.forward(KernelPath::Fastest, testing::interiorAndSlabs(p.outBox(), 1))),
              0u);
    EXPECT_EQ(same(p.backwardData(KernelPath::Fastest, p.outBox(), {p.inBox()}),
                   p.backwardData(KernelPath::Fastest, p.outBox(),
                                  testing::interiorAndSlabs(p.inBox(), 1))),
              0u);
  }
}

TEST(ConvTranspose3dBf16, BackwardFilterMatchesTheFloat64Reference) {
  const int several = std::min(3, Exec().concurrency());
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const Problem p(c);
    const Box part = unevenPart(p.outBox());
    for (const bool accumulate : {false, true}) {
      SCOPED_TRACE(accumulate ? "accumulate" : "assign");
      EXPECT_EQ(p.checkBackwardFilter(KernelPath::Fastest, 0, p.outBox(), accumulate), 0);
      EXPECT_EQ(p.checkBackwardFilter(KernelPath::Device, 1, p.outBox(), accumulate), 0);
      EXPECT_EQ(p.checkBackwardFilter(KernelPath::Device, several, part, accumulate), 0);
    }
  }
}

TEST(ConvTranspose3dBf16, ShapeErrorsAsTheFloatFunctions) {
  const Problem p(kCases[0]);
  Kokkos::View<float*****, Kokkos::LayoutRight, Memory> w2("w2", 4, 3, 2, 2, 2);
  Bf16Tensor y("y", p.dy.block());
  EXPECT_THROW(convTranspose3dForwardBf16(Exec(), p.x, w2, p.b, p.c.g, y, p.outBox()), ShapeError);
  EXPECT_THROW(convTranspose3dBackwardDataBf16(Exec(), p.dy, w2, p.c.g, p.x, p.inBox()),
               ShapeError);
  Kokkos::View<float*, Kokkos::LayoutRight, Memory> db("db", 7);
  Kokkos::View<float*****, Kokkos::LayoutRight, Memory> dw("dw", 5, 3, 2, 2, 2);
  EXPECT_THROW(
      convTranspose3dBackwardFilterBf16(Exec(), p.x, p.dy, p.c.g, dw, db, p.outBox(), false),
      ShapeError);
}

}  // namespace
}  // namespace halo3d::kernels
