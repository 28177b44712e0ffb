// The fp32 backward-filter engine with output channels in the lanes (Conv3dHostFilterLanes.hpp),
// called directly, against the naive reference: output-channel counts that fill 4-, 2- and
// 1-vector blocks and end in a partial vector, boxes of several 512-cell chunks whose chunks start
// mid-row, W stride 2, sub-boxes of dy, accumulation, no bias, and both work splits (by cells, and
// with 2 or more threads by parts of the input channels, whose row sums pass
// kLanesRangeSumsBytes). Its 16 x 16 dy transpose is checked on its own.
#include <gtest/gtest.h>

#include <vector>

#include "halo3d/kernels/impl/Conv3dHostFilterLanes.hpp"
#include "halo3d/kernels/impl/Conv3dHostStrided.hpp"
#include "halo3d/kernels/reference/Conv3d.hpp"
#include "test_conv3d_support.hpp"

namespace halo3d::testing {
namespace {

#if HALO3D_CONV3D_AVX512

TEST(Conv3dFilterLanes, TransposeCellsIsATransposeWithZeroChannelsPastTheEnd) {
  const index_t stride = 37, ld = 48;
  std::vector<float> src(16 * stride);
  for (std::size_t k = 0; k < src.size(); ++k)
    src[k] = float(k) + 0.5f;
  for (int channels : {16, 5, 1})
    for (int cells : {16, 7, 1}) {
      std::vector<float> dst(16 * ld, -1.0f);
      kernels::impl::transposeCells(src.data(), stride, channels, cells, dst.data(), ld);
      for (int k = 0; k < 16; ++k)
        for (int o = 0; o < 16; ++o) {
          const float want = k >= cells ? -1.0f : o < channels ? src[o * stride + k] : 0.0f;
          EXPECT_EQ(dst[k * ld + o], want) << "cell " << k << " channel " << o << " (" << channels
                                           << " channels, " << cells << " cells)";
        }
    }
}

struct LanesCase {
  ConvCase c;
  bool accumulate;
  bool whole_box = false;  // the whole output box, with the planes and rows that read padding
};

void run(const LanesCase& lc) {
  const ConvCase& c = lc.c;
  SCOPED_TRACE(::testing::Message() << c << (lc.accumulate ? " accumulate" : ""));
  ASSERT_TRUE(kernels::impl::hostFilterLanesApplies(c.g, c.out_ch));
  const HostExec exec;
  ConvProblem<float> ours(c), ref(c);
  HostTensor<float> dy_ours("dy", TensorBlock::whole(c.outShape(), HaloWidths::uniform(1)));
  HostTensor<float> dy_ref("dy", TensorBlock::whole(c.outShape(), HaloWidths::uniform(1)));
  for (ConvProblem<float>* t : {&ours, &ref}) {
    fillOwned(t->x, 1);
    fillUniform(t->dw, 5);
    fillUniform(t->db, 6);
  }
  fillUniform(dy_ours.view(), 2);  // ghosts too: cells outside the box must not contribute
  fillUniform(dy_ref.view(), 2);
  // A box that leaves out the first output plane, row and column (when there is more than one).
  const Box out = c.outBox();
  const Box box = lc.whole_box ? out
                               : out.grown({out.extent(0) > 1 ? -1 : 0, out.extent(1) > 1 ? -1 : 0,
                                            out.extent(2) > 1 ? -1 : 0},
                                           {0, 0, 0});
  kernels::impl::conv3dBackwardFilterLanes(exec, ours.x, dy_ours, c.g, ours.dw, ours.db, box,
                                           lc.accumulate);
  kernels::reference::conv3dBackwardFilter(exec, ref.x, dy_ref, c.g, ref.dw, ref.db, box,
                                           lc.accumulate);
  exec.fence();
  EXPECT_LE(maxRelError(ours.dw, ref.dw), 2e-5) << "dw";
  EXPECT_LE(maxRelError(ours.db, ref.db), 2e-5) << "db";
}

TEST(Conv3dFilterLanes, MatchesReference) {
  const WindowGeometry cube = WindowGeometry::cubic(3, 1, 1);
  const std::vector<LanesCase> cases{
      // 7 vectors of output channels (blocks of 4, 2, 1), the last one partial; 3 chunks.
      {{2, 2, 100, {6, 9, 37}, cube, true}, true},
      // 64 channels, one 4-vector block; 16-wide rows as in (d); no bias, dw overwritten.
      {{1, 3, 64, {5, 6, 16}, cube, false}, false},
      // 32 channels (a 2-vector block), 144 rows.
      {{1, 16, 32, {4, 5, 21}, cube, true}, true},
      // One input channel: 9 rows, the cells split.
      {{2, 1, 17, {7, 8, 40}, cube, true}, true},
      // 4 rows (kernel 1 x 2 x 3): one part, cells split.
      {{1, 2, 16, {6, 7, 45}, geometry({1, 2, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}), true}, false},
      // W stride 2 and strides elsewhere, padding and dilation along D and H.
      {{1, 3, 20, {9, 11, 50}, geometry({3, 3, 3}, {2, 1, 2}, {2, 1, 1}, {2, 0, 1}), true}, true},
      // CosmoFlow's strided convolution (3^3, stride 2, padding 1), which the dispatch sends here.
      {{2, 4, 32, {9, 10, 17}, WindowGeometry::cubic(3, 2, 1), true}, false},
      // From 4 vectors of output channels the rows are (kd, kh, input channel): 2-row tiles that
      // share kd and kh skip the padding runs of both; the same with strides, padding 2 along D and
      // dilation, and with an odd channel count (tiles that straddle two kh).
      {{1, 4, 64, {6, 7, 16}, cube, true}, false},
      {{2, 4, 64, {9, 11, 30}, geometry({3, 3, 3}, {2, 1, 2}, {2, 1, 1}, {2, 0, 1}), true}, true},
      {{1, 5, 70, {7, 9, 18}, geometry({3, 2, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}), false}, true},
      // Row sums past kLanesRangeSumsBytes (216 or 225 rows of 4 vectors: 331 or 346 KiB): with 2
      // or more threads, parts of whole input channels, 12 and 13 of 25 (tiles that straddle kh),
      // with strides, padding 2 and dilation, and the 1- and 2-vector blocks of 100 channels.
      {{1, 25, 64, {5, 6, 16}, cube, true}, false, true},
      {{1, 25, 64, {5, 6, 16}, cube, true}, false},
      {{2, 24, 50, {9, 11, 19}, geometry({3, 3, 3}, {2, 1, 2}, {2, 1, 1}, {2, 0, 1}), true}, true},
      {{1, 12, 100, {4, 5, 20}, cube, false}, true},
  };
  // Both splits stay covered if the bound moves.
  int by_parts = 0;
  for (const LanesCase& lc : cases) {
    const index_t rows = lc.c.in_ch * lc.c.g.kernel[0] * lc.c.g.kernel[1];
    const index_t row_sums = rows * 3 * ((lc.c.out_ch + 15) / 16) * 16 * index_t(sizeof(double));
    by_parts += row_sums > kernels::impl::kLanesRangeSumsBytes ? 1 : 0;
  }
  EXPECT_GE(by_parts, 2);
  EXPECT_LE(by_parts, int(cases.size()) - 2);
  for (const LanesCase& lc : cases)
    run(lc);
}

// Fewer output channels than a vector's lanes stay on the W-vector engine (the lanes would be
// mostly empty); from a whole vector on, the lanes engine takes W kernels of 3.
TEST(Conv3dFilterLanes, TakesWholeVectorsOfOutputChannelsOnly) {
  const WindowGeometry cube = geometry({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  EXPECT_FALSE(kernels::impl::hostFilterLanesApplies(cube, 4));
  EXPECT_FALSE(kernels::impl::hostFilterLanesApplies(cube, 8));
  EXPECT_TRUE(kernels::impl::hostFilterLanesApplies(cube, 16));
  EXPECT_TRUE(kernels::impl::hostFilterLanesApplies(cube, 100));
  EXPECT_FALSE(kernels::impl::hostFilterLanesApplies(
      geometry({3, 3, 5}, {1, 1, 1}, {1, 1, 1}, {1, 1, 2}), 16));
}

#endif

// The dispatch's choice for W strides above 1: this engine wherever it applies to fp32 (it reads x
// one broadcast value at a time, so a stride costs it nothing), the strided engine's de-interleaved
// phases for the rest; stride 1 never goes to the strided engine.
TEST(Conv3dFilterLanes, TakesWStridedFloatGeometriesBeforeTheStridedEngine) {
  using kernels::impl::hostStridedBackwardFilterApplies;
  const WindowGeometry s2 = WindowGeometry::cubic(3, 2, 1);
  EXPECT_FALSE(hostStridedBackwardFilterApplies<float>(s2, 32));
  EXPECT_TRUE(hostStridedBackwardFilterApplies<float>(s2, 8));
  EXPECT_TRUE(hostStridedBackwardFilterApplies<double>(s2, 32));
  EXPECT_TRUE(hostStridedBackwardFilterApplies<float>(
      geometry({3, 3, 5}, {1, 1, 2}, {1, 1, 1}, {1, 1, 2}), 32));
  EXPECT_FALSE(hostStridedBackwardFilterApplies<float>(WindowGeometry::cubic(3, 1, 1), 8));
  EXPECT_FALSE(hostStridedBackwardFilterApplies<double>(
      geometry({3, 3, 3}, {2, 2, 1}, {1, 1, 1}, {1, 1, 1}), 32));
}

}  // namespace
}  // namespace halo3d::testing
