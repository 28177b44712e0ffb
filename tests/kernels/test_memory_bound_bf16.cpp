// The memory-bound kernels on bf16 activations (pooling, batch norm, activations, dropout,
// element-wise, channels, losses, softmax-argmax) against the same kernels in float, on both paths.
//
// Why most checks are exact: every input here is bf16 (random values rounded once), and its float
// twin holds the same values, so the float kernel computes exactly what the bf16 kernel computes in
// float; the bf16 kernel then rounds once on the store. So, cell by cell:
//   - element-wise kernels, batch-norm normalisations, dropout, the loss and softmax gradients,
//     softmax probabilities: bf16 result == bf16(float result), bit for bit;
//   - copies (channels) and max pooling (a selection): the bf16 result IS the input's bits, and
//     argmax equals float's (bf16's coarse values tie often: the first-maximum rule is exercised);
//   - partial sums in double (batch-norm statistics and backward sums, loss sums): float's
//     sums, bit for bit (the same doubles added in the same order);
//   - average pooling and pooling backward: each path sums in its own order, float or bf16 alike,
//     so the bf16 result == bf16(float result on the same path). Against the float result of the
//     other path, which may sum in another order, the check is a tolerance: half a bf16 ulp
//     (the one rounding; bf16 keeps 8 significant bits, so half an ulp is up to 2^-8 |ref| at the
//     bottom of a binade, 2^-9 |ref| only at its top) plus what reordering a float sum of K terms
//     can change, at most 2 (K - 1) u sum|term| <= 2 K^2 u max|term| (u = 2^-24), times the
//     average's scale.
// A kernel that accumulated in bf16, rounded twice, or lost a bit anywhere fails these.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/kernels/Activations.hpp"
#include "halo3d/kernels/BatchNorm.hpp"
#include "halo3d/kernels/Channels.hpp"
#include "halo3d/kernels/Dropout.hpp"
#include "halo3d/kernels/Elementwise.hpp"
#include "halo3d/kernels/Losses.hpp"
#include "halo3d/kernels/Pool3d.hpp"
#include "halo3d/kernels/Segmentation.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {
namespace {

using Memory = Exec::memory_space;

// The float copy of a bf16 host tensor (exact), same block.
HostTensor<float> widen(const HostTensor<bf16>& t) {
  HostTensor<float> f(t.label() + "_f32", t.block());
  for (std::size_t k = 0; k < t.view().span(); ++k)
    f.view().data()[k] = float(t.view().data()[k]);
  return f;
}

// A bf16 tensor of `block` with values in [lo, hi) (inside the volume, ghosts too) and its float
// twin holding the same values.
struct Twin {
  DeviceTensor<bf16> b;
  DeviceTensor<float> f;
};
Twin twin(const std::string& label, const TensorBlock& block, std::uint64_t seed, double lo = -1.0,
          double hi = 1.0) {
  const HostTensor<bf16> h = hostRandom<bf16>(label, block, seed, lo, hi);
  return {toDevice(h), toDevice(widen(h))};
}

// Outputs of both precisions on one block.
struct Outputs {
  DeviceTensor<bf16> b;
  DeviceTensor<float> f;
  explicit Outputs(const TensorBlock& block) : b("y_bf16", block), f("y_f32", block) {}
};

// got == bf16(want) bit for bit on every cell of `box`; the first mismatches in the message.
::testing::AssertionResult roundedEqual(const DeviceTensor<bf16>& got,
                                        const DeviceTensor<float>& want, const Box& box) {
  const HostTensor<bf16> g = toHost(got);
  const HostTensor<float> w = toHost(want);
  int wrong = 0;
  std::ostringstream first;
  forEachCellPair(g, w, box, [&](const bf16& a, const float& b) {
    if (a == bf16(b)) return;
    if (++wrong <= 3)
      first << " got " << float(a) << " want bf16(" << b << ") = " << float(bf16(b));
  });
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << wrong << " cells differ:" << first.str();
}

template <class L>
::testing::AssertionResult sameLabels(const DeviceTensor<L>& a, const DeviceTensor<L>& b,
                                      const Box& box) {
  if (identicalOn(toHost(a), toHost(b), box)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the labels differ";
}

const Shape5 kShape{2, 3, 5, 4, 19};  // W = 19: vector bodies and tails
const TensorBlock kBlock = TensorBlock::whole(kShape, HaloWidths::uniform(1));
const Box kBox = kBlock.owned();

TEST(MemoryBoundBf16, LeakyReluRoundsTheFloatResult) {
  const Twin x = twin("x", kBlock, 1), dy = twin("dy", kBlock, 2);
  for (KernelPath path : kPaths)
    for (double slope : {0.0, 0.01, 0.2}) {
      Outputs y(kBlock), dx(kBlock);
      kernels::leakyReluForward(Exec(), x.b, slope, y.b, kBox, path);
      kernels::leakyReluForward(Exec(), x.f, slope, y.f, kBox, path);
      EXPECT_TRUE(roundedEqual(y.b, y.f, kBox)) << "forward, slope " << slope;
      kernels::leakyReluBackward(Exec(), x.b, dy.b, slope, dx.b, kBox, path);
      kernels::leakyReluBackward(Exec(), x.f, dy.f, slope, dx.f, kBox, path);
      EXPECT_TRUE(roundedEqual(dx.b, dx.f, kBox)) << "backward, slope " << slope;
    }
}

TEST(MemoryBoundBf16, DropoutKeepsTheMaskAndRoundsTheFloatResult) {
  const Twin x = twin("x", kBlock, 3);
  const kernels::RandomStream stream{0x5eed, 3, 7};
  for (KernelPath path : kPaths) {
    Outputs y(kBlock), dx(kBlock);
    kernels::dropoutForward(Exec(), x.b, 0.3, stream, y.b, kBox, path);
    kernels::dropoutForward(Exec(), x.f, 0.3, stream, y.f, kBox, path);
    EXPECT_TRUE(roundedEqual(y.b, y.f, kBox));
    kernels::dropoutBackward(Exec(), x.b, 0.3, stream, dx.b, kBox, path);
    kernels::dropoutBackward(Exec(), x.f, 0.3, stream, dx.f, kBox, path);
    EXPECT_TRUE(roundedEqual(dx.b, dx.f, kBox));
  }
}

TEST(MemoryBoundBf16, ElementwiseTensorKernelsRoundTheFloatResult) {
  const Twin a = twin("a", kBlock, 4), b = twin("b", kBlock, 5);
  for (KernelPath path : kPaths) {
    Outputs y(kBlock);
    kernels::fill(Exec(), 0.3f, y.b, kBlock.owned(), path);  // 0.3 is not a bf16: rounds once
    kernels::fill(Exec(), 0.3f, y.f, kBlock.owned(), path);
    EXPECT_TRUE(roundedEqual(y.b, y.f, kBox)) << "fill";
    kernels::copy(Exec(), a.b, y.b, kBox, path);
    kernels::copy(Exec(), a.f, y.f, kBox, path);
    EXPECT_TRUE(roundedEqual(y.b, y.f, kBox)) << "copy";
    kernels::scale(Exec(), -1.37f, y.b, kBox, path);
    kernels::scale(Exec(), -1.37f, y.f, kBox, path);
    EXPECT_TRUE(roundedEqual(y.b, y.f, kBox)) << "scale";
    kernels::add(Exec(), a.b, b.b, y.b, kBox, path);
    kernels::add(Exec(), a.f, b.f, y.f, kBox, path);
    EXPECT_TRUE(roundedEqual(y.b, y.f, kBox)) << "add";
    // y now holds bf16(a + b) in both: axpby reads it back.
    Kokkos::deep_copy(y.f.view(), toDevice(widen(toHost(y.b))).view());
    kernels::axpby(Exec(), 2.5f, a.b, -0.75f, y.b, kBox, path);
    kernels::axpby(Exec(), 2.5f, a.f, -0.75f, y.f, kBox, path);
    EXPECT_TRUE(roundedEqual(y.b, y.f, kBox)) << "axpby";
    kernels::axpby(Exec(), 0.1f, b.b, 0.0f, y.b, kBox, path);
    kernels::axpby(Exec(), 0.1f, b.f, 0.0f, y.f, kBox, path);
    EXPECT_TRUE(roundedEqual(y.b, y.f, kBox)) << "axpby, beta 0";
  }
}

TEST(MemoryBoundBf16, ChannelKernelsKeepTheBits) {
  const TensorBlock ba = TensorBlock::whole({2, 2, 5, 4, 19}, HaloWidths::uniform(1));
  const TensorBlock bb = TensorBlock::whole({2, 3, 5, 4, 19});
  const TensorBlock by = TensorBlock::whole({2, 5, 5, 4, 19}, HaloWidths::uniform(1));
  const Twin a = twin("a", ba, 6), b = twin("b", bb, 7);
  for (KernelPath path : kPaths) {
    Outputs y(by), back(bb);
    kernels::concatChannels(Exec(), a.b, b.b, y.b, by.owned(), path);
    kernels::concatChannels(Exec(), a.f, b.f, y.f, by.owned(), path);
    EXPECT_TRUE(roundedEqual(y.b, y.f, by.owned())) << "concat";
    kernels::sliceChannels(Exec(), y.b, 2, back.b, bb.owned(), path);
    EXPECT_TRUE(roundedEqual(back.b, b.f, bb.owned())) << "slice";
    DeviceTensor<bf16> z("z", by);
    kernels::insertChannels(Exec(), b.b, 2, z, by.owned(), path);
    kernels::insertChannels(Exec(), a.b, 0, z, by.owned(), path);
    EXPECT_TRUE(identicalOn(toHost(z), toHost(y.b), by.owned())) << "insert";
  }
}

TEST(MemoryBoundBf16, BatchNormSumsEqualFloatsAndNormalisationsRoundTheFloatResult) {
  // An offset mean, as after a convolution: the normalisation then cancels in float.
  const Twin x = twin("x", kBlock, 8, 0.5, 2.5), dy = twin("dy", kBlock, 9);
  const index_t C = kShape[1];
  const auto gamma = makeVector<float>("gamma", hashValues(std::size_t(C), 10, 0.5, 1.5));
  const auto beta = makeVector<float>("beta", hashValues(std::size_t(C), 11));
  const double eps = 1e-5;
  for (KernelPath path : kPaths) {
    DeviceVector<double> stats_b("stats_b", kernels::batchNormStatsSize(C)),
        stats_f("stats_f", kernels::batchNormStatsSize(C));
    kernels::batchNormStatistics(Exec(), x.b, stats_b, kBox, false, path);
    kernels::batchNormStatistics(Exec(), x.f, stats_f, kBox, false, path);
    EXPECT_EQ(values(stats_b), values(stats_f));
    DeviceVector<float> mean("mean", C), var("var", C);
    kernels::batchNormMoments(Exec(), stats_f, mean, var);
    Outputs y(kBlock), dx(kBlock);
    kernels::batchNormForward(Exec(), x.b, mean, var, gamma, beta, eps, y.b, kBox, path);
    kernels::batchNormForward(Exec(), x.f, mean, var, gamma, beta, eps, y.f, kBox, path);
    EXPECT_TRUE(roundedEqual(y.b, y.f, kBox)) << "forward";
    DeviceVector<double> sums_b("sums_b", kernels::batchNormBackwardSumsSize(C)),
        sums_f("sums_f", kernels::batchNormBackwardSumsSize(C));
    kernels::batchNormBackwardSums(Exec(), x.b, dy.b, mean, var, eps, sums_b, kBox, false, path);
    kernels::batchNormBackwardSums(Exec(), x.f, dy.f, mean, var, eps, sums_f, kBox, false, path);
    EXPECT_EQ(values(sums_b), values(sums_f));
    const double count = double(kShape[0] * kBox.size());
    kernels::batchNormBackward(Exec(), x.b, dy.b, mean, var, gamma, eps, sums_f, count, dx.b, kBox,
                               path);
    kernels::batchNormBackward(Exec(), x.f, dy.f, mean, var, gamma, eps, sums_f, count, dx.f, kBox,
                               path);
    EXPECT_TRUE(roundedEqual(dx.b, dx.f, kBox)) << "backward";
  }
}

TEST(MemoryBoundBf16, LossSumsEqualFloatsAndGradientsRoundTheFloatResult) {
  const Twin logits = twin("logits", kBlock, 12, -3.0, 3.0), target = twin("target", kBlock, 13);
  const TensorBlock lb = TensorBlock::whole({kShape[0], 1, kShape[2], kShape[3], kShape[4]});
  // Labels in [-1, C): bad labels take their own branch.
  const DeviceTensor<std::int32_t> labels =
      toDevice(hostLabels<std::int32_t>("labels", lb, 14, -1, std::int32_t(kShape[1])));
  const index_t C = kShape[1];
  for (KernelPath path : kPaths) {
    DeviceVector<double> mse_b("mse_b", 1), mse_f("mse_f", 1);
    kernels::mseLossSums(Exec(), logits.b, target.b, mse_b, kBox, false, path);
    kernels::mseLossSums(Exec(), logits.f, target.f, mse_f, kBox, false, path);
    EXPECT_EQ(values(mse_b), values(mse_f)) << "mse sums";
    Outputs g(kBlock);
    kernels::mseLossBackward(Exec(), logits.b, target.b, 37.0, g.b, kBox, path);
    kernels::mseLossBackward(Exec(), logits.f, target.f, 37.0, g.f, kBox, path);
    EXPECT_TRUE(roundedEqual(g.b, g.f, kBox)) << "mse backward";

    DeviceVector<double> ce_b("ce_b", 2), ce_f("ce_f", 2);
    kernels::softmaxCrossEntropySums(Exec(), logits.b, labels, ce_b, kBox, false, path);
    kernels::softmaxCrossEntropySums(Exec(), logits.f, labels, ce_f, kBox, false, path);
    EXPECT_EQ(values(ce_b), values(ce_f)) << "cross-entropy sums";
    kernels::softmaxCrossEntropyBackward(Exec(), logits.b, labels, 7.0, g.b, kBox, path);
    kernels::softmaxCrossEntropyBackward(Exec(), logits.f, labels, 7.0, g.f, kBox, path);
    EXPECT_TRUE(roundedEqual(g.b, g.f, kBox)) << "cross-entropy backward";

    DeviceVector<double> dice_b("dice_b", kernels::softDiceSumsSize(C)),
        dice_f("dice_f", kernels::softDiceSumsSize(C));
    kernels::softDiceSums(Exec(), logits.b, labels, dice_b, kBox, false, path);
    kernels::softDiceSums(Exec(), logits.f, labels, dice_f, kBox, false, path);
    EXPECT_EQ(values(dice_b), values(dice_f)) << "Dice sums";
    kernels::softDiceBackward(Exec(), logits.b, labels, dice_f, 1.0, g.b, kBox, path);
    kernels::softDiceBackward(Exec(), logits.f, labels, dice_f, 1.0, g.f, kBox, path);
    EXPECT_TRUE(roundedEqual(g.b, g.f, kBox)) << "Dice backward";
  }
}

TEST(MemoryBoundBf16, SoftmaxArgmaxGivesFloatsLabelsAndRoundedProbabilities) {
  // Values in [-2, 2) rounded to bf16 tie often: argmax takes the lowest class, as in float.
  const Twin logits = twin("logits", kBlock, 15, -2.0, 2.0);
  const TensorBlock lb = TensorBlock::whole({kShape[0], 1, kShape[2], kShape[3], kShape[4]});
  for (KernelPath path : kPaths) {
    DeviceTensor<std::int64_t> labels_b("labels_b", lb), labels_f("labels_f", lb);
    Outputs probs(kBlock);
    kernels::softmaxArgmax(Exec(), logits.b, labels_b, probs.b, kBox, path);
    kernels::softmaxArgmax(Exec(), logits.f, labels_f, probs.f, kBox, path);
    EXPECT_TRUE(sameLabels(labels_b, labels_f, kBox));
    EXPECT_TRUE(roundedEqual(probs.b, probs.f, kBox));
  }
}

// Pooling: a few windows of test_pool3d.cpp's sweep (with ghosts, padding, dilation, W tails).
struct PoolWindow {
  const char* name;
  Shape5 x_shape;
  WindowGeometry g;
};
const PoolWindow kWindows[] = {
    {"k2s2", {2, 3, 4, 6, 18}, WindowGeometry::cubic(2, 2)},
    {"k3s2p1", {1, 3, 7, 6, 21}, WindowGeometry::cubic(3, 2, 1)},
    {"k3s1p1", {2, 2, 5, 3, 17}, WindowGeometry::cubic(3, 1, 1)},
    {"k3s2p2dil2", {1, 2, 9, 7, 20}, WindowGeometry::cubic(3, 2, 2, 2)},
};

Shape5 pooledShape(const PoolWindow& s) {
  const Extents3 e = s.g.outputExtents({s.x_shape[2], s.x_shape[3], s.x_shape[4]});
  return {s.x_shape[0], s.x_shape[1], e[0], e[1], e[2]};
}

// |got - ref| <= 2^-8 |ref| + 2 K^2 u max|term| scale on every cell of `box`, for sums of at most
// K = terms terms (see the top of the file).
::testing::AssertionResult withinSummationTolerance(const DeviceTensor<bf16>& got,
                                                    const DeviceTensor<float>& ref, const Box& box,
                                                    double terms, double max_term, double scale) {
  const HostTensor<bf16> g = toHost(got);
  const HostTensor<float> r = toHost(ref);
  int wrong = 0;
  forEachCellPair(g, r, box, [&](const bf16& a, const float& b) {
    const double tol =
        std::ldexp(std::fabs(double(b)), -8) + 2.0 * terms * terms * 0x1p-24 * max_term * scale;
    if (std::fabs(double(float(a)) - double(b)) > tol) ++wrong;
  });
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << wrong << " cells off the tolerance";
}

TEST(MemoryBoundBf16, PoolingMatchesFloat) {
  for (const PoolWindow& s : kWindows) {
    SCOPED_TRACE(s.name);
    const TensorBlock bx = TensorBlock::whole(s.x_shape, HaloWidths{{1, 2, 0}, {0, 1, 3}});
    const TensorBlock by = TensorBlock::whole(pooledShape(s), HaloWidths{{2, 0, 1}, {1, 1, 0}});
    // Negative data: max pooling must not pick a zero ghost past the volume.
    const Twin x = twin("x", bx, 16, -2.0, -0.5), dy = twin("dy", by, 17);
    const double taps = double(s.g.kernel[0] * s.g.kernel[1] * s.g.kernel[2]);
    for (KernelPath path : kPaths) {
      SCOPED_TRACE(path == KernelPath::Fastest ? "host code" : "device code");
      const KernelPath other =
          path == KernelPath::Fastest ? KernelPath::Device : KernelPath::Fastest;
      // Max: a selection, so the same cell and the same value as float's.
      Outputs y(by), dx(bx);
      DeviceTensor<index_t> arg_b("arg_b", by), arg_f("arg_f", by);
      kernels::maxPool3dForward(Exec(), x.b, s.g, y.b, arg_b, by.owned(), path);
      kernels::maxPool3dForward(Exec(), x.f, s.g, y.f, arg_f, by.owned(), path);
      EXPECT_TRUE(roundedEqual(y.b, y.f, by.owned())) << "max forward";
      EXPECT_TRUE(sameLabels(arg_b, arg_f, by.owned())) << "argmax";
      // The sums: float's result on the same path (same order), rounded; against the other path's
      // order, the summation tolerance.
      kernels::maxPool3dBackward(Exec(), dy.b, arg_b, s.g, dx.b, bx.owned(), by.owned(), path);
      kernels::maxPool3dBackward(Exec(), dy.f, arg_f, s.g, dx.f, bx.owned(), by.owned(), path);
      EXPECT_TRUE(roundedEqual(dx.b, dx.f, bx.owned())) << "max backward";
      kernels::maxPool3dBackward(Exec(), dy.f, arg_f, s.g, dx.f, bx.owned(), by.owned(), other);
      EXPECT_TRUE(withinSummationTolerance(dx.b, dx.f, bx.owned(), taps, 1.0, 1.0))
          << "max backward against float on the other path";

      kernels::avgPool3dForward(Exec(), x.b, s.g, y.b, by.owned(), path);
      kernels::avgPool3dForward(Exec(), x.f, s.g, y.f, by.owned(), path);
      EXPECT_TRUE(roundedEqual(y.b, y.f, by.owned())) << "avg forward";
      kernels::avgPool3dForward(Exec(), x.f, s.g, y.f, by.owned(), other);
      EXPECT_TRUE(withinSummationTolerance(y.b, y.f, by.owned(), taps, 2.0, 1.0 / taps))
          << "avg forward against float on the other path";
      kernels::avgPool3dBackward(Exec(), dy.b, s.g, dx.b, bx.owned(), by.owned(), path);
      kernels::avgPool3dBackward(Exec(), dy.f, s.g, dx.f, bx.owned(), by.owned(), path);
      EXPECT_TRUE(roundedEqual(dx.b, dx.f, bx.owned())) << "avg backward";
      kernels::avgPool3dBackward(Exec(), dy.f, s.g, dx.f, bx.owned(), by.owned(), other);
      EXPECT_TRUE(withinSummationTolerance(dx.b, dx.f, bx.owned(), taps, 1.0, 1.0 / taps))
          << "avg backward against float on the other path";
    }
  }
}

// A layer computes a block's outputs in pieces (interior and slabs around a halo exchange): each
// bf16 cell gets the bits of the whole-box call, on both paths.
TEST(MemoryBoundBf16, PoolingPiecesEqualTheWholeBox) {
  for (const PoolWindow& s : kWindows) {
    SCOPED_TRACE(s.name);
    const TensorBlock bx = TensorBlock::whole(s.x_shape);
    const TensorBlock by = TensorBlock::whole(pooledShape(s));
    const Twin x = twin("x", bx, 18, -2.0, 2.0), dy = twin("dy", by, 19);
    for (KernelPath path : kPaths)
      for (bool is_max : {true, false}) {
        DeviceTensor<bf16> y_whole("y_whole", by), y_parts("y_parts", by);
        DeviceTensor<bf16> dx_whole("dx_whole", bx), dx_parts("dx_parts", bx);
        DeviceTensor<index_t> arg("arg", by), arg_parts("arg_parts", by);
        const auto forward = [&](const DeviceTensor<bf16>& y, const DeviceTensor<index_t>& a,
                                 const Box& box) {
          if (is_max)
            kernels::maxPool3dForward(Exec(), x.b, s.g, y, a, box, path);
          else
            kernels::avgPool3dForward(Exec(), x.b, s.g, y, box, path);
        };
        const auto backward = [&](const DeviceTensor<bf16>& dx, const Box& box) {
          if (is_max)
            kernels::maxPool3dBackward(Exec(), dy.b, arg, s.g, dx, box, by.owned(), path);
          else
            kernels::avgPool3dBackward(Exec(), dy.b, s.g, dx, box, by.owned(), path);
        };
        forward(y_whole, arg, by.owned());
        for (const Box& piece : interiorAndSlabs(by.owned(), 1))
          forward(y_parts, arg_parts, piece);
        EXPECT_TRUE(identicalOn(toHost(y_parts), toHost(y_whole), by.owned())) << is_max;
        EXPECT_TRUE(sameLabels(arg_parts, arg, by.owned()));
        backward(dx_whole, bx.owned());
        for (const Box& piece : interiorAndSlabs(bx.owned(), 2))
          backward(dx_parts, piece);
        EXPECT_TRUE(identicalOn(toHost(dx_parts), toHost(dx_whole), bx.owned())) << is_max;
      }
  }
}

}  // namespace
}  // namespace halo3d::testing
