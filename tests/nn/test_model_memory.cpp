// The plan's memory: a model whose activations and gradients cannot fit is refused before its first
// allocation, on every rank, with the bytes needed, the limit and the largest tensors named; a
// model that fits reports the bytes it allocated.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/models/CosmoFlow.hpp"
#include "support/MpiWorld.hpp"

namespace halo3d::nn {
namespace {

using testing::worldSize;

std::unique_ptr<Model> cosmoflow(index_t size, double width) {
  CosmoFlowConfig c;
  c.input_size = size;
  c.width = width;
  return makeCosmoFlow(c);
}

// CosmoFlow at the paper's 512^3 needs about 45 GiB of activations and gradients on one rank
// and 5.6 GiB per rank split 8 ways in depth, so a 2 GiB limit refuses it at every rank count here.
// The refusal comes from planning alone: this test allocates nothing large whatever the machine.
TEST(ModelMemory, APlanThatDoesNotFitIsRefusedBeforeAllocatingWithTheBytesAndLayers) {
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, worldSize(), 1, 1));
  auto model = cosmoflow(512, 1.0);
  const std::size_t limit = std::size_t(2) << 30;
  try {
    model->build(grid, 1, limit);
    FAIL() << "a 512^3 CosmoFlow was planned within 2 GiB per rank";
  } catch (const ResourceError& e) {
    const std::string what = e.what();
    if (worldSize() == 1) std::printf("%s\n", what.c_str());
    EXPECT_NE(what.find("activations and gradients need"), std::string::npos) << what;
    EXPECT_NE(what.find("2.00 GiB (--memory-limit)"), std::string::npos) << what;
    // The first convolution's output (16 channels at full resolution) is the largest tensor.
    EXPECT_NE(what.find("'features.0' (1, 16, 512, 512, 512)"), std::string::npos) << what;
    EXPECT_NE(what.find("--grid"), std::string::npos) << what;
  }
  EXPECT_FALSE(model->built());
}

TEST(ModelMemory, APlanThatFitsCountsWhatItAllocates) {
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, worldSize(), 1, 1));
  auto model = cosmoflow(32, 0.125);
  model->build(grid, 2, std::size_t(1) << 30);
  ASSERT_TRUE(model->built());
  // The input's allocation alone: 2 samples x 4 channels x (owned + ghost) cells, in the model's
  // scalar.
  const Shape5 e = model->input().tensor.block().allocationExtents();
  const std::size_t input_bytes = sizeof(real) * std::size_t(e[0] * e[1] * e[2] * e[3] * e[4]);
  EXPECT_EQ(model->input().tensor.view().span() * sizeof(real), input_bytes);
  EXPECT_GT(model->activationBytes(), 2 * input_bytes);
  EXPECT_NE(model->summary().find("activations and gradients per rank: "), std::string::npos);
}

TEST(ModelMemory, ALimitBelowTheSmallestPlanIsRefusedOnEveryRank) {
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, worldSize(), 1, 1));
  auto model = cosmoflow(32, 0.125);
  EXPECT_THROW(model->build(grid, 2, 1000), ResourceError);
}

}  // namespace
}  // namespace halo3d::nn
