// ReLU and LeakyReLU against the naive references over a shape sweep, on the host and the device
// code; finite-difference gradients in double; sub-boxes bit-identical to the whole box; in-place
// use; shape errors.
#include <gtest/gtest.h>

#include "halo3d/kernels/Activations.hpp"
#include "halo3d/kernels/reference/Activations.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {
namespace {

namespace ref = kernels::reference;

const double kSlopes[] = {kernels::kLeakyReluSlope, 0.0, 0.2};

template <class T>
void checkAgainstReference() {
  forEachPathAndShape([](KernelPath path, const ShapeCase& sc) {
    const TensorBlock block = TensorBlock::whole(sc.shape, sc.halo);
    const auto x = hostRandom<T>("x", block, 1);
    const auto dy = hostRandom<T>("dy", block, 2);
    for (double slope : kSlopes) {
      auto y = hostRandom<T>("y", block, 3), dx = hostRandom<T>("dx", block, 4);
      const auto y_dev = toDevice(y), dx_dev = toDevice(dx);
      kernels::leakyReluForward(Exec(), toDevice(x), slope, y_dev, block.owned(), path);
      kernels::leakyReluBackward(Exec(), toDevice(x), toDevice(dy), slope, dx_dev, block.owned(),
                                 path);
      ref::leakyReluForward(HostExec(), x, slope, y, block.owned());
      ref::leakyReluBackward(HostExec(), x, dy, slope, dx, block.owned());
      EXPECT_TRUE(identical(toHost(y_dev), y)) << kernelPathName(path) << " slope " << slope;
      EXPECT_TRUE(identical(toHost(dx_dev), dx)) << kernelPathName(path) << " slope " << slope;
    }
  });
}

HALO3D_FLOAT_DOUBLE_TESTS(LeakyRelu, MatchesReferenceFloat, MatchesReferenceDouble,
                          checkAgainstReference, (), ())

TEST(LeakyRelu, ReluIsSlopeZero) {
  const TensorBlock block = TensorBlock::whole({2, 2, 3, 3, 3});
  const auto x = toDevice(hostRandom<float>("x", block, 5));
  const auto dy = toDevice(hostRandom<float>("dy", block, 6));
  for (KernelPath path : kPaths) {
    DeviceTensor<float> y("y", block), dx("dx", block);
    kernels::reluForward(Exec(), x, y, block.owned(), path);
    kernels::reluBackward(Exec(), x, dy, dx, block.owned(), path);
    const auto xs = values(x.view()), ys = values(y.view()), dys = values(dy.view()),
               dxs = values(dx.view());
    for (std::size_t i = 0; i < xs.size(); ++i) {
      EXPECT_EQ(ys[i], xs[i] > 0 ? xs[i] : 0.0) << kernelPathName(path);
      EXPECT_EQ(dxs[i], xs[i] > 0 ? dys[i] : 0.0) << kernelPathName(path);
    }
  }
}

// d<r, leakyRelu(x)>/dx by central differences (of the reference, checked above) equals
// leakyReluBackward(x, r).
TEST(LeakyRelu, GradientMatchesFiniteDifferences) {
  for (const Shape5& shape : {Shape5{1, 1, 1, 1, 1}, Shape5{2, 3, 1, 3, 5}, Shape5{1, 2, 3, 3, 3}})
    for (double slope : kSlopes) {
      const TensorBlock block = TensorBlock::whole(shape, HaloWidths::uniform(1));
      const auto x = hostRandom<double>("x", block, 7);
      const auto r = hostRandom<double>("r", block, 8);
      // Allocated once: an allocation is a parallel zero-fill, slow on an oversubscribed machine.
      const HostTensor<double> y("y", block);
      auto loss = [&] {
        ref::leakyReluForward(HostExec(), x, slope, y, block.owned());
        return dot(y, r);
      };
      DeviceTensor<double> dx("dx", block);
      kernels::leakyReluBackward(Exec(), toDevice(x), toDevice(r), slope, dx, block.owned());
      EXPECT_LT(maxRelError(ownedValues(toHost(dx)), numericGradient(x, loss)), 1e-8)
          << "slope " << slope;
    }
}

// Interior + slabs equal the whole box bit for bit, and the whole box equals the reference (so a
// kernel that wrote nothing fails).
TEST(LeakyRelu, SubBoxesEqualWholeBoxAndInPlaceWorks) {
  const TensorBlock block = TensorBlock::whole({2, 3, 6, 5, 7}, HaloWidths{{1, 0, 2}, {0, 1, 1}});
  const auto xh = hostRandom<float>("x", block, 9), dyh = hostRandom<float>("dy", block, 10);
  const auto x = toDevice(xh);
  const auto dy = toDevice(dyh);
  DeviceTensor<float> y_whole("y", block), y_pieces("y", block), dx_whole("dx", block),
      dx_pieces("dx", block);
  kernels::leakyReluForward(Exec(), x, 0.01, y_whole, block.owned());
  kernels::leakyReluBackward(Exec(), x, dy, 0.01, dx_whole, block.owned());
  for (const Box& piece : interiorAndSlabs(block.owned(), 1)) {
    kernels::leakyReluForward(Exec(), x, 0.01, y_pieces, piece);
    kernels::leakyReluBackward(Exec(), x, dy, 0.01, dx_pieces, piece);
  }
  EXPECT_TRUE(identical(toHost(y_pieces), toHost(y_whole)));
  EXPECT_TRUE(identical(toHost(dx_pieces), toHost(dx_whole)));
  HostTensor<float> y_ref("y_ref", block), dx_ref("dx_ref", block);
  ref::leakyReluForward(HostExec(), xh, 0.01, y_ref, block.owned());
  ref::leakyReluBackward(HostExec(), xh, dyh, 0.01, dx_ref, block.owned());
  EXPECT_TRUE(identical(toHost(y_whole), y_ref));
  EXPECT_TRUE(identical(toHost(dx_whole), dx_ref));
  // In place: y = x, then backward from y (same sign as x for slope >= 0).
  const auto inplace = toDevice(toHost(x));
  kernels::leakyReluForward(Exec(), inplace, 0.01, inplace, block.owned());
  EXPECT_TRUE(identical(toHost(inplace), toHost(y_whole)));
  kernels::leakyReluBackward(Exec(), inplace, dy, 0.01, dx_pieces, block.owned());
  EXPECT_TRUE(identical(toHost(dx_pieces), toHost(dx_whole)));
}

TEST(LeakyRelu, OverloadsWithoutAnInstanceUseTheDefault) {
  const TensorBlock block = TensorBlock::whole({1, 2, 3, 4, 5});
  const auto x = toDevice(hostRandom<float>("x", block, 1));
  DeviceTensor<float> y("y", block), dx("dx", block), y_exec("y", block), dx_exec("dx", block);
  kernels::leakyReluForward(x, 0.1, y, block.owned());
  kernels::leakyReluBackward(x, y, 0.1, dx, block.owned());
  kernels::leakyReluForward(Exec(), x, 0.1, y_exec, block.owned());
  kernels::leakyReluBackward(Exec(), x, y_exec, 0.1, dx_exec, block.owned());
  EXPECT_TRUE(identical(toHost(dx), toHost(dx_exec)));
  // And what the reference gives: a kernel that wrote nothing would leave both at zero.
  const auto xh = toHost(x);
  HostTensor<float> y_ref("y_ref", block), dx_ref("dx_ref", block);
  ref::leakyReluForward(HostExec(), xh, 0.1, y_ref, block.owned());
  ref::leakyReluBackward(HostExec(), xh, y_ref, 0.1, dx_ref, block.owned());
  EXPECT_TRUE(identical(toHost(y), y_ref));
  EXPECT_TRUE(identical(toHost(dx), dx_ref));
}

TEST(LeakyRelu, ShapeErrorsNameTheValues) {
  const auto x = toDevice(hostRandom<float>("x", TensorBlock::whole({2, 2, 3, 4, 5}), 1));
  DeviceTensor<float> y_samples(
      "y", TensorBlock({2, 2, 3, 4, 5}, 0, 1, Box::fromExtents({3, 4, 5}), {}));
  std::string m = errorMessage<ShapeError>([&] {
    kernels::leakyReluForward(Exec(), x, 0.01, y_samples, Box::fromExtents({3, 4, 5}));
  });
  EXPECT_NE(m.find("sample mismatch"), std::string::npos) << m;
  EXPECT_NE(m.find("samples [0, 1)"), std::string::npos) << m;
  EXPECT_NE(m.find("samples [0, 2)"), std::string::npos) << m;
  DeviceTensor<float> y("y", TensorBlock::whole({2, 2, 3, 4, 5}));
  m = errorMessage<ShapeError>([&] {
    kernels::leakyReluBackward(Exec(), x, y, 0.01, y, Box({0, 0, 0}, {4, 4, 5}));
  });
  EXPECT_NE(m.find("leakyReluBackward"), std::string::npos) << m;
  EXPECT_NE(m.find("[0:4, 0:4, 0:5)"), std::string::npos) << m;
}

}  // namespace
}  // namespace halo3d::testing
