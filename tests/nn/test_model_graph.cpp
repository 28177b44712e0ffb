// The model graph without kernels: automatic replication, Redistribute, and gradient summation for
// tensors with several consumers, at every grid of the communicator's size.
#include <gtest/gtest.h>
#include <mpi.h>

#include "halo3d/core/Activity.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/nn/Init.hpp"
#include "halo3d/nn/Model.hpp"
#include "halo3d/nn/layers/Conv3d.hpp"
#include "support/GridFactorisations.hpp"
#include "support/MpiWorld.hpp"

namespace halo3d::nn {
namespace {

using testing::worldSize;

double code(index_t n, index_t c, index_t d, index_t h, index_t w) {
  return double(((n * 7 + c) * 11 + d) * 13 + h) + 0.01 * double(w);
}

// y = a * x on owned cells; dx = a * dy.
class Scale : public Layer {
 public:
  Scale(std::string name, float a, bool spatial = true)
      : Layer(std::move(name)), _a(a), _spatial(spatial) {}
  std::string kind() const override { return "Scale"; }
  TensorSpec outputSpec(const std::vector<TensorSpec>& in) const override { return in[0]; }
  bool acceptsSpatial(const std::vector<TensorSpec>&, const GridShape&) const override {
    return _spatial;
  }
  void forward(RunContext&, const std::vector<const Activation*>& in, Activation& out) override {
    apply(in[0]->tensor, out.tensor, _a);
  }
  void backward(RunContext&, const std::vector<const Activation*>&, const Activation&,
                const Activation& dout, const std::vector<Activation*>& din) override {
    if (din[0]) apply(dout.tensor, din[0]->tensor, _a);
  }
  static void apply(const Tensor& x, const Tensor& y, float a) {
    auto xo = x.owned();
    auto yo = y.owned();
    Kokkos::parallel_for(
        Kokkos::MDRangePolicy<Kokkos::Rank<5>>(
            {0, 0, 0, 0, 0},
            {xo.extent(0), xo.extent(1), xo.extent(2), xo.extent(3), xo.extent(4)}),
        KOKKOS_LAMBDA(int n, int c, int d, int h, int w) {
          yo(n, c, d, h, w) = a * xo(n, c, d, h, w);
        });
    Kokkos::fence();
  }

 private:
  float _a;
  bool _spatial;
};

// y = x0 + x1.
class Add : public Layer {
 public:
  using Layer::Layer;
  std::string kind() const override { return "Add"; }
  TensorSpec outputSpec(const std::vector<TensorSpec>& in) const override { return in[0]; }
  void forward(RunContext&, const std::vector<const Activation*>& in, Activation& out) override {
    auto a = in[0]->tensor.owned(), b = in[1]->tensor.owned(), y = out.tensor.owned();
    Kokkos::parallel_for(
        Kokkos::MDRangePolicy<Kokkos::Rank<5>>(
            {0, 0, 0, 0, 0}, {y.extent(0), y.extent(1), y.extent(2), y.extent(3), y.extent(4)}),
        KOKKOS_LAMBDA(int n, int c, int d, int h, int w) {
          y(n, c, d, h, w) = a(n, c, d, h, w) + b(n, c, d, h, w);
        });
    Kokkos::fence();
  }
  void backward(RunContext&, const std::vector<const Activation*>&, const Activation&,
                const Activation& dout, const std::vector<Activation*>& din) override {
    for (Activation* d : din)
      if (d) Scale::apply(dout.tensor, d->tensor, 1.0f);
  }
};

void fillGlobal(Activation& a, double scale) {
  auto h = Kokkos::create_mirror_view(a.tensor.owned());
  const TensorBlock& b = a.tensor.block();
  for (index_t n = 0; n < index_t(h.extent(0)); ++n)
    for (index_t c = 0; c < index_t(h.extent(1)); ++c)
      for (index_t d = 0; d < index_t(h.extent(2)); ++d)
        for (index_t y = 0; y < index_t(h.extent(3)); ++y)
          for (index_t x = 0; x < index_t(h.extent(4)); ++x)
            h(n, c, d, y, x) = float(scale * code(n + b.sampleBegin(), c, d + b.owned().min(0),
                                                  y + b.owned().min(1), x + b.owned().min(2)));
  Kokkos::deep_copy(a.tensor.owned(), h);
}

int mismatches(const Activation& a, double scale) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.tensor.owned());
  const TensorBlock& b = a.tensor.block();
  int bad = 0;
  for (index_t n = 0; n < index_t(h.extent(0)); ++n)
    for (index_t c = 0; c < index_t(h.extent(1)); ++c)
      for (index_t d = 0; d < index_t(h.extent(2)); ++d)
        for (index_t y = 0; y < index_t(h.extent(3)); ++y)
          for (index_t x = 0; x < index_t(h.extent(4)); ++x) {
            const double want = scale * code(n + b.sampleBegin(), c, d + b.owned().min(0),
                                             y + b.owned().min(1), x + b.owned().min(2));
            bad += std::abs(h(n, c, d, y, x) - want) > 1e-3 * std::abs(want) + 1e-3;
          }
  return bad;
}

