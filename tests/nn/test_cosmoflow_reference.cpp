// CosmoFlow (with and without batch norm) against PyTorch, at every grid of the issue that fits the
// rank count: the step-0 output and every gradient, the 3 Adam-step losses and the final weights;
// and every grid against the 1-rank run. Built twice: against the float64 stack (halo3d_nn_fp64),
// where every comparison holds at the tolerances (1e-4 against PyTorch, 1e-5 between
// grids), and against the float32 stack, with the tolerances float32 reaches (see kTol): the first
// convolution's weight gradient is a difference of large sums (the input has mean 2), and Adam's
// first steps move every weight by about lr whatever the gradient's size, so elements with tiny
// gradients carry float32 rounding into the final weights.
#include <gtest/gtest.h>
#include <mpi.h>

#include "ReferenceHarness.hpp"
#include "halo3d/nn/Init.hpp"
#include "halo3d/nn/Loss.hpp"
#include "halo3d/nn/Optimizer.hpp"
#include "halo3d/nn/models/CosmoFlow.hpp"

namespace halo3d::nn {
namespace {

using halo3d::testing::H5File;
using halo3d::testing::referencePath;
using namespace nn::testing;

struct Tolerances {
  double output, grad, loss, final_weights;  // against PyTorch (float64)
  double grid_grad, grid_loss, grid_final;   // grid against the 1-rank run
};
constexpr bool kDouble = sizeof(real) == sizeof(double);
constexpr Tolerances kTol = kDouble ? Tolerances{1e-4, 1e-4, 1e-4, 1e-4, 1e-5, 1e-5, 1e-5}
                                    : Tolerances{1e-4, 2e-3, 1e-4, 3e-3, 1e-5, 1e-5, 3e-4};

// The grids a job of `ranks` ranks runs (grids of fewer ranks run on the first ranks, see onGrid):
// every split of one dimension in two, the paper's depth-only splits (1x4x1x1, 1x8x1x1) and their H
// and W twins, which leave blocks of one plane and replicate mid-network, uneven splits into 3 and
// 5, and mixed data x spatial.
std::vector<GridShape> gridsFor(int ranks) {
  switch (ranks) {
    case 1:
      return {GridShape(1, 1, 1, 1)};
    case 2:
      return {GridShape(1, 2, 1, 1), GridShape(1, 1, 2, 1), GridShape(1, 1, 1, 2),
              GridShape(2, 1, 1, 1)};
    case 4:
      return {GridShape(1, 2, 2, 1), GridShape(2, 2, 1, 1), GridShape(1, 4, 1, 1),
              GridShape(1, 1, 4, 1), GridShape(1, 3, 1, 1), GridShape(1, 1, 1, 3)};
    case 8:
      return {GridShape(1, 2, 2, 2), GridShape(1, 8, 1, 1), GridShape(1, 1, 1, 8),
              GridShape(2, 4, 1, 1), GridShape(1, 1, 5, 1), GridShape(2, 3, 1, 1)};
  }
  return {};
}

struct RunResult : StepResults {
  std::vector<double> output;  // this rank's samples (N_local x 4)
  index_t sample_begin = 0;
};

// Runs step 0 and the three Adam steps of `file` on `grid`.
RunResult run(const std::string& file, const ProcessGrid& grid) {
  H5File f(referencePath(file));
  const auto config = f.jsonAttribute("/", "config");
  CosmoFlowConfig c;
  c.input_size = config["input_size"];
  c.width = config["width"];
  c.batchnorm = config["batchnorm"];
  c.bn_group = StatsGroup::Global;  // PyTorch normalises over the whole mini-batch
  auto model = makeCosmoFlow(c);
  if (kDouble) {
    // The float64 stack runs fp32 only (Precision.hpp), and says so before allocating.
    EXPECT_THROW(model->build(grid, config["batch"], 0, Precision::bf16), InputError);
    EXPECT_FALSE(model->built());
  }
  model->build(grid, config["batch"]);
  importStateDict(model->parameters(), readStateDictFile(referencePath(file), "/initial"),
                  file + ":/initial");

  scatterGlobal(readGlobal(f, "batch/x", grid.isRoot()), model->input().tensor, grid);
  const halo3d::testing::Array target = f.read("batch/target");
  const TensorBlock& ob = model->output().tensor.block();
  std::vector<float> targets;
  for (index_t n = ob.sampleBegin(); n < ob.sampleEnd(); ++n)
    for (index_t k = 0; k < 4; ++k)
      targets.push_back(float(target.data[std::size_t(n * 4 + k)]));

  OptimizerConfig oc;
  oc.kind = config["optimizer"];
  oc.lr = config["lr"];
  oc.beta1 = config["betas"][0];
  oc.beta2 = config["betas"][1];
  oc.eps = config["eps"];
  RunResult r;
  trainSteps(*model, grid, oc, 3, MseLoss(), targets, r, [&] {
    r.output = ownedValues(model->output());
    r.sample_begin = ob.sampleBegin();
  });
  return r;
}

class CosmoFlowReference : public ::testing::TestWithParam<const char*> {};

TEST_P(CosmoFlowReference, MatchesPyTorchAndTheOneRankRunOnEveryGrid) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string file = GetParam();
  H5File f(referencePath(file));
  // The 1-rank run, on every rank at once (over MPI_COMM_SELF).
  ProcessGrid self(MPI_COMM_SELF, GridShape(1, 1, 1, 1));
  const RunResult single = run(file, self);
  for (const GridShape& shape : gridsFor(size)) {
    SCOPED_TRACE(file + " on grid " + shape.str());
    onGrid(shape, [&](const ProcessGrid& grid) {
      const RunResult r = run(file, grid);
      // Output of this rank's samples (the head is replicated over the spatial group).
      std::vector<double> ref_out;
      const halo3d::testing::Array out = f.read("step0/output");
      for (std::size_t i = 0; i < r.output.size(); ++i)
        ref_out.push_back(out.data[std::size_t(r.sample_begin) * 4 + i]);
      EXPECT_LE(relativeError(r.output, ref_out), kTol.output) << "step-0 output";
      expectStepsMatch(r, single, f, kTol);
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Models, CosmoFlowReference,
                         ::testing::Values("cosmoflow_mini.h5", "cosmoflow_mini_bn.h5"),
                         [](const auto& info) {
                           return std::string(info.param).find("_bn") != std::string::npos
                                      ? "batchnorm"
                                      : "plain";
                         });

}  // namespace
}  // namespace halo3d::nn
