// Losses against PyTorch (ops.h5): softmax_cross_entropy/* (logits (N, C, D, H, W), integer labels
// (N, D, H, W), mean over voxels) through the tensor kernels with int64 and int32 labels, and mse/*
// (pred and target (N, 4), mean over elements) through the flat kernels; loss and gradient, fp32
// and fp64. Error measure per tensor: max |ours - ref| / max |ref|, at most 1e-4 in fp32 and 1e-10
// in fp64.
#include <gtest/gtest.h>

#include "halo3d/kernels/Losses.hpp"
#include "test_elementwise_pytorch_support.hpp"

namespace halo3d::testing {
namespace {

// The labels array (N, D, H, W) as a (N, 1, D, H, W) tensor.
template <class L>
HostTensor<L> labelsOf(const Array& a) {
  Array shaped = a;
  shaped.shape = {a.extent(0), 1, a.extent(1), a.extent(2), a.extent(3)};
  return tensorOf<L>("labels", shaped);
}

template <class T, class L>
void checkCrossEntropy(double tolerance) {
  forEachCase("softmax_cross_entropy", [&](const H5File& file, const std::string& g) {
    const auto logits = tensorOf<T>("logits", file.read(g + "/logits"));
    const auto labels = labelsOf<L>(file.read(g + "/labels"));
    const Box box = logits.block().owned();
    const double voxels = double(logits.block().localSamples() * box.size());
    DeviceVector<double> sums("sums", kernels::kCrossEntropySumsSize);
    kernels::softmaxCrossEntropySums(Exec(), toDevice(logits), toDevice(labels), sums, box);
    DeviceTensor<T> dlogits("dlogits", logits.block());
    kernels::softmaxCrossEntropyBackward(Exec(), toDevice(logits), toDevice(labels), voxels,
                                         dlogits, box);
    const std::vector<double> s = values(sums);
    EXPECT_EQ(s[1], 0.0) << g << ": bad labels";
    expectMatches({s[0] / voxels}, file, g, "loss", tolerance);
    expectMatches(toHost(dlogits), file, g, "dlogits", box, tolerance);
  });
}

TEST(CrossEntropyPytorch, Float32Int64Labels) {
  checkCrossEntropy<float, std::int64_t>(1e-4);
}
TEST(CrossEntropyPytorch, Float32Int32Labels) {
  checkCrossEntropy<float, std::int32_t>(1e-4);
}
TEST(CrossEntropyPytorch, Float64) {
  checkCrossEntropy<double, std::int64_t>(1e-10);
}

template <class T>
void checkMse(double tolerance) {
  forEachCase("mse", [&](const H5File& file, const std::string& g) {
    const Array pred = file.read(g + "/pred");
    const auto p = makeVector<T>("pred", pred.data);
    const auto t = makeVector<T>("target", file.read(g + "/target").data);
    const double elements = double(pred.size());
    DeviceVector<double> sums("sums", kernels::kMseSumsSize);
    kernels::mseLossSums(Exec(), p, t, sums);
    DeviceVector<T> dpred("dpred", pred.size());
    kernels::mseLossBackward(Exec(), p, t, elements, dpred);
    expectMatches({values(sums)[0] / elements}, file, g, "loss", tolerance);
    expectMatches(values(dpred), file, g, "dpred", tolerance);
  });
}

HALO3D_PYTORCH_FLOAT_TESTS(MsePytorch, checkMse, 1e-4, 1e-10)

}  // namespace
}  // namespace halo3d::testing
