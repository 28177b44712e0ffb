// Losses: MSE (tensor and flat), softmax cross-entropy and soft Dice against the naive references,
// on the host and the device code;
// gradients against central differences in double; partial sums of a 2x2x2 split equal the whole
// volume's; sub-boxes are bit-identical; bad labels are counted, never read out of bounds, and
// reported with their values.
#include <gtest/gtest.h>

#include "halo3d/kernels/Losses.hpp"
#include "halo3d/kernels/reference/Losses.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {
namespace {

namespace ref = kernels::reference;
using Label = std::int32_t;
constexpr double kDiceEps = 1e-3;

Shape5 labelShape(const Shape5& s) {
  return {s[0], 1, s[2], s[3], s[4]};
}

// A labelled segmentation problem: logits (N, C, D, H, W) and labels in [0, C) on one block.
template <class T, class L = Label>
struct Segmentation {
  TensorBlock block, label_block;
  HostTensor<T> logits;
  HostTensor<L> labels;
  Segmentation(const Shape5& shape, const HaloWidths& halo, std::uint64_t seed = 1)
      : Segmentation(TensorBlock::whole(shape, halo), TensorBlock::whole(labelShape(shape), halo),
                     seed) {}
  Segmentation(const TensorBlock& b, const TensorBlock& lb, std::uint64_t seed)
      : block(b),
        label_block(lb),
        logits(hostRandom<T>("logits", b, seed, -3.0, 3.0)),
        labels(hostLabels<L>("labels", lb, seed + 1, 0, L(b.channels()))) {}
  double voxels() const { return double(block.localSamples() * block.owned().size()); }
};

template <class T>
void checkAgainstReference(double tolerance) {
  forEachPathAndShape([&](KernelPath path, const ShapeCase& sc) {
    const Segmentation<T> s(sc.shape, sc.halo);
    const index_t classes = s.block.channels();
    const Box box = s.block.owned();
    const auto logits = toDevice(s.logits);
    const auto labels = toDevice(s.labels);

    DeviceVector<double> ce("ce", 2), dice("dice", kernels::softDiceSumsSize(classes)),
        mse("mse", 1);
    HostVector<double> ce_h("ce", 2), dice_h("dice", kernels::softDiceSumsSize(classes)),
        mse_h("mse", 1);
    kernels::softmaxCrossEntropySums(Exec(), logits, labels, ce, box, false, path);
    ref::softmaxCrossEntropySums(HostExec(), s.logits, s.labels, ce_h, box);
    EXPECT_LT(maxRelError(values(ce), values(ce_h)), 1e-12);
    kernels::softDiceSums(Exec(), logits, labels, dice, box, false, path);
    ref::softDiceSums(HostExec(), s.logits, s.labels, dice_h, box);
    EXPECT_LT(maxRelError(values(dice), values(dice_h)), 1e-12);
    const auto target = hostRandom<T>("target", s.block, 9);
    kernels::mseLossSums(Exec(), logits, toDevice(target), mse, box, false, path);
    ref::mseLossSums(HostExec(), s.logits, target, mse_h, box);
    EXPECT_LT(maxRelError(values(mse), values(mse_h)), 1e-12);

    DeviceTensor<T> d_ce("d_ce", s.block), d_dice("d_dice", s.block), d_mse("d_mse", s.block);
    HostTensor<T> d_ce_h("d_ce", s.block), d_dice_h("d_dice", s.block), d_mse_h("d_mse", s.block);
    kernels::softmaxCrossEntropyBackward(Exec(), logits, labels, 7.0, d_ce, box, path);
    ref::softmaxCrossEntropyBackward(HostExec(), s.logits, s.labels, 7.0, d_ce_h, box);
    EXPECT_LT(maxRelError(toHost(d_ce), d_ce_h, box), tolerance);
    kernels::softDiceBackward(Exec(), logits, labels, dice, kDiceEps, d_dice, box, path);
    ref::softDiceBackward(HostExec(), s.logits, s.labels, dice_h, kDiceEps, d_dice_h, box);
    EXPECT_LT(maxRelError(toHost(d_dice), d_dice_h, box), tolerance);
    kernels::mseLossBackward(Exec(), logits, toDevice(target), 5.0, d_mse, box, path);
    ref::mseLossBackward(HostExec(), s.logits, target, 5.0, d_mse_h, box);
    EXPECT_LT(maxRelError(toHost(d_mse), d_mse_h, box), tolerance);
  });
}

HALO3D_FLOAT_DOUBLE_TESTS(Losses, MatchReferenceFloat, MatchReferenceDouble, checkAgainstReference,
                          (1e-6), (1e-13))

TEST(Losses, FlatMseMatchesReference) {
  for (std::size_t n : {std::size_t(1), std::size_t(8), std::size_t(3000)}) {
    const auto pred = makeVector<float>("pred", hashValues(n, 1));
    const auto target = makeVector<float>("target", hashValues(n, 2));
    HostVector<double> sums_h("sums", 1);
    ref::mseLossSums(HostExec(), makeVector<float, HostExec>("p", hashValues(n, 1)),
                     makeVector<float, HostExec>("t", hashValues(n, 2)), sums_h);
    for (KernelPath path : kPaths) {
      DeviceVector<double> sums("sums", 1);
      kernels::mseLossSums(Exec(), pred, target, sums, false, path);
      EXPECT_LT(maxRelError(values(sums), values(sums_h)), 1e-13) << kernelPathName(path);
    }
    DeviceVector<float> dpred("dpred", n);
    kernels::mseLossBackward(Exec(), pred, target, double(n), dpred);
    const std::vector<double> p = values(pred), t = values(target), g = values(dpred);
    for (std::size_t i = 0; i < n; ++i)
      EXPECT_EQ(g[i], double(float(2.0 / double(n)) * float(p[i] - t[i])));
  }
}

// The loss of each kind as a function of the logits, through the references (checked above), and
// its gradient through the kernels, at extents including 1 and odd ones.
TEST(Losses, GradientsMatchFiniteDifferences) {
  for (const Shape5& shape :
       {Shape5{1, 2, 1, 1, 1}, Shape5{2, 3, 1, 3, 5}, Shape5{1, 4, 3, 1, 3}}) {
    const Segmentation<double> s(shape, HaloWidths::uniform(1), 5);
    const Box box = s.block.owned();
    const index_t classes = shape[1];
    const double voxels = s.voxels();
    const auto target = hostRandom<double>("target", s.block, 6);
    // Allocated once: an allocation is a parallel zero-fill, slow on an oversubscribed machine.
    const HostVector<double> ce_sums("ce_sums", 2),
        dice_sums_h("dice_sums", kernels::softDiceSumsSize(classes));
    const HostVector<double> mse_sums("mse_sums", 1);
    auto ce_loss = [&, sums = ce_sums] {
      ref::softmaxCrossEntropySums(HostExec(), s.logits, s.labels, sums, box);
      return sums(0) / voxels;
    };
    auto dice_loss = [&, sums = dice_sums_h] {
      ref::softDiceSums(HostExec(), s.logits, s.labels, sums, box);
      return kernels::softDiceLoss(sums, kDiceEps);
    };
    const double elements = voxels * double(classes);
    auto mse_loss = [&, sums = mse_sums] {
      ref::mseLossSums(HostExec(), s.logits, target, sums, box);
      return sums(0) / elements;
    };
    const auto logits = toDevice(s.logits);
    const auto labels = toDevice(s.labels);
    DeviceTensor<double> d_ce("d_ce", s.block), d_dice("d_dice", s.block), d_mse("d_mse", s.block);
    kernels::softmaxCrossEntropyBackward(Exec(), logits, labels, voxels, d_ce, box);
    DeviceVector<double> dice_sums("dice_sums", kernels::softDiceSumsSize(classes));
    kernels::softDiceSums(Exec(), logits, labels, dice_sums, box);
    kernels::softDiceBackward(Exec(), logits, labels, dice_sums, kDiceEps, d_dice, box);
    kernels::mseLossBackward(Exec(), logits, toDevice(target), elements, d_mse, box);
    EXPECT_LT(maxRelError(ownedValues(toHost(d_ce)), numericGradient(s.logits, ce_loss)), 1e-7)
        << shape[1];
    EXPECT_LT(maxRelError(ownedValues(toHost(d_dice)), numericGradient(s.logits, dice_loss)), 1e-6)
        << shape[1];
    EXPECT_LT(maxRelError(ownedValues(toHost(d_mse)), numericGradient(s.logits, mse_loss)), 1e-8)
        << shape[1];
  }
}

// Every loss's partial sums over the 8 blocks of a 1x2x2x2 grid (uneven extents) add up to the
// whole's.
TEST(Losses, PartialsOfASplitSumToTheWhole) {
  const Shape5 shape{2, 3, 5, 7, 3};
  const Segmentation<double> whole(shape, {}, 3);
  const auto target_whole = hostRandom<double>("target", whole.block, 4);
  const index_t classes = shape[1];
  DeviceVector<double> ce("ce", 2), dice("dice", 3 * classes), mse("mse", 1);
  kernels::softmaxCrossEntropySums(Exec(), toDevice(whole.logits), toDevice(whole.labels), ce,
                                   whole.block.owned());
  kernels::softDiceSums(Exec(), toDevice(whole.logits), toDevice(whole.labels), dice,
                        whole.block.owned());
  kernels::mseLossSums(Exec(), toDevice(whole.logits), toDevice(target_whole), mse,
                       whole.block.owned());

  const GridShape grid(1, 2, 2, 2);
  const std::vector<TensorBlock> blocks = gridBlocks(shape, grid, HaloWidths::uniform(1));
  const std::vector<TensorBlock> label_blocks =
      gridBlocks(labelShape(shape), grid, HaloWidths::uniform(1));
  DeviceVector<double> ce_split("ce", 2), dice_split("dice", 3 * classes), mse_split("mse", 1);
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const Segmentation<double> part(blocks[k], label_blocks[k], 3);
    const auto target = hostRandom<double>("target", blocks[k], 4);
    const Box box = blocks[k].owned();
    kernels::softmaxCrossEntropySums(Exec(), toDevice(part.logits), toDevice(part.labels), ce_split,
                                     box, k > 0);
    kernels::softDiceSums(Exec(), toDevice(part.logits), toDevice(part.labels), dice_split, box,
                          k > 0);
    kernels::mseLossSums(Exec(), toDevice(part.logits), toDevice(target), mse_split, box, k > 0);
  }
  EXPECT_LT(maxRelError(values(ce_split), values(ce)), 1e-13);
  EXPECT_LT(maxRelError(values(dice_split), values(dice)), 1e-13);
  EXPECT_LT(maxRelError(values(mse_split), values(mse)), 1e-13);
}

