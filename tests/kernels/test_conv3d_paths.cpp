// Every conv3d implementation against the naive reference, over a sweep of shapes: W extents around
// the SIMD width (1, 7, 16, 17, 33, 64), channel counts that are not multiples of the register
// blocks, strides, dilations and non-cubic kernels; the three passes, float and double. The device
// code (the team kernels a CUDA build runs) runs here on the host backend through the dispatch
// (KernelPath::Device), with one thread per team and with several; the host SIMD and generic
// kernels are called directly, so that each is checked wherever the dispatch would pick the other.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/impl/Conv3dImpl.hpp"
#include "halo3d/kernels/reference/Conv3d.hpp"
#include "test_conv3d_support.hpp"

namespace halo3d::testing {
namespace {

enum class Path { HostSimd, Team1, Team2, Generic };

std::string pathName(Path p) {
  static const char* const kNames[] = {"HostSimd", "Team1", "Team2", "Generic"};
  return kNames[int(p)];
}

std::vector<ConvCase> sweep() {
  const std::vector<WindowGeometry> geometries{
      WindowGeometry::cubic(3, 1, 1),
      WindowGeometry::cubic(3, 2, 1),
      WindowGeometry::cubic(2, 1, 0),
      WindowGeometry::cubic(3, 1, 2, 2),
      geometry({3, 1, 5}, {1, 2, 1}, {1, 1, 1}, {1, 0, 2}),
      geometry({1, 3, 2}, {2, 1, 3}, {1, 2, 1}, {0, 2, 1}),
      WindowGeometry::cubic(1, 1, 0),
  };
  const std::vector<std::array<index_t, 2>> channels{{3, 5}, {2, 13}, {4, 16},
                                                     {1, 9}, {5, 3},  {7, 1}};
  std::vector<ConvCase> cases;
  std::size_t k = 0;
  for (index_t w : {1, 7, 16, 17, 33, 64})
    for (const WindowGeometry& g : geometries) {
      const auto ch = channels[k % channels.size()];
      ConvCase c{1 + index_t(k % 2), ch[0], ch[1], {5, 6, w}, g, k % 3 != 0};
      ++k;
      // Kernels wider than the volume need padding to fit; skip the combinations that do not.
      bool fits = true;
      for (int d = 0; d < 3; ++d)
        fits = fits &&
               c.volume[d] + 2 * g.padding[d] >= index_t(g.dilation[d]) * (g.kernel[d] - 1) + 1;
      if (fits) cases.push_back(c);
    }
  return cases;
}

template <class T>
double tolerance() {
  return std::is_same<T, double>::value ? 1e-12 : 2e-5;
}

template <class T>
struct Tensors : ConvProblem<T> {
  HostTensor<T> dy;

