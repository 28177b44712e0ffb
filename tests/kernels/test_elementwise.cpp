// Element-wise kernels on tensors and flat Views against the naive references, over a shape sweep
// with ghosts, on the host and the device code; sub-boxes give bit-identical results; shape errors
// name the values.
#include <gtest/gtest.h>

#include <type_traits>

#include "halo3d/kernels/Elementwise.hpp"
#include "halo3d/kernels/reference/Elementwise.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {
namespace {

namespace ref = kernels::reference;

// The five tensor kernels, each run as out = op(a, b) on `box`, on the device and in the reference.
enum class Op { Fill, Copy, Scale, Add, Axpby, AxpbyZeroBeta };
const Op kOps[] = {Op::Fill, Op::Copy, Op::Scale, Op::Add, Op::Axpby, Op::AxpbyZeroBeta};

// The kernel on `path`, on the default execution space.
template <class T>
void runKernel(Op op, const DeviceTensor<T>& a, const DeviceTensor<T>& b, const DeviceTensor<T>& y,
               const Box& box, KernelPath path = KernelPath::Fastest) {
  const Exec exec;
  switch (op) {
    case Op::Fill:
      return kernels::fill(exec, T(0.25), y, box, path);
    case Op::Copy:
      return kernels::copy(exec, a, y, box, path);
    case Op::Scale:
      return kernels::scale(exec, T(-1.5), y, box, path);
    case Op::Add:
      return kernels::add(exec, a, b, y, box, path);
    case Op::Axpby:
      return kernels::axpby(exec, T(2), a, T(-0.5), y, box, path);
    case Op::AxpbyZeroBeta:
      return kernels::axpby(exec, T(3), a, T(0), y, box, path);
  }
}

// The naive reference of the same operation, on host tensors.
template <class T>
void runReference(Op op, const HostTensor<T>& a, const HostTensor<T>& b, const HostTensor<T>& y,
                  const Box& box) {
  const HostExec exec;
  switch (op) {
    case Op::Fill:
      return ref::fill(exec, T(0.25), y, box);
    case Op::Copy:
      return ref::copy(exec, a, y, box);
    case Op::Scale:
      return ref::scale(exec, T(-1.5), y, box);
    case Op::Add:
      return ref::add(exec, a, b, y, box);
    case Op::Axpby:
      return ref::axpby(exec, T(2), a, T(-0.5), y, box);
    case Op::AxpbyZeroBeta:
      return ref::axpby(exec, T(3), a, T(0), y, box);
  }
}

// Kernel and reference are separate translation units, which may contract a * x + b * y into an FMA
// differently: they agree to a few ulps, not bit for bit.
template <class T>
constexpr double kTolerance = std::is_same<T, float>::value ? 1e-6 : 1e-15;

template <class T>
void checkAgainstReference() {
  forEachPathAndShape([](KernelPath path, const ShapeCase& sc) {
    const TensorBlock block = TensorBlock::whole(sc.shape, sc.halo);
    const auto a = hostRandom<T>("a", block, 1);
    const auto b = hostRandom<T>("b", block, 2);
    for (Op op : kOps) {
      const auto y = hostRandom<T>("y", block, 3);
      const Box box = block.owned();
      const auto dy = toDevice(y);
      runKernel<T>(op, toDevice(a), toDevice(b), dy, box, path);
      runReference<T>(op, a, b, y, box);
      EXPECT_LE(maxRelError(toHost(dy), y, box), kTolerance<T>)
          << kernelPathName(path) << " op " << int(op) << " shape " << sc.shape[0] << "x"
          << sc.shape[1];
    }
  });
}

HALO3D_FLOAT_DOUBLE_TESTS(Elementwise, TensorKernelsMatchReferenceFloat,
                          TensorKernelsMatchReferenceDouble, checkAgainstReference, (), ())

// Interior + six slabs, computed separately, equal one call on the whole box bit for bit; ghosts
// untouched; and the whole box matches the reference (so a kernel that wrote nothing fails).
TEST(Elementwise, SubBoxesEqualWholeBox) {
  const TensorBlock block = TensorBlock::whole({2, 3, 5, 6, 7}, HaloWidths::uniform(1));
  for (KernelPath path : kPaths)
    for (Op op : kOps) {
      const auto a = hostRandom<float>("a", block, 4);
      const auto b = hostRandom<float>("b", block, 5);
      const auto expected = hostRandom<float>("y", block, 6);
      const auto whole = toDevice(expected), pieces = toDevice(expected);
      runKernel<float>(op, toDevice(a), toDevice(b), whole, block.owned(), path);
      for (const Box& piece : interiorAndSlabs(block.owned(), 2))
        runKernel<float>(op, toDevice(a), toDevice(b), pieces, piece, path);
      runReference<float>(op, a, b, expected, block.owned());
      EXPECT_TRUE(identical(toHost(pieces), toHost(whole)))
          << kernelPathName(path) << " op " << int(op);
      EXPECT_LE(maxRelError(toHost(whole), expected, block.owned()), kTolerance<float>)
          << kernelPathName(path) << " op " << int(op);
    }
}

TEST(Elementwise, InPlaceAddAndFillOfGhosts) {
  const TensorBlock block = TensorBlock::whole({1, 2, 3, 4, 5}, HaloWidths::uniform(1));
  const auto a = hostRandom<double>("a", block, 7);
  const auto b = hostRandom<double>("b", block, 8);
  const auto da = toDevice(a);
  kernels::add(Exec(), da, toDevice(b), da, block.owned());
  ref::add(HostExec(), a, b, a, block.owned());
  EXPECT_TRUE(identical(toHost(da), a));
  // fill may cover the ghosts: a layer zeroes a pull-form gradient with them.
  const Box all = block.owned().grown({1, 1, 1}, {1, 1, 1});
  kernels::fill(Exec(), 0.0, da, all);
  for (double v : values(da.view()))
    ASSERT_EQ(v, 0.0);
}

// The overloads without an instance give what the reference gives (and what the overloads with
// the default instance give, bit for bit).
TEST(Elementwise, OverloadsWithoutAnInstanceUseTheDefault) {
  const TensorBlock block = TensorBlock::whole({1, 2, 3, 4, 5});
  const auto ah = hostRandom<float>("a", block, 1), bh = hostRandom<float>("b", block, 2);
  const auto a = toDevice(ah), b = toDevice(bh);
  DeviceTensor<float> y("y", block), y_exec("y", block);
  kernels::fill(1.0, y, block.owned());
  kernels::add(a, b, y, block.owned());
  kernels::scale(2.0, y, block.owned());
  kernels::axpby(1.0, a, -1.0, y, block.owned());
  kernels::copy(y, y, block.owned());
  kernels::add(Exec(), a, b, y_exec, block.owned());
  kernels::scale(Exec(), 2.0f, y_exec, block.owned());
  kernels::axpby(Exec(), 1.0f, a, -1.0f, y_exec, block.owned());
  EXPECT_TRUE(identical(toHost(y), toHost(y_exec)));
  HostTensor<float> expected("expected", block);
  ref::fill(HostExec(), 1.0f, expected, block.owned());
  ref::add(HostExec(), ah, bh, expected, block.owned());
  ref::scale(HostExec(), 2.0f, expected, block.owned());
  ref::axpby(HostExec(), 1.0f, ah, -1.0f, expected, block.owned());
  EXPECT_LE(maxRelError(toHost(y), expected, block.owned()), kTolerance<float>);
}

TEST(Elementwise, ShapeErrorsNameTheValues) {
  const auto a = toDevice(hostRandom<float>("a", TensorBlock::whole({1, 2, 3, 4, 5}), 1));
  const auto b = toDevice(hostRandom<float>("b", TensorBlock::whole({1, 3, 3, 4, 5}), 1));
  std::string m = errorMessage<ShapeError>([&] { kernels::copy(Exec(), a, b, a.block().owned()); });
  EXPECT_NE(m.find("copy"), std::string::npos) << m;
  EXPECT_NE(m.find("(1, 2, 3, 4, 5)"), std::string::npos) << m;
  EXPECT_NE(m.find("(1, 3, 3, 4, 5)"), std::string::npos) << m;
  m = errorMessage<ShapeError>([&] { kernels::scale(Exec(), 2.0f, a, Box({0, 0, 0}, {3, 4, 6})); });
  EXPECT_NE(m.find("[0:3, 0:4, 0:6)"), std::string::npos) << m;
  EXPECT_NE(m.find("'a'"), std::string::npos) << m;
  const auto x = makeVector<float>("x", {1, 2, 3});
  const auto y = makeVector<float>("y", {1, 2});
  m = errorMessage<ShapeError>([&] { kernels::axpy(Exec(), 1.0f, x, y); });
  EXPECT_NE(m.find("'x' has extent 3"), std::string::npos) << m;
  EXPECT_NE(m.find("extent of 'y' is 2"), std::string::npos) << m;
}

template <class T>
void checkFlat(std::size_t n) {
  const std::vector<double> xs = hashValues(n, 11), ys = hashValues(n, 12);
  const auto x = makeVector<T>("x", xs);
  auto check = [&](auto&& device_op, auto&& reference_op) {
    const auto y = makeVector<T>("y", ys);
    const auto y_ref = makeVector<T, HostExec>("y_ref", ys);
    device_op(y);
    reference_op(y_ref, makeVector<T, HostExec>("x_ref", xs));
    EXPECT_LE(maxRelError(values(y), values(y_ref)), kTolerance<T>) << "extent " << n;
  };
  check([&](auto y) { kernels::fill(Exec(), T(2), y); },
        [&](auto y, auto) { ref::fill(HostExec(), T(2), y); });
  check([&](auto y) { kernels::copy(Exec(), x, y); },
        [&](auto y, auto xr) { ref::copy(HostExec(), xr, y); });
  check([&](auto y) { kernels::scale(Exec(), T(0.5), y); },
        [&](auto y, auto) { ref::scale(HostExec(), T(0.5), y); });
  check([&](auto y) { kernels::axpy(Exec(), T(-2), x, y); },
        [&](auto y, auto xr) { ref::axpy(HostExec(), T(-2), xr, y); });
  check([&](auto y) { kernels::axpby(Exec(), T(3), x, T(0.25), y); },
        [&](auto y, auto xr) { ref::axpby(HostExec(), T(3), xr, T(0.25), y); });
  double expected = 5.0;
  for (double v : values(x))
    expected += v * v;
  for (KernelPath path : kPaths) {
    const auto out = makeVector<double>("out", {5.0});
    kernels::sumOfSquares(Exec(), x, out, true, path);
    EXPECT_NEAR(values(out)[0], expected, 1e-12 * expected)
        << kernelPathName(path) << " extent " << n;
  }
}

TEST(Elementwise, FlatKernelsMatchReference) {
  for (std::size_t n :
       {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(1023), std::size_t(5000)}) {
    checkFlat<float>(n);
    checkFlat<double>(n);
  }
}

}  // namespace
}  // namespace halo3d::testing