// Interior + slabs equal the whole box bit for bit, and the whole box equals the reference (so a
// kernel that wrote nothing fails).
TEST(Losses, BackwardSubBoxesEqualWholeBox) {
  const Segmentation<float> s({2, 3, 5, 6, 7}, HaloWidths{{1, 0, 2}, {2, 1, 0}}, 8);
  const auto logits = toDevice(s.logits);
  const auto labels = toDevice(s.labels);
  const auto target_h = hostRandom<float>("target", s.block, 9);
  const auto target = toDevice(target_h);
  const std::vector<double> dice_values = hashValues(9, 10, 1.0, 50.0);
  const auto dice_sums = makeVector<double>("dice_sums", dice_values);
  HostTensor<float> ce_ref("ce", s.block), dice_ref("dice", s.block), mse_ref("mse", s.block);
  ref::softmaxCrossEntropyBackward(HostExec(), s.logits, s.labels, 100.0, ce_ref, s.block.owned());
  ref::softDiceBackward(HostExec(), s.logits, s.labels,
                        makeVector<double, HostExec>("dice_sums", dice_values), kDiceEps, dice_ref,
                        s.block.owned());
  ref::mseLossBackward(HostExec(), s.logits, target_h, 100.0, mse_ref, s.block.owned());
  for (KernelPath path : kPaths) {
    auto run = [&](const DeviceTensor<float>& ce, const DeviceTensor<float>& dice,
                   const DeviceTensor<float>& mse, const Box& box) {
      kernels::softmaxCrossEntropyBackward(Exec(), logits, labels, 100.0, ce, box, path);
      kernels::softDiceBackward(Exec(), logits, labels, dice_sums, kDiceEps, dice, box, path);
      kernels::mseLossBackward(Exec(), logits, target, 100.0, mse, box, path);
    };
    DeviceTensor<float> ce("ce", s.block), dice("dice", s.block), mse("mse", s.block);
    DeviceTensor<float> ce_p("ce", s.block), dice_p("dice", s.block), mse_p("mse", s.block);
    run(ce, dice, mse, s.block.owned());
    for (const Box& piece : interiorAndSlabs(s.block.owned(), 1))
      run(ce_p, dice_p, mse_p, piece);
    SCOPED_TRACE(kernelPathName(path));
    EXPECT_TRUE(identical(toHost(ce_p), toHost(ce)));
    EXPECT_TRUE(identical(toHost(dice_p), toHost(dice)));
    EXPECT_TRUE(identical(toHost(mse_p), toHost(mse)));
    EXPECT_LT(maxRelError(toHost(ce), ce_ref, s.block.owned()), 1e-6);
    EXPECT_LT(maxRelError(toHost(dice), dice_ref, s.block.owned()), 1e-6);
    EXPECT_LT(maxRelError(toHost(mse), mse_ref, s.block.owned()), 1e-6);
  }
}

