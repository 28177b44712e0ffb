#pragma once
// The model graph: a network input and layers in execution order, each consuming earlier nodes (so
// skip connections are plain extra inputs). build() plans every tensor for a grid and a global
// batch:
//   1. output specs, layer by layer; where a layer cannot run on a Spatial input (the volume is
//      too small to split over the spatial group, or the layer needs whole volumes, like
//      Flatten), a Redistribute node is inserted that replicates the input over the spatial
//      group (the rule is Layer::acceptsSpatial);
//   2. the ghost widths of each tensor: the maximum over its consumers' needs (for a Replicated
//      tensor, the padding its consumers read past the volume);
//   3. the memory of every activation and gradient on this rank, checked against the limit
//      before anything is allocated;
//   4. the activations and their gradients, with identical blocks.
// forward() runs the nodes in order; backward() in reverse, summing the gradients of tensors with
// several consumers.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "halo3d/nn/Layer.hpp"

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

  // Plans and allocates everything for global mini-batch `batch` on `grid` (see the file comment).
  // Collective over the grid. Before allocating, checks that this rank's activations and gradients
  // fit in `memory_limit` bytes (0: what the memory space can still allocate, shared by the ranks
  // of the node). Throws ShapeError naming the layer if a shape cannot work, InputError if the
  // batch is smaller than the number of sample groups, ResourceError (on every rank) naming the
  // bytes needed, the limit and the largest tensors if some rank's plan does not fit.
  void build(const ProcessGrid& grid, index_t batch, std::size_t memory_limit = 0);
  bool built() const { return _grid != nullptr; }
  index_t batch() const { return _batch; }

  Activation& input() { return node(0).act; }
  const Activation& output() const { return _nodes.at(_order.back()).act; }
  // The gradient of the loss w.r.t. the output, filled by the caller (the loss) before backward().
  Activation& outputGradient() { return _nodes.at(_order.back()).grad; }

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
  // The layers in execution order (including inserted Redistribute nodes).
  std::vector<const Layer*> layers() const;

 private:
  struct Node {
    std::unique_ptr<Layer> layer;  // null for the input
    std::vector<int> inputs;       // after conversion
    std::vector<int> input_part;   // per input: which of the source's grad_parts this node writes
    TensorSpec spec;
    HaloWidths halo;
    Activation act, grad;
    std::vector<int> consumers;
    std::vector<Activation> grad_parts;  // one per consumer when there are several
    std::size_t bytes = 0;               // this rank's act + grad + grad_parts
  };
  Node& node(int id) { return _nodes.at(std::size_t(id)); }
  const Node& named(const std::string& name) const;
  int replicated(int id);
  void planMemory(const ProcessGrid& grid, std::size_t memory_limit);

  std::vector<Node> _nodes;
  std::vector<int> _order;  // execution order of node ids
  std::vector<int> _replica_of;
  std::shared_ptr<ParameterStore> _params;
  const ProcessGrid* _grid = nullptr;
  index_t _batch = 0;
};

}  // namespace halo3d::nn