TEST(ModelGraph, ReplicatesWhereALayerRefusesSplitsAndSumsSkipGradients) {
  for (const GridShape& shape : testing::allGrids(worldSize())) {
    SCOPED_TRACE(shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    Model m;
    const int in = m.input({2, 8, 9, 8});
    const int a = m.add(std::make_unique<Scale>("a", 2.0f));              // spatial
    const int b = m.add(std::make_unique<Scale>("b", 3.0f, false), {a});  // needs whole volumes
    m.add(std::make_unique<Add>("sum"), {b, b});                          // two consumers of b
    (void)in;
    m.build(grid, shape.n() + 1);
    const auto layers = m.layers();
    ASSERT_EQ(layers.size(), 4u);  // a, a.replicate, b, sum
    EXPECT_EQ(layers[1]->name(), "a.replicate");
    EXPECT_EQ(m.output().spec.dist, Distribution::Replicated);
    fillGlobal(m.input(), 1.0);
    RunContext ctx;
    ctx.grid = &grid;
    m.forward(ctx);
    // The output holds the whole volume of the group's samples on every rank: 2 * 3 * 2 = 12 x
    // input.
    EXPECT_EQ(m.output().tensor.block().owned(), Box::fromExtents({8, 9, 8}));
    EXPECT_EQ(mismatches(m.output(), 12.0), 0);
    // Backward of ones-like codes: d(sum)/d(input) = 2 * (3 + 3) = 12.
    fillGlobal(m.outputGradient(), 1.0);
    m.backward(ctx);
    // b feeds both inputs of the sum: its gradient is 2 dy; the spatial gradient of a is 3 * 2 dy,
    // sliced back from the replicated tensor onto each rank's block.
    EXPECT_EQ(mismatches(m.gradient("b"), 2.0), 0);
    EXPECT_EQ(m.gradient("a").spec.dist, Distribution::Spatial);
    EXPECT_EQ(mismatches(m.gradient("a"), 6.0), 0);
    EXPECT_THROW(m.activation("nope"), InputError);
  }
}

// A padded convolution after a replication reads its zero padding from the replicated tensor's
// ghosts: the planner must give that tensor the widths of an unsplit volume (it gave none, and the
// convolution read past its allocation on depth-only grids such as 1x4x1x1). The output equals the
// 1-rank run's on every grid.
TEST(ModelGraph, ReplicatedTensorsKeepThePaddingOfTheirConsumers) {
  const auto build = [](Model& m, const ProcessGrid& grid) {
    m.input({2, 8, 9, 8});
    m.add(std::make_unique<Scale>("a", 2.0f));
    m.add(std::make_unique<Scale>("whole", 1.0f, false));  // replicates its input
    m.add(std::make_unique<Conv3d>("conv", 2, 3, WindowGeometry::cubic(3, 1, 1), true));
    m.build(grid, grid.shape().n());
    initializeParameters(m.parameters(), 7);
    fillGlobal(m.input(), 0.01);
    RunContext ctx;
    ctx.grid = &grid;
    m.forward(ctx);
  };
  ProcessGrid self(MPI_COMM_SELF, GridShape(1, 1, 1, 1));
  Model single;
  build(single, self);
  const auto want =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), single.output().tensor.owned());
  for (const GridShape& shape : testing::allGrids(worldSize())) {
    if (shape.n() > 1) continue;  // one sample group: every rank holds the whole output
    SCOPED_TRACE(shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    Model m;
    build(m, grid);
    EXPECT_EQ(m.activation("whole").spec.dist, Distribution::Replicated);
    const HaloWidths& h = m.activation("whole").tensor.block().halo();
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(h.lo[d], 1) << "dimension " << d;
      EXPECT_EQ(h.hi[d], 1) << "dimension " << d;
    }
    const auto got =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.output().tensor.owned());
    ASSERT_EQ(got.size(), want.size());
    int bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      bad += std::abs(got.data()[i] - want.data()[i]) > 1e-5f * (1 + std::abs(want.data()[i]));
    EXPECT_EQ(bad, 0);
  }
}

