#pragma once
// The plan of a model for a process grid and a global batch, as data: every tensor's shape,
// distribution and ghost widths, where the planner replicates a Spatial tensor over the spatial
// group, and the block each rank holds. Pure functions of the layers' planning rules (outputSpec,
// acceptsSpatial, inputHalo): no MPI and no allocation, so a laptop can plan a 2,048-rank run.
// Model::build materialises a plan; the memory and step-time models (nn/plan/) read it.
//
// The rules, in order:
//   1. output specs, layer by layer; where a layer cannot run on a Spatial input (the volume is
//      too small to split over the spatial group, or the layer needs whole volumes, like Flatten),
//      a replication node is inserted before it (one per source tensor, shared by its consumers);
//   2. the ghost widths of each tensor: the most any consumer reads (for a Replicated tensor, the
//      padding its consumers read past the volume, as if the spatial group were one block);
//   3. every rank's block of every tensor must exist and be at least as thick as the ghosts it
//      feeds its neighbours (ShapeError naming the layer otherwise).

#include <array>
#include <string>
#include <vector>

#include "halo3d/core/GridShape.hpp"
#include "halo3d/core/TensorBlock.hpp"
#include "halo3d/nn/Activation.hpp"

namespace halo3d::nn {

class Layer;

// A node of the model graph as declared: its layer (null for the input node, 0) and the nodes it
// consumes (all earlier).
struct GraphNode {
  const Layer* layer = nullptr;
  std::vector<int> inputs;
};

struct PlanNode {
  std::string name;  // the layer's name, "input", or "<source>.replicate"
  std::string kind;  // the layer's kind(), "Input" or "Redistribute(spatial->replicated)"
  const Layer* layer = nullptr;  // null for the input and for inserted replications
  int replicates = -1;           // for an inserted replication: the node it replicates
  std::vector<int> inputs;       // after replication
  std::vector<int> input_part;   // per input: which of the source's gradient parts this node writes
  std::vector<int> consumers;
  TensorSpec spec;
  HaloWidths halo;

  // Tensors of this node's shape a rank holds: the activation, its gradient (none for the input),
  // and one gradient part per consumer when there are several.
  int copies(int id) const {
    return id == 0 ? 1 : 2 + (consumers.size() > 1 ? int(consumers.size()) : 0);
  }
};

class ModelPlan {
 public:
  // Plans `graph` (node 0 the input, of per-sample shape (C, D, H, W)) for `grid` and the global
  // mini-batch `batch`. Throws InputError if the batch is smaller than the sample groups, and
  // ShapeError naming the layer, its output and the grid if a shape cannot work.
  ModelPlan(const std::vector<GraphNode>& graph, const std::array<index_t, 4>& sample_shape,
            const GridShape& grid, index_t batch);

  const GridShape& grid() const { return _grid; }
  index_t batch() const { return _batch; }
  // Every node: the declared ones first (same ids as the graph), then the inserted replications.
  const std::vector<PlanNode>& nodes() const { return _nodes; }
  const PlanNode& node(int id) const { return _nodes.at(std::size_t(id)); }
  // Node ids in execution order.
  const std::vector<int>& order() const { return _order; }

  // The block that the rank at `coords` holds of node `id`'s tensor.
  TensorBlock block(int id, const GridCoords& coords) const;
  // Bytes that rank `coords` holds of node `id` (every copy), for elements of `element_bytes`.
  std::size_t bytes(int id, const GridCoords& coords, std::size_t element_bytes) const;
  // Bytes rank `coords` holds of every node.
  std::size_t totalBytes(const GridCoords& coords, std::size_t element_bytes) const;
  // The `count` nodes of which rank `coords` holds the most, for messages: "'features.0' (1, 16,
  // 512, 512, 512) 16.0 GiB, ...".
  std::string largestTensors(const GridCoords& coords, std::size_t element_bytes, int count) const;
  // Ranks whose blocks and neighbourhoods stand for all: along every split dimension the first
  // position (the largest blocks), a middle one (the most neighbours) and the last (the smallest
  // blocks), crossed. At most 81 ranks, whatever the grid's size.
  std::vector<GridCoords> representativeRanks() const;
  // The coordinates of the rank with the largest blocks: the first part of every split owns the
  // most cells (BlockDecomposition), so rank 0 has the most of every tensor.
  static GridCoords largestRank() { return GridCoords{}; }

 private:
  int replicationOf(int id);

  GridShape _grid;
  index_t _batch = 0;
  std::vector<PlanNode> _nodes;
  std::vector<int> _order;
  std::vector<int> _replica_of;
};

}  // namespace halo3d::nn
