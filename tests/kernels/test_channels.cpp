// Channel concatenation and slicing against the naive references over a shape sweep, on the host
// and the device code; slicing undoes concatenation; the gradient of a concatenation is the slices
// of dy (central differences in double); sub-boxes are bit-identical; shape errors.
#include <gtest/gtest.h>

#include "halo3d/kernels/Channels.hpp"
#include "halo3d/kernels/reference/Channels.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {
namespace {

namespace ref = kernels::reference;

Shape5 withChannels(Shape5 s, index_t c) {
  s[1] = c;
  return s;
}

template <class T>
void checkAgainstReference() {
  forEachPathAndShape([](KernelPath path, const ShapeCase& sc) {
    for (index_t cb : {1, 3}) {
      const index_t ca = sc.shape[1];
      // a and b with different ghost widths from y: only the cells matter.
      const TensorBlock ba = TensorBlock::whole(sc.shape, sc.halo);
      const TensorBlock bb = TensorBlock::whole(withChannels(sc.shape, cb));
      const TensorBlock by =
          TensorBlock::whole(withChannels(sc.shape, ca + cb), HaloWidths::uniform(1));
      const auto a = hostRandom<T>("a", ba, 1), b = hostRandom<T>("b", bb, 2);
      auto y_h = hostRandom<T>("y", by, 3);
      const auto y = toDevice(y_h);
      kernels::concatChannels(Exec(), toDevice(a), toDevice(b), y, by.owned(), path);
      ref::concatChannels(HostExec(), a, b, y_h, by.owned());
      EXPECT_TRUE(identical(toHost(y), y_h));
      // Slicing gives a and b back; inserting writes only its channel range.
      DeviceTensor<T> a2("a2", ba), b2("b2", bb);
      kernels::sliceChannels(Exec(), y, 0, a2, ba.owned(), path);
      kernels::sliceChannels(Exec(), y, ca, b2, bb.owned(), path);
      EXPECT_EQ(maxRelError(toHost(a2), a, ba.owned()), 0.0);
      EXPECT_EQ(maxRelError(toHost(b2), b, bb.owned()), 0.0);
      const auto z = hostRandom<T>("z", bb, 4);
      kernels::insertChannels(Exec(), toDevice(z), ca, y, by.owned(), path);
      ref::insertChannels(HostExec(), z, ca, y_h, by.owned());
      EXPECT_TRUE(identical(toHost(y), y_h));
      HostTensor<T> s_h("s", bb);
      DeviceTensor<T> s("s", bb);
      kernels::sliceChannels(Exec(), y, ca - 1, s, bb.owned(), path);
      ref::sliceChannels(HostExec(), y_h, ca - 1, s_h, bb.owned());
      EXPECT_TRUE(identical(toHost(s), s_h));
    }
  });
}

HALO3D_FLOAT_DOUBLE_TESTS(Channels, MatchReferenceFloat, MatchReferenceDouble,
                          checkAgainstReference, (), ())

// d<r, concat(a, b)>/da = slice(r, 0), d/db = slice(r, Ca), by central differences.
TEST(Channels, ConcatGradientIsTheSlicesOfDy) {
  for (const Shape5& shape : {Shape5{1, 1, 1, 1, 1}, Shape5{2, 2, 3, 1, 5}}) {
    const TensorBlock ba = TensorBlock::whole(shape),
                      bb = TensorBlock::whole(withChannels(shape, 3));
    const TensorBlock by = TensorBlock::whole(withChannels(shape, shape[1] + 3));
    const auto a = hostRandom<double>("a", ba, 5), b = hostRandom<double>("b", bb, 6);
    const auto r = hostRandom<double>("r", by, 7);
    // Allocated once: an allocation is a parallel zero-fill, slow on an oversubscribed machine.
    const HostTensor<double> y("y", by);
    auto loss = [&] {
      ref::concatChannels(HostExec(), a, b, y, by.owned());
      return dot(y, r);
    };
    DeviceTensor<double> da("da", ba), db("db", bb);
    kernels::sliceChannels(Exec(), toDevice(r), 0, da, ba.owned());
    kernels::sliceChannels(Exec(), toDevice(r), shape[1], db, bb.owned());
    EXPECT_LT(maxRelError(ownedValues(toHost(da)), numericGradient(a, loss)), 1e-9);
    EXPECT_LT(maxRelError(ownedValues(toHost(db)), numericGradient(b, loss)), 1e-9);
  }
}

// Interior + slabs equal the whole box bit for bit, and the whole box equals the reference (so a
// kernel that wrote nothing fails).
TEST(Channels, SubBoxesEqualWholeBox) {
  const Shape5 shape{2, 2, 5, 6, 7};
  const TensorBlock ba = TensorBlock::whole(shape, HaloWidths::uniform(1));
  const TensorBlock by =
      TensorBlock::whole(withChannels(shape, 4), HaloWidths{{0, 1, 0}, {2, 0, 1}});
  const auto ah = hostRandom<float>("a", ba, 8), bh = hostRandom<float>("b", ba, 9);
  const auto a = toDevice(ah), b = toDevice(bh);
  HostTensor<float> expected("y", by);
  ref::concatChannels(HostExec(), ah, bh, expected, by.owned());
  for (KernelPath path : kPaths) {
    DeviceTensor<float> whole("y", by), pieces("y", by);
    kernels::concatChannels(Exec(), a, b, whole, by.owned(), path);
    for (const Box& piece : interiorAndSlabs(by.owned(), 2))
      kernels::concatChannels(Exec(), a, b, pieces, piece, path);
    EXPECT_TRUE(identical(toHost(pieces), toHost(whole))) << kernelPathName(path);
    EXPECT_TRUE(identical(toHost(whole), expected)) << kernelPathName(path);
  }
}

TEST(Channels, OverloadsWithoutAnInstanceUseTheDefault) {
  const auto a = toDevice(hostRandom<float>("a", TensorBlock::whole({1, 2, 3, 4, 5}), 1));
  const auto b = toDevice(hostRandom<float>("b", TensorBlock::whole({1, 1, 3, 4, 5}), 2));
  DeviceTensor<float> y("y", TensorBlock::whole({1, 3, 3, 4, 5})), b2("b2", b.block());
  const Box box = Box::fromExtents({3, 4, 5});
  kernels::concatChannels(a, b, y, box);
  kernels::sliceChannels(y, 2, b2, box);
  EXPECT_TRUE(identical(toHost(b2), toHost(b)));
  kernels::insertChannels(a, 1, y, box);
  kernels::sliceChannels(Exec(), y, 1, b2, box);
  EXPECT_EQ(values(b2.view())[0], values(a.view())[0]);
}

TEST(Channels, ShapeErrorsNameTheValues) {
  const auto a = toDevice(hostRandom<float>("a", TensorBlock::whole({2, 2, 3, 4, 5}), 1));
  const auto b = toDevice(hostRandom<float>("b", TensorBlock::whole({2, 3, 3, 4, 5}), 2));
  DeviceTensor<float> y("y", TensorBlock::whole({2, 4, 3, 4, 5}));
  const Box box = Box::fromExtents({3, 4, 5});
  std::string m = errorMessage<ShapeError>([&] { kernels::concatChannels(Exec(), a, b, y, box); });
  EXPECT_NE(m.find("has 4 channels but [a, b] has 2 + 3"), std::string::npos) << m;
  m = errorMessage<ShapeError>([&] { kernels::sliceChannels(Exec(), y, 2, b, box); });
  EXPECT_NE(m.find("channels [2, 5) are not inside the 4 channels"), std::string::npos) << m;
  DeviceTensor<float> other("other", TensorBlock::whole({2, 2, 3, 4, 6}));
  m = errorMessage<ShapeError>([&] { kernels::insertChannels(Exec(), other, 0, y, box); });
  EXPECT_NE(m.find("N, D, H, W differ"), std::string::npos) << m;
  EXPECT_NE(m.find("(2, 2, 3, 4, 6)"), std::string::npos) << m;
}

}  // namespace
}  // namespace halo3d::testing