// Labels -1 and C..C+3 in a volume: counted by cross-entropy, given no loss and no gradient,
// missing from Dice's T_c, and named with their range by requireValidLabels.
template <class L>
void checkBadLabels(KernelPath path) {
  const Shape5 shape{2, 3, 3, 4, 5};
  Segmentation<double, L> s(shape, {}, 12);
  const auto v = s.labels.view();
  v(0, 0, 0, 0, 0) = -1;
  v(1, 0, 2, 3, 4) = 6;
  v(1, 0, 1, 1, 1) = 3;
  const Box box = s.block.owned();
  const auto logits = toDevice(s.logits);
  const auto labels = toDevice(s.labels);
  DeviceVector<double> ce("ce", 2), dice("dice", 9);
  kernels::softmaxCrossEntropySums(Exec(), logits, labels, ce, box, false, path);
  EXPECT_EQ(values(ce)[1], 3.0);
  kernels::softDiceSums(Exec(), logits, labels, dice, box, false, path);
  const auto dice_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dice);
  EXPECT_EQ(kernels::softDiceBadLabels(dice_host, s.voxels()), 3.0);
  DeviceTensor<double> dlogits("dlogits", s.block);
  kernels::softmaxCrossEntropyBackward(Exec(), logits, labels, s.voxels(), dlogits, box, path);
  const auto d = toHost(dlogits);
  for (index_t c = 0; c < 3; ++c) {
    EXPECT_EQ(d.view()(0, c, 0, 0, 0), 0.0);
    EXPECT_EQ(d.view()(1, c, 2, 3, 4), 0.0);
  }
  const std::string m =
      errorMessage<InputError>([&] { kernels::requireValidLabels(Exec(), labels, 3, box, path); });
  EXPECT_NE(m.find("'labels'"), std::string::npos) << m;
  EXPECT_NE(m.find("hold 3 values outside [0, 3)"), std::string::npos) << m;
  EXPECT_NE(m.find("smallest -1, largest 6"), std::string::npos) << m;
  EXPECT_NO_THROW(kernels::requireValidLabels(Exec(), labels, 3, Box({2, 0, 0}, {3, 3, 5}), path));
}

