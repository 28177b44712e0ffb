// Softmax-argmax and the Dice counts (kernels/Segmentation.hpp) against the naive references, on
// the host and the device code, float and double logits, int32 and int64 labels, over a shape sweep
// with ghosts; ties go to the lowest class; labels outside [0, C) count in no class; the counts of
// pieces of a box add up to the whole box's; sub-boxes are bit-identical; shape errors.
#include <gtest/gtest.h>

#include <cstdint>

#include "halo3d/kernels/Segmentation.hpp"
#include "halo3d/kernels/reference/Segmentation.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {
namespace {

namespace ref = kernels::reference;

Shape5 labelShape(const Shape5& s) {
  return {s[0], 1, s[2], s[3], s[4]};
}

template <class T, class L>
void checkAgainstReference(double tolerance) {
  for (KernelPath path : kPaths)
    for (const ShapeCase& sc : shapeSweep()) {
      SCOPED_TRACE(::testing::Message() << kernelPathName(path) << " " << sc.shape[0] << "x"
                                        << sc.shape[1] << "x" << sc.shape[2]);
      const TensorBlock block = TensorBlock::whole(sc.shape, sc.halo);
      const TensorBlock label_block = TensorBlock::whole(labelShape(sc.shape));
      const index_t classes = sc.shape[1];
      const Box box = block.owned();
      const auto logits_h = hostRandom<T>("logits", block, 1, -3.0, 3.0);
      const auto logits = toDevice(logits_h);
      // Prediction from every path and the reference; labels with the probabilities and without.
      DeviceTensor<L> labels("labels", label_block), labels_only("labels", label_block);
      DeviceTensor<T> probs("probs", block);
      HostTensor<L> labels_ref("labels", label_block);
      HostTensor<T> probs_ref("probs", block);
      kernels::softmaxArgmax(Exec(), logits, labels, probs, box, path);
      kernels::softmaxArgmax(Exec(), logits, labels_only, DeviceTensor<T>(), box, path);
      ref::softmaxArgmax(HostExec(), logits_h, labels_ref, probs_ref, box);
      EXPECT_TRUE(identical(toHost(labels), labels_ref));
      EXPECT_TRUE(identical(toHost(labels_only), labels_ref));
      EXPECT_LE(maxRelError(toHost(probs), probs_ref, box), tolerance);

      // Dice counts of the prediction against random labels, some outside [0, C).
      const auto truth_h = hostLabels<L>("truth", label_block, 2, L(-1), L(classes + 1));
      const auto truth = toDevice(truth_h);
      DeviceVector<double> counts("counts", kernels::diceCountsSize(classes));
      HostVector<double> counts_ref("counts", kernels::diceCountsSize(classes));
      kernels::diceCounts(Exec(), labels, truth, classes, counts, box, false, path);
      ref::diceCounts(HostExec(), labels_ref, truth_h, classes, counts_ref, box);
      EXPECT_EQ(values(counts), values(counts_ref));
      // Accumulating adds the same counts again.
      kernels::diceCounts(Exec(), labels, truth, classes, counts, box, true, path);
      std::vector<double> twice = values(counts_ref);
      for (double& v : twice)
        v *= 2;
      EXPECT_EQ(values(counts), twice);
    }
}

TEST(Segmentation, MatchesReferenceFloatInt32) {
  checkAgainstReference<float, std::int32_t>(1e-6);
}
TEST(Segmentation, MatchesReferenceDoubleInt64) {
  checkAgainstReference<double, std::int64_t>(1e-14);
}

// Ties go to the lowest class (torch.argmax); known counts of a small volume.
TEST(Segmentation, TiesGoToTheLowestClassAndCountsAreKnown) {
  const TensorBlock block = TensorBlock::whole({1, 3, 1, 1, 4});
  const TensorBlock label_block = TensorBlock::whole({1, 1, 1, 1, 4});
  HostTensor<float> logits_h("logits", block);
  // Cell 0: all equal -> 0. Cell 1: 1 and 2 tie -> 1. Cell 2: 2 wins. Cell 3: 0 and 2 tie -> 0.
  const float v[3][4] = {{0, 0, 0, 5}, {0, 3, 1, 1}, {0, 3, 2, 5}};
  for (int c = 0; c < 3; ++c)
    for (int w = 0; w < 4; ++w)
      logits_h.view()(0, c, 0, 0, w) = v[c][w];
  HostTensor<std::int32_t> truth_h("truth", label_block);
  const std::int32_t t[4] = {0, 2, 2, 7};  // 7: no class
  for (int w = 0; w < 4; ++w)
    truth_h.view()(0, 0, 0, 0, w) = t[w];
  for (KernelPath path : kPaths) {
    SCOPED_TRACE(kernelPathName(path));
    DeviceTensor<std::int32_t> labels("labels", label_block);
    kernels::softmaxArgmax(Exec(), toDevice(logits_h), labels, DeviceTensor<float>(), block.owned(),
                           path);
    EXPECT_EQ(values(labels.view()), (std::vector<double>{0, 1, 2, 0}));
    DeviceVector<double> counts("counts", 9);
    kernels::diceCounts(Exec(), labels, toDevice(truth_h), 3, counts, block.owned(), false, path);
    // I = [1, 0, 1], P = [2, 1, 1], T = [1, 0, 2].
    EXPECT_EQ(values(counts), (std::vector<double>{1, 0, 1, 2, 1, 1, 1, 0, 2}));
  }
}

// The counts over the interior and slabs of a box add up to the whole box's; labels computed piece
// by piece equal the whole box's, bit for bit, and the reference's (so a kernel that wrote nothing
// fails).
TEST(Segmentation, PartialCountsOfASplitAndSubBoxes) {
  const Shape5 shape{2, 4, 5, 7, 3};
  const TensorBlock whole = TensorBlock::whole(shape, HaloWidths::uniform(1));
  const TensorBlock label_whole = TensorBlock::whole(labelShape(shape));
  const auto logits = toDevice(hostRandom<float>("logits", whole, 5, -2.0, 2.0));
  const auto truth = toDevice(hostLabels<std::int32_t>("truth", label_whole, 6, 0, 4));
  for (KernelPath path : kPaths) {
    SCOPED_TRACE(kernelPathName(path));
    DeviceTensor<std::int32_t> pred("pred", label_whole), pred_parts("pred", label_whole);
    DeviceTensor<float> probs("probs", whole), probs_parts("probs", whole);
    kernels::softmaxArgmax(Exec(), logits, pred, probs, whole.owned(), path);
    for (const Box& piece : interiorAndSlabs(whole.owned(), 1))
      kernels::softmaxArgmax(Exec(), logits, pred_parts, probs_parts, piece, path);
    EXPECT_TRUE(identical(toHost(pred_parts), toHost(pred)));
    EXPECT_TRUE(identical(toHost(probs_parts), toHost(probs)));
    HostTensor<std::int32_t> pred_ref("pred", label_whole);
    HostTensor<float> probs_ref("probs", whole);
    ref::softmaxArgmax(HostExec(), toHost(logits), pred_ref, probs_ref, whole.owned());
    EXPECT_TRUE(identical(toHost(pred), pred_ref));
    EXPECT_LE(maxRelError(toHost(probs), probs_ref, whole.owned()), 1e-6);

    DeviceVector<double> counts("counts", 12), split("split", 12);
    kernels::diceCounts(Exec(), pred, truth, 4, counts, whole.owned(), false, path);
    bool accumulate = false;
    for (const Box& piece : interiorAndSlabs(whole.owned(), 2)) {
      kernels::diceCounts(Exec(), pred, truth, 4, split, piece, accumulate, path);
      accumulate = true;
    }
    EXPECT_EQ(values(split), values(counts));
    double voxels = 0;
    for (int c = 0; c < 4; ++c)
      voxels += values(counts)[std::size_t(8 + c)];
    EXPECT_EQ(voxels, double(shape[0] * shape[2] * shape[3] * shape[4]));
  }
}

TEST(Segmentation, OverloadsWithoutAnInstanceUseTheDefault) {
  const TensorBlock block = TensorBlock::whole({1, 3, 2, 3, 4});
  const TensorBlock label_block = TensorBlock::whole({1, 1, 2, 3, 4});
  const auto logits_h = hostRandom<double>("logits", block, 7);
  DeviceTensor<std::int64_t> labels("labels", label_block);
  DeviceTensor<double> probs("probs", block);
  kernels::softmaxArgmax(toDevice(logits_h), labels, probs, block.owned());
  HostTensor<std::int64_t> labels_ref("labels", label_block);
  HostTensor<double> probs_ref("probs", block);
  ref::softmaxArgmax(HostExec(), logits_h, labels_ref, probs_ref, block.owned());
  EXPECT_TRUE(identical(toHost(labels), labels_ref));
  EXPECT_LE(maxRelError(toHost(probs), probs_ref, block.owned()), 1e-14);
  DeviceVector<double> counts("counts", 9);
  kernels::diceCounts(labels, labels, 3, counts, block.owned());
  const std::vector<double> c = values(counts);
  EXPECT_EQ(c[0] + c[1] + c[2], 24.0);  // every voxel agrees with itself
  EXPECT_EQ(std::vector<double>(c.begin(), c.begin() + 3),
            std::vector<double>(c.begin() + 3, c.begin() + 6));
}

TEST(Segmentation, ShapeErrorsNameTheValues) {
  const TensorBlock block = TensorBlock::whole({2, 3, 3, 4, 5});
  const auto logits = toDevice(hostRandom<float>("logits", block, 1));
  DeviceTensor<std::int32_t> two("labels", TensorBlock::whole({2, 2, 3, 4, 5}));
  std::string m = errorMessage<ShapeError>(
      [&] { kernels::softmaxArgmax(Exec(), logits, two, DeviceTensor<float>(), block.owned()); });
  EXPECT_NE(m.find("labels have 2 channels, expected 1"), std::string::npos) << m;
  DeviceTensor<std::int32_t> wrong("labels", TensorBlock::whole({2, 1, 3, 4, 6}));
  m = errorMessage<ShapeError>(
      [&] { kernels::softmaxArgmax(Exec(), logits, wrong, DeviceTensor<float>(), block.owned()); });
  EXPECT_NE(m.find("should have global shape (2, 1, 3, 4, 5)"), std::string::npos) << m;
  DeviceTensor<std::int32_t> labels("labels", TensorBlock::whole({2, 1, 3, 4, 5}));
  DeviceTensor<float> probs_bad("probs_bad", TensorBlock::whole({2, 4, 3, 4, 5}));
  m = errorMessage<ShapeError>(
      [&] { kernels::softmaxArgmax(Exec(), logits, labels, probs_bad, block.owned()); });
  EXPECT_NE(m.find("'probs_bad'"), std::string::npos) << m;
  DeviceVector<double> short_counts("counts", 8);
  m = errorMessage<ShapeError>(
      [&] { kernels::diceCounts(Exec(), labels, labels, 3, short_counts, block.owned()); });
  EXPECT_NE(m.find("'counts' has extent 8"), std::string::npos) << m;
  EXPECT_NE(m.find("3 C is 9"), std::string::npos) << m;
  m = errorMessage<ShapeError>(
      [&] { kernels::diceCounts(Exec(), labels, wrong, 3, short_counts, block.owned()); });
  EXPECT_NE(m.find("(2, 1, 3, 4, 6)"), std::string::npos) << m;
}

}  // namespace
}  // namespace halo3d::testing
