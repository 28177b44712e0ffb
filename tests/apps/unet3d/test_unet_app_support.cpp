// The pieces of `unet3d` below the command line: sliding-window geometry, the Gaussian blending
// profile, softmax/argmax, hard Dice counts (partial sums over any grid against the whole volume),
// the window reader (windows past the volume read as zero on every grid) and the prediction file.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "halo3d/apps/unet3d/PredictionFile.hpp"
#include "halo3d/apps/unet3d/Segmentation.hpp"
#include "halo3d/apps/unet3d/SlidingWindow.hpp"
#include "halo3d/apps/unet3d/WindowReader.hpp"
#include "halo3d/comm/Distribute.hpp"
#include "halo3d/io/SampleWriter.hpp"
#include "support/GridFactorisations.hpp"
#include "support/MpiWorld.hpp"
#include "support/SharedTempDir.hpp"

namespace halo3d::apps {
namespace {

// Whether `shape` can split a volume of `e` (every block non-empty).
bool fits(const GridShape& shape, const Extents3& e) {
  return shape.d() <= e[0] && shape.h() <= e[1] && shape.w() <= e[2];
}

using halo3d::testing::worldSize;

// A directory shared by every rank, removed at the end.
class SharedDir : public halo3d::testing::SharedTempDir {
 public:
  SharedDir() : SharedTempDir(MPI_COMM_WORLD, "halo3d_unet") {}
};

struct StartsCase {
  index_t extent, tile;
  double overlap;
  std::vector<index_t> starts;
};

TEST(SlidingWindow, TileStartsFollowMonai) {
  const StartsCase cases[] = {
      {64, 32, 0.25, {0, 24, 32}},  // step 24; the last tile moved back to end at 64
      {64, 32, 0.5, {0, 16, 32}},
      {64, 32, 0.0, {0, 32}},
      {64, 16, 0.0, {0, 16, 32, 48}},
      {65, 16, 0.0, {0, 16, 32, 48, 49}},
      {33, 32, 0.5, {0, 1}},
      {32, 32, 0.5, {0}},
      {20, 32, 0.5, {0}},  // a volume smaller than the tile: one tile reaching past it
      {1, 1, 0.0, {0}},
      {5, 2, 0.9, {0, 1, 2, 3}},  // floor(2 * 0.1) = 0: the step is 1
  };
  for (const StartsCase& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "extent " << c.extent << " tile " << c.tile << " overlap " << c.overlap);
    const std::vector<index_t> s = tileStarts(c.extent, c.tile, c.overlap);
    EXPECT_EQ(s, c.starts);
  }
}

TEST(SlidingWindow, TilesCoverTheVolumeWithTheRequestedOverlap) {
  for (index_t extent : {1, 7, 16, 31, 64, 100})
    for (index_t tile : {1, 4, 16, 32})
      for (double overlap : {0.0, 0.25, 0.5, 0.75}) {
        SCOPED_TRACE(::testing::Message()
                     << "extent " << extent << " tile " << tile << " overlap " << overlap);
        const std::vector<index_t> s = tileStarts(extent, tile, overlap);
        std::vector<int> covered(std::size_t(extent), 0);
        for (std::size_t k = 0; k < s.size(); ++k) {
          EXPECT_GE(s[k], 0);
          if (extent >= tile) {
            EXPECT_LE(s[k] + tile, extent);
          }
          if (k > 0) {
            EXPECT_GT(s[k], s[k - 1]);
            // Consecutive tiles share at least the requested fraction (the last one more).
            EXPECT_GE(s[k - 1] + tile - s[k],
                      std::min(index_t(std::ceil(double(tile) * overlap - 1e-9)), tile - 1));
          }
          for (index_t i = s[k]; i < std::min(extent, s[k] + tile); ++i)
            ++covered[std::size_t(i)];
        }
        for (index_t i = 0; i < extent; ++i)
          EXPECT_GE(covered[std::size_t(i)], 1) << "cell " << i;
      }
  EXPECT_EQ(tileOrigins({40, 16, 8}, 16, 0.5).size(), std::size_t(4 * 1 * 1));
  EXPECT_EQ(tileOrigins({40, 16, 8}, 16, 0.5).back(), (Extents3{24, 0, 0}));
}

TEST(SlidingWindow, BadTilesAndOverlapsAreRefused) {
  EXPECT_THROW(tileStarts(10, 0, 0.5), InputError);
  try {
    tileStarts(10, 4, 1.0);
    ADD_FAILURE() << "overlap 1 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--overlap must be in [0, 1), got 1"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(tileStarts(10, 4, -0.1), InputError);
  EXPECT_THROW(gaussianProfile(8, 0.0), InputError);
}

TEST(SlidingWindow, GaussianProfileIsSymmetricPeakedAndPositive) {
  for (index_t tile : {1, 2, 7, 16, 33})
    for (double scale : {0.125, 0.25, 1.0}) {
      SCOPED_TRACE(::testing::Message() << "tile " << tile << " scale " << scale);
      const std::vector<double> w = gaussianProfile(tile, scale);
      ASSERT_EQ(w.size(), std::size_t(tile));
      double top = 0;
      for (std::size_t i = 0; i < w.size(); ++i) {
        EXPECT_GT(w[i], 0.0);
        EXPECT_NEAR(w[i], w[w.size() - 1 - i], 1e-15);
        if (2 * (i + 1) < w.size()) {
          EXPECT_LT(w[i], w[i + 1]);
        }
        top = std::max(top, w[i]);
      }
      EXPECT_DOUBLE_EQ(top, 1.0);
    }
  // sigma = T / 8: the edge of a 16 tile (7.5 from the centre, sigma 2) weighs exp(-7.5^2 / 8).
  EXPECT_NEAR(gaussianProfile(16, 0.125)[0] / gaussianProfile(16, 0.125)[7],
              std::exp(-7.5 * 7.5 / 8 + 0.25 / 8), 1e-12);
}

// Logits whose argmax and softmax are known: class (n + d + h + w) % C leads by `lead` over the
// others, which are equal; with lead 0 every class ties.
nn::Tensor logitsOf(const TensorBlock& b, double lead) {
  nn::Tensor t("logits", b);
  auto h = Kokkos::create_mirror_view(t.view());
  const Box& o = b.owned();
  const index_t classes = b.channels();
  for (index_t n = 0; n < b.localSamples(); ++n)
    for (index_t d = o.min(0); d < o.max(0); ++d)
      for (index_t y = o.min(1); y < o.max(1); ++y)
        for (index_t x = o.min(2); x < o.max(2); ++x) {
          const Extents3 l = b.toLocal({d, y, x});
          const index_t winner = (b.sampleBegin() + n + d + y + x) % classes;
          for (index_t c = 0; c < classes; ++c)
            h(n, c, l[0], l[1], l[2]) = nn::real((c == winner ? lead : 0.0) - 1.0);
        }
  Kokkos::deep_copy(t.view(), h);
  return t;
}

TEST(Segmentation, SoftmaxArgmaxOnEveryGrid) {
  for (const GridShape& shape : halo3d::testing::allGrids(worldSize())) {
    SCOPED_TRACE(shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    for (double lead : {0.0, 2.0}) {
      const index_t classes = 3;
      const Shape5 s{2 * shape.n(), classes, 9, 8, 8};
      const TensorBlock b = grid.blockOf(s, HaloWidths::uniform(1));
      const nn::Tensor logits = logitsOf(b, lead);
      const nn::Tensor probs("probs", b);
      Shape5 ls = s;
      ls[1] = 1;
      const Labels labels("labels", TensorBlock(ls, b.sampleBegin(), b.sampleEnd(), b.owned(), {}));
      softmaxArgmax(logits, labels, probs, b.owned());
      const auto l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), labels.view());
      const auto p = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), probs.view());
      const double top = std::exp(lead) / (std::exp(lead) + 2.0),
                   rest = 1.0 / (std::exp(lead) + 2.0);
      int bad = 0;
      const Box& o = b.owned();
      for (index_t n = 0; n < b.localSamples(); ++n)
        for (index_t d = o.min(0); d < o.max(0); ++d)
          for (index_t y = o.min(1); y < o.max(1); ++y)
            for (index_t x = o.min(2); x < o.max(2); ++x) {
              const index_t winner =
                  lead > 0 ? (b.sampleBegin() + n + d + y + x) % classes : 0;  // ties: lowest
              const Extents3 ll = labels.toLocal({d, y, x}), pl = probs.toLocal({d, y, x});
              bad += l(n, 0, ll[0], ll[1], ll[2]) != winner;
              for (index_t c = 0; c < classes; ++c)
                bad += std::abs(p(n, c, pl[0], pl[1], pl[2]) - (c == winner ? top : rest)) > 1e-6;
            }
      EXPECT_EQ(bad, 0) << "lead " << lead;
    }
  }
}

