// The host kernels' scratchpad: a lease's pieces are aligned and disjoint, the shared buffer grows
// to the largest call and is then reused (no allocation per call), a second live lease gets memory
// of its own; and the host convolution passes, once warm, allocate nothing while giving the same
// bits as their first call (reused scratch holds the previous call's values, so a piece read before
// it is written shows up here).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/MemoryTracker.hpp"
#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/Conv3dBf16.hpp"
#include "halo3d/kernels/HostScratchpad.hpp"
#include "halo3d/kernels/impl/Conv3dSimd.hpp"
#include "halo3d/kernels/reference/Conv3d.hpp"
#include "test_conv3d_support.hpp"
#include "test_conv_bf16_support.hpp"

namespace halo3d::testing {
namespace {

using kernels::ScratchpadLease;

bool aligned64(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 64 == 0;
}

std::size_t hostAllocations() {
  return MemoryTracker::usage("Host").allocations;
}

TEST(HostScratchpad, GrowsToTheLargestLeaseAndIsReused) {
  MemoryTracker::install();
  kernels::releaseHostScratchpad();
  const HostExec exec;
  {
    ScratchpadLease first(exec);
    EXPECT_TRUE(first.shared());
    float* a = first.take<float>(1000);
    double* b = first.take<double>(3);
    EXPECT_TRUE(aligned64(a));
    EXPECT_TRUE(aligned64(b));
    const char* ac = reinterpret_cast<const char*>(a);
    const char* bc = reinterpret_cast<const char*>(b);
    EXPECT_TRUE(bc >= ac + 1000 * sizeof(float) || ac >= bc + 3 * sizeof(double));
  }
  // 1000 floats round up to 4032 bytes, 3 doubles to 64.
  EXPECT_EQ(kernels::hostScratchpadBytes(), std::size_t(4032 + 64));

  const float* reused = nullptr;
  {
    ScratchpadLease second(exec);
    const std::size_t before = hostAllocations();
    reused = second.take<float>(1000);
    double* b = second.take<double>(3);
    EXPECT_EQ(hostAllocations(), before);  // both pieces from the shared buffer
    EXPECT_EQ(reinterpret_cast<const char*>(b) - reinterpret_cast<const char*>(reused), 4032);
  }
  {
    ScratchpadLease third(exec);
    EXPECT_EQ(third.take<float>(1000), reused);
  }
  EXPECT_EQ(kernels::hostScratchpadBytes(), std::size_t(4032 + 64));

  // A larger call: what does not fit comes from allocations of its own, then the buffer grows.
  {
    ScratchpadLease larger(exec);
    larger.take<float>(1000);
    const std::size_t before = hostAllocations();
    EXPECT_TRUE(aligned64(larger.take<double>(5000)));
    EXPECT_EQ(hostAllocations(), before + 1);
  }
  EXPECT_EQ(kernels::hostScratchpadBytes(), std::size_t(4032 + 40000));
  kernels::releaseHostScratchpad();
  EXPECT_EQ(kernels::hostScratchpadBytes(), std::size_t(0));
}

TEST(HostScratchpad, ASecondLiveLeaseGetsMemoryOfItsOwn) {
  kernels::releaseHostScratchpad();
  const HostExec exec;
  {
    ScratchpadLease warm(exec);
    warm.take<char>(4096);
  }
  ScratchpadLease outer(exec);
  char* o = outer.take<char>(4096);
  ScratchpadLease inner(exec);
  EXPECT_TRUE(outer.shared());
  EXPECT_FALSE(inner.shared());
  char* i = inner.take<char>(4096);
  EXPECT_TRUE(aligned64(i));
  EXPECT_TRUE(i + 4096 <= o || o + 4096 <= i) << "the two leases' pieces overlap";
  std::memset(o, 1, 4096);
  std::memset(i, 2, 4096);
  EXPECT_EQ(o[4095], 1);
}

struct PassResults {
  std::vector<double> y, dx, dw, db;
};

template <class View>
std::vector<double> copyOf(const View& v) {
  std::vector<double> out(v.span());
  for (std::size_t k = 0; k < v.span(); ++k)
    out[k] = double(v.data()[k]);
  return out;
}

// The three passes through the public dispatch (the host SIMD engines on an AVX-512 host).
template <class T>
PassResults runPasses(const HostExec& exec, ConvProblem<T>& p, const HostTensor<T>& dy) {
  const ConvCase& c = p.c;
  kernels::conv3dForward(exec, p.x, p.w, p.b, c.g, p.y, c.outBox());
  kernels::conv3dBackwardData(exec, dy, p.w, c.g, p.dx, c.inBox());
  kernels::conv3dBackwardFilter(exec, p.x, dy, c.g, p.dw, p.db, c.outBox(), false);
  exec.fence();
  return {copyOf(p.y.view()), copyOf(p.dx.view()), copyOf(p.dw), copyOf(p.db)};
}

template <class T>
void checkWarmCallsAllocateNothing(const ConvCase& c) {
  SCOPED_TRACE(::testing::Message() << (sizeof(T) == 4 ? "float " : "double ") << c);
  MemoryTracker::install();
  const HostExec exec;
  ConvProblem<T> p(c);
  HostTensor<T> dy("dy", TensorBlock::whole(c.outShape()));
  fillOwned(p.x, 1);
  fillOwned(dy, 2);
  fillUniform(p.w, 3);
  fillUniform(p.b, 4);
  const PassResults first = runPasses(exec, p, dy);
  runPasses(exec, p, dy);
  const std::size_t before = hostAllocations();
  const PassResults third = runPasses(exec, p, dy);
  EXPECT_EQ(hostAllocations(), before) << "a warm call allocated";
  EXPECT_EQ(third.y, first.y) << "forward";
  EXPECT_EQ(third.dx, first.dx) << "backward-data";
  EXPECT_EQ(third.dw, first.dw) << "backward-filter dw";
  EXPECT_EQ(third.db, first.db) << "backward-filter db";

  // And the first call was right.
  ConvProblem<T> ref(c);
  fillOwned(ref.x, 1);
  fillUniform(ref.w, 3);
  fillUniform(ref.b, 4);
  kernels::reference::conv3dForward(exec, ref.x, ref.w, ref.b, c.g, ref.y, c.outBox());
  kernels::reference::conv3dBackwardData(exec, dy, ref.w, c.g, ref.dx, c.inBox(), c.outBox());
  kernels::reference::conv3dBackwardFilter(exec, ref.x, dy, c.g, ref.dw, ref.db, c.outBox(), false);
  exec.fence();
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  EXPECT_LE(maxRelError(p.y.view(), ref.y.view()), tol) << "forward";
  EXPECT_LE(maxRelError(p.dx.view(), ref.dx.view()), tol) << "backward-data";
  EXPECT_LE(maxRelError(p.dw, ref.dw), tol) << "backward-filter dw";
  EXPECT_LE(maxRelError(p.db, ref.db), tol) << "backward-filter db";
}

// Unit stride (the direct engine, backward-filter by W vectors or by output-channel lanes) and W
// stride 2 (the strided engine: de-interleaved x, and in double its backward-filter partials).
const ConvCase kCases[] = {
    {2, 8, 16, {5, 6, 20}, WindowGeometry::cubic(3, 1, 1), true},
    {1, 3, 5, {4, 5, 17}, WindowGeometry::cubic(3, 1, 1), true},
    {2, 5, 12, {7, 6, 21}, WindowGeometry::cubic(3, 2, 1), true},
};

TEST(HostScratchpad, WarmConvolutionCallsAllocateNothingFloat) {
  if (!kernels::impl::kHostSimd<float>) GTEST_SKIP() << "no host SIMD engine on this build";
  for (const ConvCase& c : kCases)
    checkWarmCallsAllocateNothing<float>(c);
}

TEST(HostScratchpad, WarmConvolutionCallsAllocateNothingDouble) {
  if (!kernels::impl::kHostSimd<double>) GTEST_SKIP() << "no host SIMD engine on this build";
  for (const ConvCase& c : kCases)
    checkWarmCallsAllocateNothing<double>(c);
}

#if !defined(KOKKOS_ENABLE_CUDA)
template <class T>
std::vector<std::uint16_t> bitsOf(const HostTensor<T>& t) {
  std::vector<std::uint16_t> out(t.view().span());
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k] = t.view().data()[k].bits;
  return out;
}

// The bf16 engines (builds for AVX512-BF16 hosts) take their packed weight pairs, bias, plane rings
// and backward-filter partial sums from the scratchpad too: a first call from an empty scratchpad
// leaves it holding them (the largest pass's, as conv3dBf16HostEngineScratchBytes says), and warm
// calls allocate nothing and give the first call's bits (the partial sums are cleared in reused
// memory).
void checkWarmBf16CallsAllocateNothing(const ConvCase& c) {
  SCOPED_TRACE(::testing::Message() << "bf16 " << c);
  using Exec = Kokkos::DefaultExecutionSpace;
  static_assert(std::is_same<Exec::memory_space, Kokkos::HostSpace>::value, "a host build");
  MemoryTracker::install();
  kernels::releaseHostScratchpad();
  const Exec exec;
  ConvParams<float> prm(c);
  fillUniform(prm.w, 3);
  fillUniform(prm.b, 4);
  HostTensor<bf16> x("x", TensorBlock::whole(c.inShape(), c.inHalo()));
  HostTensor<bf16> dx("dx", TensorBlock::whole(c.inShape(), c.inHalo()));
  HostTensor<bf16> y("y", TensorBlock::whole(c.outShape()));
  HostTensor<bf16> dy("dy", TensorBlock::whole(c.outShape()));
  fillOwnedBf16(x, 1);
  fillOwnedBf16(dy, 2);
  struct Bits {
    std::vector<std::uint16_t> y, dx;
    std::vector<double> dw, db;
  };
  const auto passes = [&] {
    kernels::conv3dForwardBf16(exec, x, prm.w, prm.b, c.g, y, c.outBox());
    kernels::conv3dBackwardDataBf16(exec, dy, prm.w, c.g, dx, c.inBox());
    kernels::conv3dBackwardFilterBf16(exec, x, dy, c.g, prm.dw, prm.db, c.outBox(), false);
    exec.fence();
    return Bits{bitsOf(y), bitsOf(dx), copyOf(prm.dw), copyOf(prm.db)};
  };
  const Bits first = passes();
  EXPECT_GT(kernels::hostScratchpadBytes(), std::size_t(0)) << "the bf16 passes took no scratch";
  // What the memory model prices it at: the largest pass's pieces.
  EXPECT_EQ(kernels::hostScratchpadBytes(),
            kernels::conv3dBf16HostEngineScratchBytes(c.inShape(), c.outShape(), c.g));
  passes();
  const std::size_t before = hostAllocations();
  const Bits third = passes();
  EXPECT_EQ(hostAllocations(), before) << "a warm call allocated";
  EXPECT_EQ(third.y, first.y) << "forward";
  EXPECT_EQ(third.dx, first.dx) << "backward-data";
  EXPECT_EQ(third.dw, first.dw) << "backward-filter dw";
  EXPECT_EQ(third.db, first.db) << "backward-filter db";
}

// Up to 16 input channels (backward-filter tiles of one vector) and more (tiles of 2-4 vectors).
TEST(HostScratchpad, WarmBf16ConvolutionCallsAllocateNothing) {
  const WindowGeometry g = WindowGeometry::cubic(3, 1, 1);
  if (!kernels::conv3dBf16HostEngine(g))
    GTEST_SKIP() << "no bf16 engine in this build (it needs AVX512-BF16)";
  for (const ConvCase& c :
       {ConvCase{2, 6, 12, {5, 7, 19}, g, true}, ConvCase{1, 40, 9, {4, 6, 11}, g, true}})
    checkWarmBf16CallsAllocateNothing(c);
}
#endif

}  // namespace
}  // namespace halo3d::testing
