// ModelPlan: the plan of a model for any grid, computed without MPI (no ProcessGrid, no
// allocation), so a laptop can plan the paper's 2,048-GPU runs.
#include <gtest/gtest.h>

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/models/CosmoFlow.hpp"

namespace halo3d::nn {
namespace {

std::unique_ptr<Model> cosmoflow(index_t size, double width) {
  CosmoFlowConfig c;
  c.input_size = size;
  c.width = width;
  return makeCosmoFlow(c);
}

int find(const ModelPlan& p, const std::string& name) {
  for (std::size_t id = 0; id < p.nodes().size(); ++id)
    if (p.nodes()[id].name == name) return int(id);
  ADD_FAILURE() << "no node " << name;
  return 0;
}

// The paper's setting: 512^3 samples, 2,048 GPUs as 8 sample groups of 256 depth slabs.
TEST(ModelPlan, PlansThePapersTwoThousandRankGridWithoutMpi) {
  auto m = cosmoflow(512, 1.0);
  const ModelPlan p = m->plan(GridShape(8, 256, 1, 1), 8);
  EXPECT_EQ(p.grid().size(), 2048);
  // Every rank holds 1 sample and 2 of the 512 planes, with one ghost plane on each side (3^3
  // conv).
  const TensorBlock in = p.block(0, ModelPlan::largestRank());
  EXPECT_EQ(in.localSamples(), 1);
  EXPECT_EQ(in.owned().extent(0), 2);
  EXPECT_EQ(in.owned().extent(1), 512);
  EXPECT_EQ(in.halo().lo[0], 1);
  EXPECT_EQ(in.halo().hi[0], 1);
  // The last rank of the grid holds the last slab.
  const TensorBlock last = p.block(0, GridCoords{7, 255, 0, 0});
  EXPECT_EQ(last.owned().min(0), 510);
  EXPECT_EQ(last.sampleBegin(), 7);
  // Slabs of 2 planes pool to 1 plane: the volume goes replicated before the next convolution,
  // which then reads its padding from the replicated tensor's ghosts.
  bool replicated = false;
  for (const PlanNode& n : p.nodes())
    replicated |= n.replicates >= 0;
  EXPECT_TRUE(replicated);
  for (const PlanNode& n : p.nodes())
    if (n.replicates >= 0 && !n.consumers.empty()) {
      const PlanNode& consumer = p.node(n.consumers[0]);
      if (consumer.kind.rfind("Conv3d", 0) == 0) {
        EXPECT_EQ(n.halo.lo[0], 1) << n.name;
      }
    }
  // Bytes are known per rank without allocating: 1 x 4 x (2+2) x (512+2) x (512+2) floats.
  EXPECT_EQ(p.bytes(0, ModelPlan::largestRank(), 4), std::size_t(4) * 4 * 4 * 514 * 514);
  EXPECT_GT(p.totalBytes(ModelPlan::largestRank(), 4), p.bytes(0, ModelPlan::largestRank(), 4));
}

TEST(ModelPlan, DepthOnlySplitReplicatesWithPadding) {
  auto m = cosmoflow(64, 0.125);
  const ModelPlan p = m->plan(GridShape(1, 4, 1, 1), 2);
  const PlanNode& r = p.node(find(p, "features.10.replicate"));
  EXPECT_EQ(r.spec.dist, Distribution::Replicated);
  EXPECT_EQ(r.halo.lo, (std::array<int, 3>{1, 1, 1}));
  // Execution order: the replication runs right before its first consumer.
  const auto& order = p.order();
  const auto at = [&](const std::string& name) {
    return std::find(order.begin(), order.end(), find(p, name)) - order.begin();
  };
  EXPECT_EQ(at("features.10.replicate") + 1, at("features.11"));
}

TEST(ModelPlan, AGridThatCannotSplitTheVolumeIsRefusedNamingTheLayer) {
  auto m = cosmoflow(32, 0.125);
  try {
    m->plan(GridShape(1, 64, 1, 1), 2);
    FAIL() << "a 32^3 volume was split over 64 depth slabs";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'input'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1x64x1x1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(m->plan(GridShape(4, 1, 1, 1), 2), InputError);  // 2 samples over 4 groups
}

}  // namespace
}  // namespace halo3d::nn