TEST(Segmentation, SoftmaxArgmaxRefusesMismatchedTensors) {
  ProcessGrid grid(MPI_COMM_SELF, GridShape(1, 1, 1, 1));
  const TensorBlock b = grid.blockOf({1, 3, 4, 4, 4});
  const Labels wrong("labels", grid.blockOf({1, 2, 4, 4, 4}));
  try {
    softmaxArgmax(nn::Tensor("logits", b), wrong, nn::Tensor(), b.owned());
    ADD_FAILURE() << "two-channel labels accepted";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("labels have 2 channels, expected 1"), std::string::npos)
        << e.what();
  }
}

TEST(Segmentation, DiceCountsOfKnownLabels) {
  // A 1x1x4 volume: truth 0 0 1 2, prediction 0 1 1 1.
  ProcessGrid grid(MPI_COMM_SELF, GridShape(1, 1, 1, 1));
  const TensorBlock b = grid.blockOf({1, 1, 1, 1, 4});
  const Labels pred("pred", b), truth("truth", b);
  auto p = Kokkos::create_mirror_view(pred.view());
  auto t = Kokkos::create_mirror_view(truth.view());
  const int pv[4] = {0, 1, 1, 1}, tv[4] = {0, 0, 1, 2};
  for (int i = 0; i < 4; ++i) {
    p(0, 0, 0, 0, i) = pv[i];
    t(0, 0, 0, 0, i) = tv[i];
  }
  Kokkos::deep_copy(pred.view(), p);
  Kokkos::deep_copy(truth.view(), t);
  DiceCounts counts(4);
  counts.add(pred, truth, b.owned());
  // Static tables: GCC 12.2 with AVX-512 at -O2 builds a local std::vector<double>{1, 1, 0, 0} as
  // {1, 1, 1, 1} (the SLP vectorizer broadcasts the low half), which made this test fail for the
  // wrong reason.
  static constexpr double kIntersection[4] = {1, 1, 0, 0}, kPredicted[4] = {1, 3, 0, 0},
                          kTruth[4] = {2, 1, 1, 0};
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_EQ(counts.intersection[c], kIntersection[c]) << "class " << c;
    EXPECT_EQ(counts.predicted[c], kPredicted[c]) << "class " << c;
    EXPECT_EQ(counts.truth[c], kTruth[c]) << "class " << c;
  }
  EXPECT_DOUBLE_EQ(counts.dice(0), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(counts.dice(1), 0.5);
  EXPECT_DOUBLE_EQ(counts.dice(2), 0.0);
  EXPECT_DOUBLE_EQ(counts.dice(3), 1.0);  // absent from both
  EXPECT_DOUBLE_EQ(counts.meanForeground(), (0.5 + 0.0 + 1.0) / 3.0);
  EXPECT_NE(counts.summary().find("mean foreground 0.5000"), std::string::npos) << counts.summary();
  EXPECT_EQ(counts.json()["mean_foreground_dice"].get<double>(), 0.5);
}

