#pragma once
// The model graph: a network input and layers in execution order, each consuming earlier nodes (so
// skip connections are plain extra inputs). plan() computes every tensor's shape, distribution and
// ghost widths for a grid and a global batch, without MPI (nn/plan/ModelPlan.hpp has the rules);
// build() materialises that plan on a ProcessGrid: it inserts the Redistribute layers the plan
// asks for, checks the memory of this rank's activations and gradients against the limit before
// anything is allocated, then allocates them with identical blocks. forward() runs the nodes in
// order; backward() in reverse, summing the gradients of tensors with several consumers.
//
// The run's precision (nn/Precision.hpp) is a build() argument: in bf16 every activation and
// gradient the model allocates (the input included) holds bf16, and the memory check and
// summary price them at 2 bytes; parameters stay float. A data loader stores its float batch into
// input() with storeBox() (nn/PrecisionBridge.hpp), which rounds it in bf16 runs.

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "halo3d/nn/Layer.hpp"
#include "halo3d/nn/plan/ModelPlan.hpp"

namespace halo3d::nn {

class Model {
 public:
  // A model over `store` (a fresh one by default; pass another model's store to share its
  // parameters).
  explicit Model(std::shared_ptr<ParameterStore> store = std::make_shared<ParameterStore>())
      : _params(std::move(store)) {}

  // The network input: per-sample shape (C, D, H, W). Returns its node id (0).
  int input(const std::array<index_t, 4>& sample_shape);
  // Appends `layer` consuming nodes `inputs` (all earlier); registers its parameters. Returns its
  // node id.
  int add(std::unique_ptr<Layer> layer, std::vector<int> inputs);
  // Appends `layer` consuming the last node.
  int add(std::unique_ptr<Layer> layer) { return add(std::move(layer), {int(_nodes.size()) - 1}); }

  ParameterStore& parameters() { return *_params; }
  const ParameterStore& parameters() const { return *_params; }
  const std::shared_ptr<ParameterStore>& sharedParameters() const { return _params; }

  // The plan for global mini-batch `batch` on a grid of shape `grid` (no MPI, no allocation).
  // Throws like build().
  ModelPlan plan(const GridShape& grid, index_t batch) const;
  // Plans and allocates everything for global mini-batch `batch` on `grid` (see the file comment).
  // Collective over the grid. Before allocating, checks that this rank's activations and gradients
  // fit in `memory_limit` bytes (0: what the memory space can still allocate, shared by the ranks
  // of the node). Throws ShapeError naming the layer if a shape cannot work, InputError if the
  // batch is smaller than the number of sample groups, ResourceError (on every rank) naming the
  // bytes needed, the limit and the largest tensors if some rank's plan does not fit.
  // `precision`: the activations' (InputError if this library cannot run it, see Precision.hpp).
  void build(const ProcessGrid& grid, index_t batch, std::size_t memory_limit = 0,
             Precision precision = Precision::fp32);
  Precision precision() const { return _precision; }
  // Bytes of one activation element of this model (known after build()).
  std::size_t activationElementBytes() const { return nn::activationElementBytes(_precision); }
  bool built() const { return _grid != nullptr; }
  index_t batch() const { return _plan ? _plan->batch() : 0; }
  // The plan build() materialised.
  const ModelPlan& builtPlan() const;

  Activation& input() { return node(0).act; }
  const Activation& output() const { return _nodes.at(std::size_t(_plan->order().back())).act; }
  // The gradient of the loss w.r.t. the output, filled by the caller (the loss) before backward().
  Activation& outputGradient() { return node(_plan->order().back()).grad; }

  void forward(RunContext& ctx);
  void backward(RunContext& ctx);

  // The output activation and its gradient of the layer called `name` (throws InputError if none).
  const Activation& activation(const std::string& name) const;
  const Activation& gradient(const std::string& name) const;

  // One line per node: name, kind, output shape, distribution, ghost widths, and this rank's bytes
  // of the node's activation and gradients; then the total.
  std::string summary() const;
  // This rank's bytes of every activation and gradient of the plan (known after build()).
  std::size_t activationBytes() const;
  // The layer of declared node `id` (null for the input): tools that run layers alone
  // (calibration) take them from here; plans of this model name the same layers.
  Layer* declaredLayer(int id) { return _nodes.at(std::size_t(id)).layer.get(); }
  // The layers in execution order (including inserted Redistribute nodes).
  std::vector<const Layer*> layers() const;

 private:
  // What a node holds at run time; its shape, inputs and consumers are in the plan (same id).
  struct Node {
    std::unique_ptr<Layer> layer;  // null for the input
    Activation act, grad;
    std::vector<Activation> grad_parts;  // one per consumer when there are several
  };
  Node& node(int id) { return _nodes.at(std::size_t(id)); }
  // The activations node `id` reads, in the order of its inputs.
  std::vector<const Activation*> inputsOf(int id);
  int named(const std::string& name) const;
  std::vector<GraphNode> graph() const;
  void checkMemory(const ProcessGrid& grid, std::size_t memory_limit) const;

  std::array<index_t, 4> _sample_shape{0, 0, 0, 0};
  std::vector<Node> _nodes;
  std::vector<std::vector<int>> _inputs;  // as declared, per declared node
  std::optional<ModelPlan> _plan;
  std::shared_ptr<ParameterStore> _params;
  const ProcessGrid* _grid = nullptr;
  Precision _precision = Precision::fp32;
};

}  // namespace halo3d::nn
