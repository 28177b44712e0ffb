// The pack, unpack and zero kernels of the halo exchange (comm/impl/HaloPack.hpp) without MPI, on
// the host code (one (n, c, d) plane per work item) and the device code (one element per work
// item: what a CUDA build runs), against plain loops: faces, edges, corners, one-element rows,
// buffer offsets, assign and add. The streaming pack (whole cache lines by streaming stores)
// against the plain one, at every alignment of the buffer, for 2-, 4- and 8-byte elements.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "halo3d/comm/impl/HaloPack.hpp"
#include "halo3d/core/BFloat16.hpp"

namespace halo3d::impl {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using View5 = Kokkos::View<double*****, Kokkos::LayoutRight, Exec::memory_space>;
using Buffer = Kokkos::View<double*, Exec::memory_space>;

constexpr KernelPath kPaths[] = {KernelPath::Fastest, KernelPath::Device};

// Regions of a (2, 3, 5, 4, 6) allocation in local indices: a D face, an H face, a W column of
// one-element rows, an edge, a corner, the whole allocation and an empty box.
const Box kRegions[] = {Box({0, 0, 0}, {1, 4, 6}), Box({1, 3, 0}, {4, 4, 6}),
                        Box({0, 0, 5}, {5, 4, 6}), Box({3, 0, 4}, {5, 1, 6}),
                        Box({4, 3, 5}, {5, 4, 6}), Box({0, 0, 0}, {5, 4, 6}),
                        Box({2, 2, 2}, {2, 3, 4})};

double code(index_t n, index_t c, index_t d, index_t h, index_t w) {
  return double((((n * 3 + c) * 5 + d) * 4 + h) * 6 + w + 1);
}

View5 coded() {
  View5 v("v", 2, 3, 5, 4, 6);
  auto h = Kokkos::create_mirror_view(v);
  for (index_t n = 0; n < 2; ++n)
    for (index_t c = 0; c < 3; ++c)
      for (index_t d = 0; d < 5; ++d)
        for (index_t hh = 0; hh < 4; ++hh)
          for (index_t w = 0; w < 6; ++w)
            h(n, c, d, hh, w) = code(n, c, d, hh, w);
  Kokkos::deep_copy(v, h);
  return v;
}

// The cells of `region` in buffer order: (n, c, d, h, w), w fastest.
std::vector<double> expectedPack(const Box& region) {
  std::vector<double> out;
  for (index_t n = 0; n < 2; ++n)
    for (index_t c = 0; c < 3; ++c)
      for (index_t d = region.min(0); d < region.max(0); ++d)
        for (index_t h = region.min(1); h < region.max(1); ++h)
          for (index_t w = region.min(2); w < region.max(2); ++w)
            out.push_back(code(n, c, d, h, w));
  return out;
}

std::vector<double> hostValues(const Buffer& b) {
  Kokkos::fence();
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  return std::vector<double>(h.data(), h.data() + h.size());
}

TEST(HaloPack, PackWritesTheRegionInBufferOrderAtItsOffset) {
  const View5 v = coded();
  for (KernelPath path : kPaths)
    for (const Box& region : kRegions) {
      SCOPED_TRACE(::testing::Message() << kernelPathName(path) << " " << region);
      const std::vector<double> expected = expectedPack(region);
      const std::size_t offset = 5;
      Buffer buf("buf", offset + expected.size() + 3);
      Kokkos::deep_copy(buf, -1.0);
      packRegion(Exec(), v, region, buf, offset, path);
      const std::vector<double> got = hostValues(buf);
      EXPECT_EQ(std::vector<double>(got.begin() + offset, got.begin() + offset + expected.size()),
                expected);
      // Nothing outside [offset, offset + size) is written.
      for (std::size_t i = 0; i < offset; ++i)
        EXPECT_EQ(got[i], -1.0);
      for (std::size_t i = offset + expected.size(); i < got.size(); ++i)
        EXPECT_EQ(got[i], -1.0);
    }
}

// Unpack assigns or adds the buffer into the region and leaves every other cell; zero clears the
// region only. Both paths give the same bits.
TEST(HaloPack, UnpackAssignsOrAddsAndZeroClearsOnlyTheRegion) {
  for (const Box& region : kRegions) {
    const std::vector<double> packed = expectedPack(region);
    Buffer buf("buf", packed.size() + 2);
    auto hb = Kokkos::create_mirror_view(buf);
    for (std::size_t i = 0; i < packed.size(); ++i)
      hb(i + 2) = 0.5 * packed[i] + 1000.0;
    Kokkos::deep_copy(buf, hb);
    std::vector<std::vector<double>> results;
    for (KernelPath path : kPaths)
      for (bool accumulate : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << kernelPathName(path) << " " << region << (accumulate ? " add" : " assign"));
        const View5 v = coded();
        unpackRegion(Exec(), v, region, buf, 2, accumulate, path);
        Kokkos::fence();
        auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
        int wrong = 0;
        for (index_t n = 0; n < 2; ++n)
          for (index_t c = 0; c < 3; ++c)
            for (index_t d = 0; d < 5; ++d)
              for (index_t hh = 0; hh < 4; ++hh)
                for (index_t w = 0; w < 6; ++w) {
                  const double old = code(n, c, d, hh, w);
                  const double in = 0.5 * old + 1000.0;
                  const double want =
                      region.contains({d, hh, w}) ? (accumulate ? old + in : in) : old;
                  wrong += h(n, c, d, hh, w) != want;
                }
        EXPECT_EQ(wrong, 0);
        zeroRegion(Exec(), v, region, path);
        Kokkos::fence();
        Kokkos::deep_copy(h, v);
        for (index_t n = 0; n < 2; ++n)
          for (index_t c = 0; c < 3; ++c)
            for (index_t d = 0; d < 5; ++d)
              for (index_t hh = 0; hh < 4; ++hh)
                for (index_t w = 0; w < 6; ++w)
                  if (region.contains({d, hh, w})) wrong += h(n, c, d, hh, w) != 0.0;
        EXPECT_EQ(wrong, 0);
      }
  }
}

