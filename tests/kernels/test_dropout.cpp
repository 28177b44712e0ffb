// Dropout: the kernels equal the naive reference, on the host code (Philox blocks drawn per row)
// and on the device code (each cell's bits drawn in its own thread); a cell's mask is the same on
// the whole volume and on every block of splits; the dropped fraction is p; backward applies the
// forward mask; the gradient with the mask fixed matches central differences; sub-boxes are
// bit-identical; bad p and shapes throw.
#include <gtest/gtest.h>

#include "halo3d/kernels/Dropout.hpp"
#include "halo3d/kernels/reference/Dropout.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {
namespace {

namespace ref = kernels::reference;
using kernels::RandomStream;

const RandomStream kStream{0x5eed, 3, 7};

template <class T>
void checkAgainstReference() {
  forEachPathAndShape([](KernelPath path, const ShapeCase& sc) {
    const TensorBlock block = TensorBlock::whole(sc.shape, sc.halo);
    const auto x = hostRandom<T>("x", block, 1);
    for (double p : {0.0, 0.1, 0.5, 0.9}) {
      HostTensor<T> y_ref("y", block), dx_ref("dx", block);
      DeviceTensor<T> y("y", block), dx("dx", block);
      kernels::dropoutForward(Exec(), toDevice(x), p, kStream, y, block.owned(), path);
      kernels::dropoutBackward(Exec(), toDevice(x), p, kStream, dx, block.owned(), path);
      ref::dropoutForward(HostExec(), x, p, kStream, y_ref, block.owned());
      ref::dropoutBackward(HostExec(), x, p, kStream, dx_ref, block.owned());
      EXPECT_TRUE(identical(toHost(y), y_ref)) << kernelPathName(path) << " p " << p;
      EXPECT_TRUE(identical(toHost(dx), dx_ref)) << kernelPathName(path) << " p " << p;
    }
  });
}

HALO3D_FLOAT_DOUBLE_TESTS(Dropout, MatchesReferenceFloat, MatchesReferenceDouble,
                          checkAgainstReference, (), ())

// Dropout of ones is the mask scaled by 1/(1-p): compute it on the whole volume, then on every
// block of several grids (samples split too), and compare cell by cell in global coordinates.
TEST(Dropout, MaskDoesNotDependOnThePartition) {
  const Shape5 shape{2, 3, 7, 5, 6};
  const double p = 0.3;
  const TensorBlock whole = TensorBlock::whole(shape);
  auto dropOnes = [&](const TensorBlock& b) {
    const HostTensor<double> ones_h = hostRandom<double>("ones", b, 0, 1.0, 1.0);
    DeviceTensor<double> y("y", b);
    kernels::dropoutForward(Exec(), toDevice(ones_h), p, kStream, y, b.owned());
    return toHost(y);
  };
  const HostTensor<double> full = dropOnes(whole);
  for (const GridShape& grid :
       {GridShape(1, 2, 2, 2), GridShape(2, 1, 3, 1), GridShape(1, 3, 1, 4)})
    for (const TensorBlock& b : gridBlocks(shape, grid, HaloWidths::uniform(1))) {
      const HostTensor<double> part = dropOnes(b);
      for (index_t n = 0; n < b.localSamples(); ++n)
        for (index_t c = 0; c < shape[1]; ++c)
          for (index_t d = b.owned().min(0); d < b.owned().max(0); ++d)
            for (index_t h = b.owned().min(1); h < b.owned().max(1); ++h)
              for (index_t w = b.owned().min(2); w < b.owned().max(2); ++w) {
                const Extents3 l = b.toLocal({d, h, w});
                ASSERT_EQ(part.view()(n, c, l[0], l[1], l[2]),
                          full.view()(b.sampleBegin() + n, c, d, h, w))
                    << grid.str() << " sample " << b.sampleBegin() + n << " cell " << d << "," << h
                    << "," << w;
              }
    }
}

TEST(Dropout, DropsAFractionPAndScalesTheRest) {
  const TensorBlock block = TensorBlock::whole({2, 4, 16, 16, 16});
  const auto ones = toDevice(hostRandom<float>("ones", block, 0, 1.0, 1.0));
  for (double p : {0.1, 0.5, 0.8}) {
    DeviceTensor<float> y("y", block);
    kernels::dropoutForward(Exec(), ones, p, kStream, y, block.owned());
    const std::vector<double> v = values(y.view());
    double dropped = 0;
    for (double e : v) {
      if (e == 0.0) {
        ++dropped;
      } else {
        ASSERT_EQ(e, double(float(1.0 / (1.0 - p))));
      }
    }
    const double n = double(v.size());
    EXPECT_NEAR(dropped / n, p, 6.0 * std::sqrt(p * (1 - p) / n)) << "p " << p;
  }
  // Another step or another layer draws another mask.
  DeviceTensor<float> a("a", block), b("b", block), c("c", block);
  kernels::dropoutForward(Exec(), ones, 0.5, RandomStream{1, 1, 1}, a, block.owned());
  kernels::dropoutForward(Exec(), ones, 0.5, RandomStream{1, 2, 1}, b, block.owned());
  kernels::dropoutForward(Exec(), ones, 0.5, RandomStream{1, 1, 2}, c, block.owned());
  EXPECT_NE(values(a.view()), values(b.view()));
  EXPECT_NE(values(a.view()), values(c.view()));
}

// With the stream fixed the mask is fixed, so dropout is linear in x and its gradient is the
// backward pass.
TEST(Dropout, GradientWithFixedMaskMatchesFiniteDifferences) {
  for (const Shape5& shape :
       {Shape5{1, 1, 1, 1, 1}, Shape5{2, 3, 1, 3, 5}, Shape5{1, 2, 3, 3, 3}}) {
    const TensorBlock block = TensorBlock::whole(shape, HaloWidths::uniform(1));
    const auto x = hostRandom<double>("x", block, 5);
    const auto r = hostRandom<double>("r", block, 6);
    // Allocated once: an allocation is a parallel zero-fill, slow on an oversubscribed machine.
    const HostTensor<double> y("y", block);
    auto loss = [&] {
      ref::dropoutForward(HostExec(), x, 0.4, kStream, y, block.owned());
      return dot(y, r);
    };
    DeviceTensor<double> dx("dx", block);
    kernels::dropoutBackward(Exec(), toDevice(r), 0.4, kStream, dx, block.owned());
    EXPECT_LT(maxRelError(ownedValues(toHost(dx)), numericGradient(x, loss)), 1e-8);
  }
}

// Interior + slabs equal the whole box bit for bit, and the whole box equals the reference (so a
// kernel that wrote nothing fails).
TEST(Dropout, SubBoxesEqualWholeBox) {
  const TensorBlock block = TensorBlock::whole({2, 3, 5, 6, 7}, HaloWidths::uniform(2));
  const auto xh = hostRandom<float>("x", block, 7);
  const auto x = toDevice(xh);
  HostTensor<float> expected("y", block);
  ref::dropoutForward(HostExec(), xh, 0.5, kStream, expected, block.owned());
  for (KernelPath path : kPaths) {
    DeviceTensor<float> whole("y", block), pieces("y", block);
    kernels::dropoutForward(Exec(), x, 0.5, kStream, whole, block.owned(), path);
    for (const Box& piece : interiorAndSlabs(block.owned(), 2))
      kernels::dropoutForward(Exec(), x, 0.5, kStream, pieces, piece, path);
    EXPECT_TRUE(identical(toHost(pieces), toHost(whole))) << kernelPathName(path);
    EXPECT_TRUE(identical(toHost(whole), expected)) << kernelPathName(path);
  }
}

TEST(Dropout, OverloadsWithoutAnInstanceUseTheDefault) {
  const TensorBlock block = TensorBlock::whole({1, 2, 3, 4, 5});
  const auto x = toDevice(hostRandom<float>("x", block, 1));
  DeviceTensor<float> y("y", block), dx("dx", block), dx_exec("dx", block);
  kernels::dropoutForward(x, 0.3, kStream, y, block.owned());
  kernels::dropoutBackward(y, 0.3, kStream, dx, block.owned());
  kernels::dropoutForward(Exec(), x, 0.3, kStream, dx_exec, block.owned());
  kernels::dropoutBackward(Exec(), dx_exec, 0.3, kStream, dx_exec, block.owned());
  EXPECT_TRUE(identical(toHost(dx), toHost(dx_exec)));
  // And what the reference gives: a kernel that wrote nothing would leave both at zero.
  const auto xh = toHost(x);
  HostTensor<float> y_ref("y", block), dx_ref("dx", block);
  ref::dropoutForward(HostExec(), xh, 0.3, kStream, y_ref, block.owned());
  ref::dropoutBackward(HostExec(), y_ref, 0.3, kStream, dx_ref, block.owned());
  EXPECT_TRUE(identical(toHost(y), y_ref));
  EXPECT_TRUE(identical(toHost(dx), dx_ref));
}

TEST(Dropout, BadProbabilityAndShapesThrow) {
  const TensorBlock block = TensorBlock::whole({1, 2, 3, 4, 5});
  const auto x = toDevice(hostRandom<float>("x", block, 8));
  DeviceTensor<float> y("y", block);
  for (double p : {-0.1, 1.0, 1.5}) {
    const std::string m = errorMessage<InputError>(
        [&] { kernels::dropoutForward(Exec(), x, p, kStream, y, block.owned()); });
    EXPECT_NE(m.find(concat("drop probability ", p)), std::string::npos) << m;
  }
  DeviceTensor<float> other("other", TensorBlock::whole({1, 3, 3, 4, 5}));
  const std::string m = errorMessage<ShapeError>(
      [&] { kernels::dropoutBackward(Exec(), x, 0.5, kStream, other, block.owned()); });
  EXPECT_NE(m.find("dropoutBackward"), std::string::npos) << m;
  EXPECT_NE(m.find("(1, 3, 3, 4, 5)"), std::string::npos) << m;
}

}  // namespace
}  // namespace halo3d::testing