  // dy carries a ghost layer so that dy boxes reaching past its owned cells are allowed.
  explicit Tensors(const ConvCase& cc)
      : ConvProblem<T>(cc), dy("dy", TensorBlock::whole(cc.outShape(), HaloWidths::uniform(1))) {}
};

template <class T>
void run(Path path, const ConvCase& c) {
  SCOPED_TRACE(::testing::Message()
               << pathName(path) << " " << (sizeof(T) == 4 ? "float " : "double ") << c);
  const HostExec exec;
  Tensors<T> ours(c), ref(c);
  for (Tensors<T>* t : {&ours, &ref}) {
    fillOwned(t->x, 1);
    fillUniform(t->dy.view(), 2);  // ghosts too: cells outside dy_box must not contribute
    fillUniform(t->w, 3);
    fillUniform(t->b, 4);
    fillUniform(t->dw, 5);  // accumulated onto
    fillUniform(t->db, 6);
    fillAll(t->y, T(0));
  }
  // A dy box that leaves out the first output plane, row and column (when there is more than one).
  const Box out = c.outBox();
  const Box dy_box = out.grown(
      {out.extent(0) > 1 ? -1 : 0, out.extent(1) > 1 ? -1 : 0, out.extent(2) > 1 ? -1 : 0},
      {0, 0, 0});
  // Several threads per team where the host has them, so that the team barriers are exercised.
  const kernels::impl::TeamTuning tuning{path == Path::Team2 ? std::min(2, exec.concurrency()) : 1};
  switch (path) {
#if HALO3D_CONV3D_AVX512
    case Path::HostSimd:
      kernels::impl::conv3dForwardHost(exec, ours.x, ours.w, ours.b, c.g, ours.y, out);
      if (kernels::impl::hostBackwardDataApplies(c.g))
        kernels::impl::conv3dBackwardDataHost(exec, ours.dy, ours.w, c.g, ours.dx, c.inBox(),
                                              dy_box);
      else
        kernels::impl::conv3dBackwardDataGeneric(exec, ours.dy, ours.w, c.g, ours.dx, c.inBox(),
                                                 dy_box);
      kernels::impl::conv3dBackwardFilterHost(exec, ours.x, ours.dy, c.g, ours.dw, ours.db, out,
                                              true);
      break;
#endif
    case Path::Team1:
    case Path::Team2:
      kernels::impl::conv3dForward(exec, ours.x, ours.w, ours.b, c.g, ours.y, out,
                                   KernelPath::Device, tuning);
      kernels::impl::conv3dBackwardData(exec, ours.dy, ours.w, c.g, ours.dx, c.inBox(), dy_box,
                                        KernelPath::Device, tuning);
      kernels::impl::conv3dBackwardFilter(exec, ours.x, ours.dy, c.g, ours.dw, ours.db, out, true,
                                          KernelPath::Device, tuning);
      break;
    case Path::Generic:
      kernels::impl::conv3dForwardGeneric(exec, ours.x, ours.w, ours.b, c.g, ours.y, out);
      kernels::impl::conv3dBackwardDataGeneric(exec, ours.dy, ours.w, c.g, ours.dx, c.inBox(),
                                               dy_box);
      kernels::impl::conv3dBackwardFilterGeneric(exec, ours.x, ours.dy, c.g, ours.dw, ours.db, out,
                                                 true);
      break;
  }
  kernels::reference::conv3dForward(exec, ref.x, ref.w, ref.b, c.g, ref.y, out);
  kernels::reference::conv3dBackwardData(exec, ref.dy, ref.w, c.g, ref.dx, c.inBox(), dy_box);
  kernels::reference::conv3dBackwardFilter(exec, ref.x, ref.dy, c.g, ref.dw, ref.db, out, true);
  exec.fence();
  EXPECT_LE(maxRelError(ours.y.view(), ref.y.view()), tolerance<T>()) << "forward";
  EXPECT_LE(maxRelError(ours.dx.view(), ref.dx.view()), tolerance<T>()) << "backward-data";
  EXPECT_LE(maxRelError(ours.dw, ref.dw), tolerance<T>()) << "backward-filter dw";
  EXPECT_LE(maxRelError(ours.db, ref.db), tolerance<T>()) << "backward-filter db";
}

class Conv3dPaths : public ::testing::TestWithParam<Path> {};

// Two threads per team only every third case: the team barriers are the same in every case, and on
// a busy machine each one can cost a time slice.
bool runsCase(Path path, std::size_t k) {
  return path != Path::Team2 || k % 3 == 0;
}

TEST_P(Conv3dPaths, MatchReferenceFloat) {
  const std::vector<ConvCase> cases = sweep();
  for (std::size_t k = 0; k < cases.size(); ++k)
    if (runsCase(GetParam(), k)) run<float>(GetParam(), cases[k]);
}
TEST_P(Conv3dPaths, MatchReferenceDouble) {
  const std::vector<ConvCase> cases = sweep();
  for (std::size_t k = 0; k < cases.size(); ++k)
    if (runsCase(GetParam(), k)) run<double>(GetParam(), cases[k]);
}

INSTANTIATE_TEST_SUITE_P(Implementations, Conv3dPaths,
                         ::testing::Values(
#if HALO3D_CONV3D_AVX512
                             Path::HostSimd,
#endif
                             Path::Team1, Path::Team2, Path::Generic),
                         [](const ::testing::TestParamInfo<Path>& info) {
                           return pathName(info.param);
                         });

// A box large enough for the host backward-filter to split its positions into several chunks, and
// with many full-width interior tiles. Team barriers are covered by the sweep. 5 output channels
// are 2 blocks of the backward-filter, 9 are 3: at the 2 threads ctest runs with, the first sums
// each block over all positions, the second splits the positions into per-thread ranges and sums
// their partials.
class Conv3dPathsLargeBox : public ::testing::TestWithParam<Path> {};

TEST_P(Conv3dPathsLargeBox, MatchReference) {
  for (index_t out_channels : {5, 9}) {
    const ConvCase c{2, 3, out_channels, {8, 16, 130}, WindowGeometry::cubic(3, 1, 1), true};
    run<float>(GetParam(), c);
    run<double>(GetParam(), c);
  }
}

INSTANTIATE_TEST_SUITE_P(Implementations, Conv3dPathsLargeBox,
                         ::testing::Values(
#if HALO3D_CONV3D_AVX512
                             Path::HostSimd,
#endif
                             Path::Team1, Path::Generic),
                         [](const ::testing::TestParamInfo<Path>& info) {
                           return pathName(info.param);
                         });

#if HALO3D_CONV3D_AVX512
// The eight-at-a-time lane sums of the backward-filter are bitwise those of one at a time, on
// values of mixed signs and magnitudes where the order of the additions shows.
TEST(Conv3dSimd, Sum8MatchesSum) {
  using S = kernels::impl::Simd<float>;
  std::uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return float(int(state >> 8) - (1 << 23)) * std::ldexp(1.0f, int(state % 40) - 20);
  };
  for (int trial = 0; trial < 100; ++trial) {
    S::vec v[8];
    float lanes[16];
    for (auto& x : v) {
      for (float& l : lanes)
        l = next();
      x = S::load(lanes);
    }
    float sums[8];
    S::sum8(v, sums);
    for (int k = 0; k < 8; ++k)
      EXPECT_EQ(sums[k], S::sum(v[k])) << "vector " << k << ", trial " << trial;
  }
}

// The blocks of a 3 x 3 x 1 split of the volume, as a grid's blocks hold them: the ghosts of x and
// dy inside the volume carry the neighbours' data, x's ghosts past the volume are zero (the
// padding) and dy's hold junk (dy_box stops at the volume). The host engines leave out the kd and
// kh taps that read only padding: each block's y and dx must be bitwise the whole volume's on its
// cells, and the blocks' dw partials must add up to the whole volume's dw, which fails if a tap
// that reads a neighbour's ghosts is left out; the whole volume's must match the reference, which
// fails if a tap that reads data at the global boundary is. Only geometries whose output volume is
// the input volume ("same" convolutions), so that one split serves x and y.
template <class T>
void checkSplitBlocks(const ConvCase& c) {
  SCOPED_TRACE(::testing::Message() << (sizeof(T) == 4 ? "float " : "double ") << c);
  const HostExec exec;
  const Box volume = c.inBox();
  ASSERT_EQ(c.outBox(), volume);
  ConvParams<T> prm(c);
  fillUniform(prm.w, 3);
  fillUniform(prm.b, 4);
  const HaloWidths halo = HaloWidths::uniform(3);  // every window of the cases below
  auto tensors = [&](const TensorBlock& in, const TensorBlock& out, const TensorBlock& dy_block) {
    struct {
      HostTensor<T> x, y, dy, dx;
    } t{HostTensor<T>("x", in), HostTensor<T>("y", out), HostTensor<T>("dy", dy_block),
        HostTensor<T>("dx", in)};
    fillVolumeCells(t.x, 1);
    fillVolumeCells(t.dy, 2, T(5));
    fillAll(t.y, T(-7));
    fillAll(t.dx, T(-7));
    return t;
  };
  auto whole = tensors(TensorBlock::whole(c.inShape(), halo), TensorBlock::whole(c.outShape()),
                       TensorBlock::whole(c.outShape(), halo));
  auto ref = tensors(TensorBlock::whole(c.inShape(), halo), TensorBlock::whole(c.outShape()),
                     TensorBlock::whole(c.outShape(), halo));
  kernels::impl::conv3dForwardHost(exec, whole.x, prm.w, prm.b, c.g, whole.y, volume);
  kernels::impl::conv3dBackwardDataHost(exec, whole.dy, prm.w, c.g, whole.dx, volume, volume);
  kernels::reference::conv3dForward(exec, ref.x, prm.w, prm.b, c.g, ref.y, volume);
  kernels::reference::conv3dBackwardData(exec, ref.dy, prm.w, c.g, ref.dx, volume, volume);
  ConvParams<T> whole_grads(c), ref_grads(c), block_grads(c);
  kernels::impl::conv3dBackwardFilterHost(exec, whole.x, whole.dy, c.g, whole_grads.dw,
                                          whole_grads.db, volume, false);
  kernels::reference::conv3dBackwardFilter(exec, ref.x, ref.dy, c.g, ref_grads.dw, ref_grads.db,
                                           volume, false);
  exec.fence();
  EXPECT_LE(maxRelError(whole.y.view(), ref.y.view()), tolerance<T>()) << "forward";
  EXPECT_LE(maxRelError(whole.dx.view(), ref.dx.view()), tolerance<T>()) << "backward-data";
  EXPECT_LE(maxRelError(whole_grads.dw, ref_grads.dw), tolerance<T>()) << "backward-filter";

  const index_t parts[3] = {3, 3, 1};  // along W every tap is read anyway
  for (index_t i = 0; i < parts[0]; ++i)
    for (index_t j = 0; j < parts[1]; ++j)
      for (index_t k = 0; k < parts[2]; ++k) {
        const index_t at[3] = {i, j, k};
        Extents3 lo{}, hi{};
        for (int d = 0; d < 3; ++d) {
          lo[std::size_t(d)] = at[d] * volume.extent(d) / parts[d];
          hi[std::size_t(d)] = (at[d] + 1) * volume.extent(d) / parts[d];
        }
        const Box owned(lo, hi);
        SCOPED_TRACE(::testing::Message() << "block " << owned);
        auto block = tensors(TensorBlock(c.inShape(), 0, c.samples, owned, halo),
                             TensorBlock(c.outShape(), 0, c.samples, owned, HaloWidths{}),
                             TensorBlock(c.outShape(), 0, c.samples, owned, halo));
        const Box dy_box = intersect(owned.grown({3, 3, 3}, {3, 3, 3}), volume);
        kernels::impl::conv3dForwardHost(exec, block.x, prm.w, prm.b, c.g, block.y, owned);
        kernels::impl::conv3dBackwardDataHost(exec, block.dy, prm.w, c.g, block.dx, owned, dy_box);
        kernels::impl::conv3dBackwardFilterHost(exec, block.x, block.dy, c.g, block_grads.dw,
                                                block_grads.db, owned, i + j + k > 0);
        exec.fence();
        EXPECT_TRUE(identicalOn(block.y, whole.y, owned)) << "forward";
        EXPECT_TRUE(identicalOn(block.dx, whole.dx, owned)) << "backward-data";
      }
  EXPECT_LE(maxRelError(block_grads.dw, whole_grads.dw), tolerance<T>()) << "backward-filter";
}

TEST(Conv3dHostSimd, SplitBlocksReadNeighbourGhostsAndSkipOnlyPadding) {
  const std::vector<ConvCase> cases{
      {2, 5, 9, {9, 10, 37}, WindowGeometry::cubic(3, 1, 1), true},
      {1, 5, 20, {9, 10, 37}, WindowGeometry::cubic(3, 1, 1), true},  // backward-filter lanes
      {1, 3, 4, {8, 9, 20}, WindowGeometry::cubic(3, 1, 2, 2), false},
      {1, 4, 16, {10, 8, 17}, WindowGeometry::cubic(5, 1, 2), true},
      {1, 2, 3, {7, 9, 16}, geometry({3, 1, 5}, {1, 1, 1}, {1, 1, 1}, {1, 0, 2}), true},
  };
  for (const ConvCase& c : cases) {
    checkSplitBlocks<float>(c);
    checkSplitBlocks<double>(c);
  }
}

// A forward output of at least kStreamBytes goes out through non-temporal stores wherever a tile's
// vectors are full and aligned: W = 56 is 3.5 vectors, so tiles (3 positions, running across rows)
// alternate between aligned and unaligned rows and some end in the half vector. The whole box
// (streamed) must match the reference and, bitwise, the same output computed in slabs small enough
// to be stored the ordinary way; a stray or missing streamed store shows in both.
template <class T>
void checkStreamedForward(const Extents3& volume) {
  const ConvCase c{1, 2, 16, volume, WindowGeometry::cubic(3, 1, 1), true};
  SCOPED_TRACE(::testing::Message() << (sizeof(T) == 4 ? "float " : "double ") << c);
  const Box out = c.outBox();
  ASSERT_GE(c.out_ch * out.size() * index_t(sizeof(T)), kernels::impl::kStreamBytes);
  const HostExec exec;
  ConvProblem<T> whole(c), slabs(c), ref(c);
  for (ConvProblem<T>* t : {&whole, &slabs, &ref}) {
    fillOwned(t->x, 1);
    fillUniform(t->w, 3);
    fillUniform(t->b, 4);
    fillAll(t->y, T(7));  // a sentinel: every cell must be written
  }
  kernels::impl::conv3dForwardHost(exec, whole.x, whole.w, whole.b, c.g, whole.y, out);
  const index_t slab = out.extent(0) / 4;
  for (index_t d = 0; d < out.extent(0); d += slab) {
    const Box part({d, out.min(1), out.min(2)},
                   {std::min(d + slab, out.max(0)), out.max(1), out.max(2)});
    ASSERT_LT(c.out_ch * part.size() * index_t(sizeof(T)), kernels::impl::kStreamBytes);
    kernels::impl::conv3dForwardHost(exec, slabs.x, slabs.w, slabs.b, c.g, slabs.y, part);
  }
  kernels::reference::conv3dForward(exec, ref.x, ref.w, ref.b, c.g, ref.y, out);
  exec.fence();
  EXPECT_LE(maxRelError(whole.y.view(), ref.y.view()), tolerance<T>());
  const auto wv = whole.y.view();
  const auto sv = slabs.y.view();
  std::size_t differ = 0;
  for (std::size_t k = 0; k < wv.span(); ++k)
    differ += wv.data()[k] != sv.data()[k];
  EXPECT_EQ(differ, 0u) << "values that differ between the streamed box and the slabs";
}

TEST(Conv3dHostSimd, StreamedForwardMatchesReferenceAndSlabs) {
  checkStreamedForward<float>({64, 80, 56});
  checkStreamedForward<double>({64, 40, 56});
}
#endif

}  // namespace
}  // namespace halo3d::testing