// Element bit patterns: compares bf16 (no operator==) and keeps the test exact for every type.
template <class T>
std::vector<std::uint64_t> bitsOf(const Kokkos::View<T*, Exec::memory_space>& b) {
  Kokkos::fence();
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  std::vector<std::uint64_t> out(h.size(), 0);
  for (std::size_t i = 0; i < h.size(); ++i)
    std::memcpy(&out[i], &h(i), sizeof(T));
  return out;
}

// packRegionStreaming writes exactly packRegion's bytes and nothing else, wherever the region's
// part of the buffer starts within a cache line: rows longer than a line (streamed straight from
// the row, with a head and a tail), rows shorter than one (lines gathered across rows), one-element
// rows.
template <class T>
void streamingPackMatchesPlainPack() {
  using V = Kokkos::View<T*****, Kokkos::LayoutRight, Exec::memory_space>;
  using B = Kokkos::View<T*, Exec::memory_space>;
  const V v("v", 2, 3, 4, 5, 41);
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < h.size(); ++i)
    h.data()[i] = T(double(i % 4093) + 1.0);
  Kokkos::deep_copy(v, h);
  const Box regions[] = {Box({0, 0, 0}, {4, 5, 41}), Box({1, 0, 3}, {3, 5, 40}),
                         Box({0, 1, 0}, {2, 3, 7}),  Box({0, 0, 40}, {4, 5, 41}),
                         Box({2, 4, 1}, {3, 5, 38}), Box({3, 4, 40}, {4, 5, 41}),
                         Box({1, 1, 1}, {1, 4, 4})};
  const std::size_t line = kStreamLine / sizeof(T);
  for (KernelPath path : kPaths)
    for (const Box& region : regions)
      for (std::size_t offset = 0; offset <= line; ++offset) {
        SCOPED_TRACE(::testing::Message() << kernelPathName(path) << " " << region << " offset "
                                          << offset << " sizeof " << sizeof(T));
        const std::size_t n = std::size_t(region.size()) * 6;
        const B plain("plain", offset + n + line), streamed("streamed", offset + n + line);
        Kokkos::deep_copy(plain, T(-1.0));
        Kokkos::deep_copy(streamed, T(-1.0));
        packRegion(Exec(), v, region, plain, offset, path);
        packRegionStreaming(Exec(), v, region, streamed, offset, path);
        EXPECT_EQ(bitsOf(streamed), bitsOf(plain));
      }
}

TEST(HaloPack, StreamingPackWritesThePlainPacksBytes) {
  streamingPackMatchesPlainPack<double>();
  streamingPackMatchesPlainPack<float>();
  streamingPackMatchesPlainPack<bf16>();
}

}  // namespace
}  // namespace halo3d::impl