// Labels that are a function of the global cell; the prediction misses some of them.
std::int32_t truthAt(index_t n, index_t d, index_t h, index_t w) {
  return std::int32_t((n + d * 3 + h + 2 * w) % 3);
}
std::int32_t predictedAt(index_t n, index_t d, index_t h, index_t w) {
  return (d + h + w) % 4 == 0 ? std::int32_t((truthAt(n, d, h, w) + 1) % 3) : truthAt(n, d, h, w);
}

TEST(Segmentation, DiceCountsOverAnyGridEqualTheWholeVolume) {
  const Shape5 s{8, 1, 9, 8, 8};
  auto fill = [&](const Labels& t, bool predicted) {
    auto h = Kokkos::create_mirror_view(t.view());
    const TensorBlock& b = t.block();
    const Box& o = b.owned();
    for (index_t n = 0; n < b.localSamples(); ++n)
      for (index_t d = o.min(0); d < o.max(0); ++d)
        for (index_t y = o.min(1); y < o.max(1); ++y)
          for (index_t x = o.min(2); x < o.max(2); ++x) {
            const Extents3 l = b.toLocal({d, y, x});
            const index_t g = b.sampleBegin() + n;
            h(n, 0, l[0], l[1], l[2]) = predicted ? predictedAt(g, d, y, x) : truthAt(g, d, y, x);
          }
    Kokkos::deep_copy(t.view(), h);
  };
  ProcessGrid self(MPI_COMM_SELF, GridShape(1, 1, 1, 1));
  const Labels p1("p", self.blockOf(s)), t1("t", self.blockOf(s));
  fill(p1, true);
  fill(t1, false);
  DiceCounts whole(3);
  whole.add(p1, t1, p1.block().owned());
  EXPECT_GT(whole.dice(1), 0.5);
  EXPECT_LT(whole.dice(1), 1.0);
  for (const GridShape& shape : halo3d::testing::allGrids(worldSize())) {
    SCOPED_TRACE(shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    const Labels p("p", grid.blockOf(s)), t("t", grid.blockOf(s));
    fill(p, true);
    fill(t, false);
    DiceCounts counts(3);
    counts.add(p, t, p.block().owned());
    counts.allreduce(grid.comm());
    EXPECT_EQ(counts.intersection, whole.intersection);
    EXPECT_EQ(counts.predicted, whole.predicted);
    EXPECT_EQ(counts.truth, whole.truth);
  }
}

// A U-Net sample file of 2 channels over `e` whose values encode their position, labels (d + h + w)
// % 3.
void writeEncodedSample(const std::string& path, const Extents3& e) {
  HostSample s;
  s.channels = 2;
  s.extents = e;
  for (index_t c = 0; c < 2; ++c)
    for (index_t d = 0; d < e[0]; ++d)
      for (index_t h = 0; h < e[1]; ++h)
        for (index_t w = 0; w < e[2]; ++w)
          s.input.push_back(float(1 + c * 1000 + d * 100 + h * 10 + w));
  for (index_t d = 0; d < e[0]; ++d)
    for (index_t h = 0; h < e[1]; ++h)
      for (index_t w = 0; w < e[2]; ++w)
        s.labels.push_back(std::int32_t((d + h + w) % 3));
  writeSampleFile(path, SampleKind::UNet, {s});
}

TEST(WindowReader, WindowsPastTheVolumeReadAsZeroOnEveryGrid) {
  SharedDir dir;
  const Extents3 volume{5, 7, 6};
  const std::string file = dir.file("sample.h5");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) writeEncodedSample(file, volume);
  MPI_Barrier(MPI_COMM_WORLD);
  const SampleCatalog catalog = SampleCatalog::open({file}, SampleKind::UNet, MPI_COMM_WORLD);
  struct Window {
    Extents3 origin, extents;
  };
  // Inside, straddling the far corner (padding), and a window larger than the volume.
  const Window windows[] = {{{0, 0, 0}, {4, 4, 4}}, {{3, 5, 2}, {4, 4, 4}}, {{0, 0, 0}, {8, 8, 8}}};
  for (const GridShape& shape : halo3d::testing::allGrids(worldSize())) {
    if (shape.n() != 1) continue;
    SCOPED_TRACE(shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    WindowReader reader(grid, catalog, ReadOptions{});
    for (const Window& win : windows) {
      const Extents3& e = win.extents;
      if (!fits(shape, e)) continue;
      SCOPED_TRACE(::testing::Message() << "window at " << win.origin[0] << "," << win.origin[1]
                                        << "," << win.origin[2]);
      const nn::Tensor input("input",
                             grid.blockOf({1, 2, e[0], e[1], e[2]}, HaloWidths::uniform(1)));
      const Labels labels("labels", grid.blockOf({1, 1, e[0], e[1], e[2]}));
      reader.readInput(0, win.origin, input);
      reader.readLabels(0, win.origin, labels);
      const GlobalHostTensor<nn::real> x = gatherGlobal(input, grid);
      const GlobalHostTensor<std::int32_t> y = gatherGlobal(labels, grid);
      if (!grid.isRoot()) continue;
      int bad = 0;
      for (index_t d = 0; d < e[0]; ++d)
        for (index_t h = 0; h < e[1]; ++h)
          for (index_t w = 0; w < e[2]; ++w) {
            const index_t vd = d + win.origin[0], vh = h + win.origin[1], vw = w + win.origin[2];
            const bool inside = vd < volume[0] && vh < volume[1] && vw < volume[2];
            for (index_t c = 0; c < 2; ++c)
              bad += x(0, c, d, h, w) !=
                     (inside ? float(1 + c * 1000 + vd * 100 + vh * 10 + vw) : 0.0f);
            bad += y(0, 0, d, h, w) != (inside ? std::int32_t((vd + vh + vw) % 3) : -1);
          }
      EXPECT_EQ(bad, 0);
    }
  }
}

TEST(WindowReader, LabelsOutOfRangeNameTheVoxel) {
  SharedDir dir;
  const std::string file = dir.file("sample.h5");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) writeEncodedSample(file, {8, 4, 4});
  MPI_Barrier(MPI_COMM_WORLD);
  const SampleCatalog catalog = SampleCatalog::open({file}, SampleKind::UNet, MPI_COMM_WORLD);
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, worldSize(), 1, 1));
  ReadOptions two;
  two.num_classes = 2;
  WindowReader reader(grid, catalog, two);
  const Labels labels("labels", grid.blockOf({1, 1, 8, 4, 4}));
  try {
    reader.readLabels(0, {0, 0, 0}, labels);
    ADD_FAILURE() << "label 2 accepted with 2 classes";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("holds class 2 at voxel"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("classes must lie in [0, 2)"), std::string::npos)
        << e.what();
  }
}

TEST(PredictionFile, RoundTripAndBadLabels) {
  SharedDir dir;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  Prediction p;
  p.extents = {2, 3, 4};
  p.classes = 3;
  for (int i = 0; i < 24; ++i)
    p.labels.push_back(i % 3);
  p.probabilities.assign(72, 0.25f);
  p.info_json = R"({"mode":"test"})";
  const std::string path = dir.file("pred.h5");
  writePrediction(path, p);
  Extents3 e;
  EXPECT_EQ(readPredictionLabels(path, e), p.labels);
  EXPECT_EQ(e, p.extents);
  p.labels[5] = 300;
  try {
    writePrediction(dir.file("bad.h5"), p);
    ADD_FAILURE() << "label 300 written as uint8";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("label 300 does not fit uint8"), std::string::npos)
        << err.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("bad.h5")));
  try {
    readPredictionLabels(dir.file("missing.h5"), e);
    ADD_FAILURE() << "a missing file read";
  } catch (const IoError& err) {
    EXPECT_NE(std::string(err.what()).find("missing.h5"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace halo3d::apps
