// The strided host conv3d code (kernels/impl/Conv3dHostStrided.hpp) against the naive reference:
// strides 2 and 3 (also mixed with 1), odd and even extents, W extents around the SIMD width,
// padding 0 and 1, non-cubic kernels, dilation, channel counts that leave register-block tails;
// float and double. Then box-by-box runs (an interior and the slabs around it, as a layer splits
// its boxes) must give bitwise the whole-box results for forward and backward-data.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/impl/Conv3dImpl.hpp"
#include "halo3d/kernels/reference/Conv3d.hpp"
#include "test_conv3d_support.hpp"

namespace halo3d::testing {
namespace {

std::vector<ConvCase> stridedSweep() {
  const std::vector<WindowGeometry> geometries{
      WindowGeometry::cubic(3, 2, 1),
      WindowGeometry::cubic(3, 2, 0),
      WindowGeometry::cubic(3, 3, 1),
      WindowGeometry::cubic(2, 2, 0),
      geometry({3, 1, 5}, {2, 1, 2}, {1, 1, 1}, {1, 0, 2}),
      geometry({1, 3, 2}, {2, 2, 3}, {1, 2, 1}, {0, 1, 1}),
      geometry({3, 3, 3}, {1, 1, 2}, {1, 1, 2}, {1, 1, 1}),
      geometry({2, 3, 3}, {3, 2, 1}, {1, 1, 1}, {1, 1, 0}),
  };
  const std::vector<std::array<index_t, 2>> channels{{3, 5}, {2, 13}, {9, 16}, {1, 9}, {17, 3}};
  std::vector<ConvCase> cases;
  std::size_t k = 0;
  for (const Extents3& v : {Extents3{5, 6, 7}, Extents3{6, 5, 16}, Extents3{4, 7, 33},
                            Extents3{7, 4, 64}, Extents3{3, 3, 1}})
    for (const WindowGeometry& g : geometries) {
      const auto ch = channels[k % channels.size()];
      ConvCase c{1 + index_t(k % 2), ch[0], ch[1], v, g, k % 3 != 0};
      ++k;
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

  explicit Tensors(const ConvCase& cc)
      : ConvProblem<T>(cc), dy("dy", TensorBlock::whole(cc.outShape(), HaloWidths::uniform(1))) {}

  void fill() {
    fillOwned(this->x, 1);
    fillUniform(dy.view(), 2);  // ghosts too: cells outside dy_box must not contribute
    fillUniform(this->w, 3);
    fillUniform(this->b, 4);
    fillUniform(this->dw, 5);
    fillUniform(this->db, 6);
    fillAll(this->y, T(0));
    fillAll(this->dx, T(7));  // a sentinel: every cell of dx_box must be assigned
  }
};

// The dispatch (KernelPath::Fastest) and, where compiled in, the strided host code called directly,
// against the reference, with a dy box that leaves out the first output plane, row and column.
template <class T>
void matchReference(const ConvCase& c, bool direct) {
  SCOPED_TRACE(::testing::Message() << (direct ? "direct " : "dispatch ")
                                    << (sizeof(T) == 4 ? "float " : "double ") << c);
  const HostExec exec;
  Tensors<T> ours(c), ref(c);
  ours.fill();
  ref.fill();
  const Box out = c.outBox();
  const Box dy_box = out.grown(
      {out.extent(0) > 1 ? -1 : 0, out.extent(1) > 1 ? -1 : 0, out.extent(2) > 1 ? -1 : 0},
      {0, 0, 0});
  if (direct) {
#if HALO3D_CONV3D_AVX512
    kernels::impl::conv3dForwardStrided(exec, ours.x, ours.w, ours.b, c.g, ours.y, out);
    kernels::impl::conv3dBackwardDataStrided(exec, ours.dy, ours.w, c.g, ours.dx, c.inBox(),
                                             dy_box);
    kernels::impl::conv3dBackwardFilterStrided(exec, ours.x, ours.dy, c.g, ours.dw, ours.db, out,
                                               true);
#endif
  } else {
    kernels::conv3dForward(exec, ours.x, ours.w, ours.b, c.g, ours.y, out);
    kernels::conv3dBackwardData(exec, ours.dy, ours.w, c.g, ours.dx, c.inBox(), dy_box);
    kernels::conv3dBackwardFilter(exec, ours.x, ours.dy, c.g, ours.dw, ours.db, out, true);
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

TEST(Conv3dStrided, MatchReferenceFloat) {
  for (const ConvCase& c : stridedSweep()) {
    matchReference<float>(c, false);
    if (kernels::impl::kHostSimd<float>) matchReference<float>(c, true);
  }
}

TEST(Conv3dStrided, MatchReferenceDouble) {
  for (const ConvCase& c : stridedSweep()) {
    matchReference<double>(c, false);
    if (kernels::impl::kHostSimd<double>) matchReference<double>(c, true);
  }
}

// The pieces of `box` a layer computes separately: an interior and the slabs around it (first and
// last plane, first and last row of the rest, first column of the rest).
std::vector<Box> pieces(const Box& box) {
  std::vector<Box> out;
  if (box.extent(0) < 3 || box.extent(1) < 3 || box.extent(2) < 2) return {box};
  const auto lo = box.min(), hi = box.max();
  out.push_back(Box({lo[0], lo[1], lo[2]}, {lo[0] + 1, hi[1], hi[2]}));
  out.push_back(Box({hi[0] - 1, lo[1], lo[2]}, {hi[0], hi[1], hi[2]}));
  out.push_back(Box({lo[0] + 1, lo[1], lo[2]}, {hi[0] - 1, lo[1] + 1, hi[2]}));
  out.push_back(Box({lo[0] + 1, hi[1] - 1, lo[2]}, {hi[0] - 1, hi[1], hi[2]}));
  out.push_back(Box({lo[0] + 1, lo[1] + 1, lo[2]}, {hi[0] - 1, hi[1] - 1, lo[2] + 1}));
  out.push_back(Box({lo[0] + 1, lo[1] + 1, lo[2] + 1}, {hi[0] - 1, hi[1] - 1, hi[2]}));
  return out;
}

template <class T>
void boxByBox(const ConvCase& c) {
  SCOPED_TRACE(::testing::Message() << (sizeof(T) == 4 ? "float " : "double ") << c);
  const HostExec exec;
  Tensors<T> whole(c), split(c);
  whole.fill();
  split.fill();
  const Box out = c.outBox();
  kernels::conv3dForward(exec, whole.x, whole.w, whole.b, c.g, whole.y, out);
  kernels::conv3dBackwardData(exec, whole.dy, whole.w, c.g, whole.dx, c.inBox(), out);
  for (const Box& b : pieces(out))
    kernels::conv3dForward(exec, split.x, split.w, split.b, c.g, split.y, b);
  for (const Box& b : pieces(c.inBox()))
    kernels::conv3dBackwardData(exec, split.dy, split.w, c.g, split.dx, b, out);
  exec.fence();
  EXPECT_TRUE(identical(whole.y, split.y)) << "forward";
  EXPECT_TRUE(identical(whole.dx, split.dx)) << "backward-data";
}

TEST(Conv3dStrided, BoxByBoxIsBitwiseWholeBox) {
  for (const ConvCase& c : stridedSweep()) {
    boxByBox<float>(c);
    boxByBox<double>(c);
  }
}

// One block of a spatial split (owned cells a sub-box of the volume, ghosts around it, as a grid's
// blocks hold them: x's ghosts inside the volume hold a neighbour's data, those past it are zero,
// the padding): the three passes through the dispatch against the reference on the same tensors,
// with dx_box reaching one cell into the ghosts (inside the volume) and dy_box the owned output
// cells.
template <class T>
void splitBlock(const ConvCase& c, int dim, bool upper) {
  SCOPED_TRACE(::testing::Message() << (sizeof(T) == 4 ? "float " : "double ") << c << " split "
                                    << dim << (upper ? " upper" : " lower"));
  const HostExec exec;
  auto half = [&](const Box& whole) {
    auto lo = whole.min(), hi = whole.max();
    const index_t mid = (lo[std::size_t(dim)] + hi[std::size_t(dim)]) / 2;
    (upper ? lo : hi)[std::size_t(dim)] = mid;
    return Box(lo, hi);
  };
  const Box in_owned = half(c.inBox()), out_owned = half(c.outBox());
  if (in_owned.empty() || out_owned.empty()) return;
  const HaloWidths halo = HaloWidths::uniform(6);  // wide enough for every window of the sweep
  struct Set {
    HostTensor<T> x, dx, y, dy;
    HostWeights<T> w, dw;
    HostBias<T> b, db;
  };
  auto make = [&] {
    ConvParams<T> prm(c);
    Set st{HostTensor<T>("x", TensorBlock(c.inShape(), 0, c.samples, in_owned, halo)),
           HostTensor<T>("dx", TensorBlock(c.inShape(), 0, c.samples, in_owned, halo)),
           HostTensor<T>("y", TensorBlock(c.outShape(), 0, c.samples, out_owned, halo)),
           HostTensor<T>("dy", TensorBlock(c.outShape(), 0, c.samples, out_owned, halo)),
           prm.w,
           prm.dw,
           prm.b,
           prm.db};
    fillVolumeCells(st.x, 11);
    fillUniform(st.dy.view(), 12);
    fillUniform(st.w, 13);
    fillUniform(st.b, 14);
    fillAll(st.dx, T(7));
    return st;
  };
  Set ours = make(), ref = make();
  const Box dx_box = intersect(in_owned.grown({1, 1, 1}, {1, 1, 1}), c.inBox());
  kernels::conv3dForward(exec, ours.x, ours.w, ours.b, c.g, ours.y, out_owned);
  kernels::conv3dBackwardData(exec, ours.dy, ours.w, c.g, ours.dx, dx_box, out_owned);
  kernels::conv3dBackwardFilter(exec, ours.x, ours.dy, c.g, ours.dw, ours.db, out_owned, false);
  kernels::reference::conv3dForward(exec, ref.x, ref.w, ref.b, c.g, ref.y, out_owned);
  kernels::reference::conv3dBackwardData(exec, ref.dy, ref.w, c.g, ref.dx, dx_box, out_owned);
  kernels::reference::conv3dBackwardFilter(exec, ref.x, ref.dy, c.g, ref.dw, ref.db, out_owned,
                                           false);
  exec.fence();
  EXPECT_LE(maxRelError(ours.y.view(), ref.y.view()), tolerance<T>()) << "forward";
  EXPECT_LE(maxRelError(ours.dx.view(), ref.dx.view()), tolerance<T>()) << "backward-data";
  EXPECT_LE(maxRelError(ours.dw, ref.dw), tolerance<T>()) << "backward-filter dw";
  EXPECT_LE(maxRelError(ours.db, ref.db), tolerance<T>()) << "backward-filter db";
}

TEST(Conv3dStrided, BlocksOfASpatialSplitMatchReference) {
  for (const ConvCase& c : stridedSweep())
    for (int dim = 0; dim < 3; ++dim)
      for (bool upper : {false, true}) {
        splitBlock<float>(c, dim, upper);
        splitBlock<double>(c, dim, upper);
      }
}

}  // namespace
}  // namespace halo3d::testing