TEST(Losses, BadLabelsAreCountedAndReported) {
  for (KernelPath path : kPaths) {
    SCOPED_TRACE(kernelPathName(path));
    checkBadLabels<std::int32_t>(path);
    checkBadLabels<std::int64_t>(path);
  }
}

TEST(Losses, OverloadsWithoutAnInstanceUseTheDefault) {
  const Segmentation<float> s({1, 3, 3, 4, 5}, {});
  const Box box = s.block.owned();
  const auto logits = toDevice(s.logits);
  const auto labels = toDevice(s.labels);
  DeviceVector<double> ce("ce", 2), dice("dice", 9), mse("mse", 1), ce_exec("ce", 2);
  DeviceTensor<float> d_ce("d_ce", s.block), d_dice("d_dice", s.block), d_mse("d_mse", s.block);
  kernels::softmaxCrossEntropySums(logits, labels, ce, box);
  kernels::softmaxCrossEntropyBackward(logits, labels, 60.0, d_ce, box);
  kernels::softDiceSums(logits, labels, dice, box);
  kernels::softDiceBackward(logits, labels, dice, kDiceEps, d_dice, box);
  kernels::mseLossSums(logits, logits, mse, box);
  kernels::mseLossBackward(logits, logits, 60.0, d_mse, box);
  kernels::softmaxCrossEntropySums(Exec(), logits, labels, ce_exec, box);
  EXPECT_EQ(values(ce), values(ce_exec));
  EXPECT_EQ(values(mse)[0], 0.0);
  // What the reference gives: a kernel that wrote nothing would leave its output at zero.
  HostVector<double> ce_h("ce", 2), dice_h("dice", 9);
  HostTensor<float> d_ce_h("d_ce", s.block), d_dice_h("d_dice", s.block);
  ref::softmaxCrossEntropySums(HostExec(), s.logits, s.labels, ce_h, box);
  ref::softmaxCrossEntropyBackward(HostExec(), s.logits, s.labels, 60.0, d_ce_h, box);
  ref::softDiceSums(HostExec(), s.logits, s.labels, dice_h, box);
  ref::softDiceBackward(HostExec(), s.logits, s.labels, dice_h, kDiceEps, d_dice_h, box);
  EXPECT_LT(maxRelError(values(ce), values(ce_h)), 1e-12);
  EXPECT_LT(maxRelError(values(dice), values(dice_h)), 1e-12);
  EXPECT_LT(maxRelError(toHost(d_ce), d_ce_h, box), 1e-6);
  EXPECT_LT(maxRelError(toHost(d_dice), d_dice_h, box), 1e-6);
  const auto shifted = toDevice(hostRandom<float>("shifted", s.block, 3));
  kernels::mseLossSums(logits, shifted, mse, box);
  kernels::mseLossBackward(logits, shifted, 60.0, d_mse, box);
  EXPECT_GT(values(mse)[0], 0.0);
  EXPECT_NE(values(d_mse.view()), std::vector<double>(d_mse.view().size(), 0.0));
}