// Records the activity (core/Activity.hpp) it runs under: the model marks each layer's pass.
class ActivityProbe : public Layer {
 public:
  using Layer::Layer;
  std::string kind() const override { return "ActivityProbe"; }
  TensorSpec outputSpec(const std::vector<TensorSpec>& in) const override { return in[0]; }
  void forward(RunContext&, const std::vector<const Activation*>&, Activation&) override {
    seen.push_back(currentActivity().what);
  }
  void backward(RunContext&, const std::vector<const Activation*>&, const Activation&,
                const Activation&, const std::vector<Activation*>&) override {
    seen.push_back(currentActivity().what);
  }
  std::vector<std::string> seen;
};

TEST(ModelGraph, MarksEachLayersPassAsTheActivity) {
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, worldSize(), 1, 1));
  Model m;
  m.input({1, 8, 4, 4});
  auto probe = std::make_unique<ActivityProbe>("probe");
  ActivityProbe* p = probe.get();
  m.add(std::move(probe));
  m.build(grid, 1);
  RunContext ctx;
  ctx.grid = &grid;
  setActivity("before");
  m.forward(ctx);
  m.backward(ctx);
  EXPECT_EQ(p->seen, (std::vector<std::string>{"probe forward", "probe backward"}));
  EXPECT_EQ(currentActivity().what, "before");
}

// A convolution's halo exchanges count what this rank sends: at least its owned face per pass when
// the grid splits the volume, nothing when it does not.
TEST(ModelGraph, WindowLayersRecordTheirHaloTraffic) {
  for (const GridShape& shape : testing::allGrids(worldSize())) {
    SCOPED_TRACE(shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    Model m;
    m.input({2, 8, 9, 8});
    m.add(std::make_unique<Scale>("a", 1.0f));
    m.add(std::make_unique<Conv3d>("conv", 2, 3, WindowGeometry::cubic(3, 1, 1), false));
    m.build(grid, shape.n());
    initializeParameters(m.parameters(), 3);
    LayerTimers timers;
    RunContext ctx;
    ctx.grid = &grid;
    ctx.timers = &timers;
    m.forward(ctx);
    m.backward(ctx);
    const HaloTraffic t = timers.totalTraffic();
    if (shape.spatialSize() == 1) {
      EXPECT_EQ(t.bytes, 0.0);
      EXPECT_EQ(t.messages, 0.0);
      continue;
    }
    const TensorBlock& b = m.activation("a").tensor.block();
    // The smallest face this rank owns, for one ghost layer, per pass (gather and scatter-sum).
    double face = 1e30;
    for (int d = 0; d < 3; ++d)
      if (shape.spatial()[d] > 1)
        face = std::min(face, double(b.owned().size() / b.owned().extent(d)));
    EXPECT_GE(t.bytes, 2.0 * double(b.localSamples() * 2) * face * sizeof(real));
    EXPECT_GE(t.messages, 2.0);
    EXPECT_EQ(timers.traffic().count("conv"), 1u);
  }
}

TEST(ModelGraph, BatchSmallerThanSampleGroupsIsRejected) {
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(worldSize(), 1, 1, 1));
  Model m;
  m.input({1, 2, 2, 2});
  m.add(std::make_unique<Scale>("a", 1.0f));
  if (worldSize() > 1) {
    EXPECT_THROW(m.build(grid, worldSize() - 1), InputError);
  } else {
    EXPECT_THROW(m.build(grid, 0), InputError);
  }
}

}  // namespace
}  // namespace halo3d::nn
