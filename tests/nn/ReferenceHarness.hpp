#pragma once
// Running a model of the reference files (tests/reference/README.md) on a grid: load the initial
// weights and the batch, run steps, and compare tensors with the PyTorch values.

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "halo3d/comm/Distribute.hpp"
#include "halo3d/nn/GradientReducer.hpp"
#include "halo3d/nn/Model.hpp"
#include "halo3d/nn/Optimizer.hpp"
#include "halo3d/nn/PrecisionBridge.hpp"
#include "halo3d/nn/StateDict.hpp"
#include "support/ReferenceData.hpp"

namespace halo3d::nn::testing {

// Runs fn(grid) for a grid on the first shape.size() ranks of MPI_COMM_WORLD; the other ranks skip
// it. This is how a 4-rank job also covers 3-block grids and an 8-rank job 5- and 6-rank grids
// (uneven splits, more than two blocks along a dimension) without more CTest registrations.
template <class F>
void onGrid(const GridShape& shape, F&& fn) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank < shape.size() ? 0 : MPI_UNDEFINED, rank, &sub);
  if (sub == MPI_COMM_NULL) return;
  {
    ProcessGrid grid(sub, shape);  // keeps its own duplicate
    fn(grid);
  }
  MPI_Comm_free(&sub);
}

// max |ours - ref| / max |ref|: the error relative to the tensor's scale.
inline double relativeError(const std::vector<double>& ours, const std::vector<double>& ref) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    diff = std::max(diff, std::abs(ours[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

// The global batch tensor of a reference file, on the root only (empty elsewhere), as T.
template <class T = real>
GlobalHostTensor<T> readGlobal(const halo3d::testing::H5File& f, const std::string& name,
                               bool root) {
  if (!root) return {};
  const halo3d::testing::Array a = f.read(name);
  std::vector<index_t> s = a.shape;
  while (s.size() < 5)
    s.insert(s.begin() + 1, 1);  // (N, D, H, W) labels -> (N, 1, D, H, W)
  GlobalHostTensor<T> g("reference", s[0], s[1], s[2], s[3], s[4]);
  for (std::size_t i = 0; i < a.data.size(); ++i)
    g.data()[i] = T(a.data[i]);
  return g;
}

// Values of a parameter (or, with `grads`, its gradient) on the host.
inline std::vector<double> hostValues(const Parameter& p, bool grads) {
  auto v = grads ? p.grad() : p.value();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<double>(h.data(), h.data() + h.size());
}

// The owned cells of an activation (either precision) on the host, in (n, c, d, h, w) order.
inline std::vector<double> ownedValues(const Activation& a) {
  auto o = floatCopyOf(a).owned();
  auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), o);
  Kokkos::deep_copy(h, o);
  std::vector<double> out;
  for (std::size_t n = 0; n < h.extent(0); ++n)
    for (std::size_t c = 0; c < h.extent(1); ++c)
      for (std::size_t d = 0; d < h.extent(2); ++d)
        for (std::size_t y = 0; y < h.extent(3); ++y)
          for (std::size_t x = 0; x < h.extent(4); ++x)
            out.push_back(h(n, c, d, y, x));
  return out;
}

// The part of a global reference array (N, ...) holding samples [n0, n1) and, for spatial tensors,
// the box.
inline std::vector<double> referenceBlock(const halo3d::testing::Array& a, const TensorBlock& b) {
  std::vector<index_t> s = a.shape;
  while (s.size() < 5)
    s.push_back(1);
  std::vector<double> out;
  const Box& o = b.owned();
  for (index_t n = b.sampleBegin(); n < b.sampleEnd(); ++n)
    for (index_t c = 0; c < s[1]; ++c)
      for (index_t d = o.min(0); d < o.max(0); ++d)
        for (index_t y = o.min(1); y < o.max(1); ++y)
          for (index_t x = o.min(2); x < o.max(2); ++x)
            out.push_back(a.data[std::size_t((((n * s[1] + c) * s[2] + d) * s[3] + y) * s[4] + x)]);
  return out;
}

// What a reference run records besides the model output, compared with PyTorch and with the 1-rank
// run.
struct StepResults {
  std::map<std::string, std::vector<double>> grads;  // step 0, after the allreduce
  std::vector<double> losses;
  std::map<std::string, std::vector<double>> final_values;
};

// Trains `model` on `grid` for `steps` steps of the optimizer `oc` describes, with `loss` against
// `target`, recording into r; recordOutput() runs after step 0's loss, on the step-0 output.
template <class Loss, class Target, class RecordOutput>
void trainSteps(Model& model, const ProcessGrid& grid, const OptimizerConfig& oc, int steps,
                Loss loss, const Target& target, StepResults& r, const RecordOutput& recordOutput) {
  auto opt = makeOptimizer(model.parameters(), oc);
  GradientReducer reducer(grid.comm(), model.parameters());
  RunContext ctx;
  ctx.grid = &grid;
  ctx.reducer = &reducer;
  for (int step = 0; step < steps; ++step) {
    ctx.step = step;
    model.forward(ctx);
    r.losses.push_back(loss.compute(grid, model.output(), target, &model.outputGradient()));
    if (step == 0) recordOutput();
    model.backward(ctx);
    if (step == 0)
      for (Parameter* p : model.parameters().trainable())
        r.grads[p->name()] = hostValues(*p, true);
    opt->step(oc.lr);
  }
  Kokkos::fence();
  for (const Parameter* p : model.parameters().all())
    r.final_values[p->name()] = hostValues(*p, false);
}

// The gradients, losses and final values of a run on a grid against PyTorch (the reference file
// f) and against the 1-rank run `single`, at the tolerances tol.grad, loss, final_weights and
// grid_grad, grid_loss, grid_final.
template <class Tolerances>
void expectStepsMatch(const StepResults& r, const StepResults& single,
                      const halo3d::testing::H5File& f, const Tolerances& tol) {
  for (const auto& [name, g] : r.grads) {
    EXPECT_LE(relativeError(g, f.read("step0/grad/" + name).data), tol.grad)
        << "gradient of " << name;
    EXPECT_LE(relativeError(g, single.grads.at(name)), tol.grid_grad)
        << "gradient of " << name << " vs 1 rank";
  }
  const halo3d::testing::Array ref_losses = f.read("losses");
  ASSERT_EQ(r.losses.size(), ref_losses.size());
  for (std::size_t s = 0; s < ref_losses.size(); ++s) {
    EXPECT_NEAR(r.losses[s], ref_losses.data[s], tol.loss * std::abs(ref_losses.data[s]))
        << "loss of step " << s;
    EXPECT_NEAR(r.losses[s], single.losses[s], tol.grid_loss * std::abs(single.losses[s]))
        << "loss of step " << s << " vs 1 rank";
  }
  for (const auto& [name, v] : r.final_values) {
    EXPECT_LE(relativeError(v, f.read("final/" + name).data), tol.final_weights)
        << "final " << name;
    EXPECT_LE(relativeError(v, single.final_values.at(name)), tol.grid_final)
        << "final " << name << " vs 1 rank";
  }
}

}  // namespace halo3d::nn::testing