TEST(Losses, ShapeErrorsNameTheValues) {
  const Segmentation<float> s({2, 3, 3, 4, 5}, {});
  const auto logits = toDevice(s.logits);
  const DeviceTensor<Label> wrong("labels", TensorBlock::whole({2, 1, 3, 4, 6}));
  DeviceVector<double> ce("ce", 2), dice_short("dice", 6);
  std::string m = errorMessage<ShapeError>(
      [&] { kernels::softmaxCrossEntropySums(Exec(), logits, wrong, ce, s.block.owned()); });
  EXPECT_NE(m.find("should have global shape (2, 1, 3, 4, 5)"), std::string::npos) << m;
  EXPECT_NE(m.find("(2, 1, 3, 4, 6)"), std::string::npos) << m;
  m = errorMessage<ShapeError>([&] {
    kernels::softDiceSums(Exec(), logits, toDevice(s.labels), dice_short, s.block.owned());
  });
  EXPECT_NE(m.find("'dice' has extent 6"), std::string::npos) << m;
  EXPECT_NE(m.find("3 C is 9"), std::string::npos) << m;
  const auto pred = makeVector<float>("pred", {1, 2, 3, 4});
  const auto target = makeVector<float>("target", {1, 2, 3});
  DeviceVector<double> mse("mse", 1);
  m = errorMessage<ShapeError>([&] { kernels::mseLossSums(Exec(), pred, target, mse); });
  EXPECT_NE(m.find("'target' has extent 3"), std::string::npos) << m;
  EXPECT_NE(m.find("is 4"), std::string::npos) << m;
}

}  // namespace
}  // namespace halo3d::testing
