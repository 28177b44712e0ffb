// The memory model's data loader term against the batches the loader allocates (io/DataLoader.hpp:
// the input block of the grid with the first layer's ghosts, the batch in use and the prefetched
// one): inputs in the activations' precision, since a bf16 run's loader delivers bf16
// (DataLoaderOptions::input), and int32 labels in both.
#include <gtest/gtest.h>

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/models/CosmoFlow.hpp"
#include "halo3d/nn/plan/StepModel.hpp"

namespace halo3d::nn {
namespace {

std::size_t cellsOf(const Shape5& s) {
  std::size_t n = 1;
  for (index_t e : s)
    n *= std::size_t(e);
  return n;
}

TEST(StepModelLoader, BatchesAreInTheActivationsPrecision) {
  CosmoFlowConfig c;
  c.input_size = 32;
  c.width = 0.125;
  auto model = makeCosmoFlow(c);
  const GridShape grid(1, 2, 2, 1);
  const index_t batch = 2;
  const ModelPlan plan = model->plan(grid, batch);
  Machine m;
  m.name = "roofline";
  m.cores_per_node = 64;
  m.calibrated = false;
  m.roofline = RooflineCompute{1e12, 1e11, {1, 1}, {1, 1}, 0};
  RunShape run;
  run.trainable_parameters = run.all_parameters = 1000;
  const auto term = [&](std::size_t element_bytes, bool prefetch, index_t labels) {
    run.element_bytes = element_bytes;
    run.prefetch = prefetch;
    run.labels_per_sample_cell = labels;
    for (const MemoryTerm& t : predictStep(plan, m, run).memory)
      if (t.what == "data loader batches") return t.bytes;
    ADD_FAILURE() << "no data loader term";
    return std::size_t(0);
  };
  // What the loader allocates on rank 0 (every rank's block is the same here): the input with the
  // first convolution's ghosts (3^3 kernel: one cell), and labels over the owned block.
  const TensorBlock in =
      TensorBlock::forGrid({batch, c.input_channels, 32, 32, 32}, grid, {}, HaloWidths::uniform(1));
  const std::size_t input_cells = cellsOf(in.allocationExtents());
  const std::size_t label_cells = std::size_t(in.localSamples() * in.owned().size());
  EXPECT_EQ(term(4, true, 0), 2 * input_cells * 4);
  EXPECT_EQ(term(2, true, 0), 2 * input_cells * 2);
  EXPECT_EQ(term(2, false, 0), input_cells * 2);
  EXPECT_EQ(term(4, true, 1), 2 * (input_cells * 4 + label_cells * 4));
  EXPECT_EQ(term(2, true, 1), 2 * (input_cells * 2 + label_cells * 4));
}

}  // namespace
}  // namespace halo3d::nn
