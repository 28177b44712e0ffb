#include "halo3d/nn/plan/ModelPlan.hpp"

#include <algorithm>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/MemoryInfo.hpp"
#include "halo3d/nn/Layer.hpp"

namespace halo3d::nn {

ModelPlan::ModelPlan(const std::vector<GraphNode>& graph,
                     const std::array<index_t, 4>& sample_shape, const GridShape& grid,
                     index_t batch)
    : _grid(grid), _batch(batch) {
  require(graph.size() >= 2, "the model has no layers");
  require<InputError>(batch >= grid.n(), "global batch ", batch, " is smaller than the ", grid.n(),
                      " sample groups of grid ", grid.str(),
                      " (every sample group needs a sample)");
  const std::size_t declared = graph.size();
  _nodes.resize(declared);
  _replica_of.assign(declared, -1);
  PlanNode& in = _nodes[0];
  in.name = "input";
  in.kind = "Input";
  in.spec.shape = {batch, sample_shape[0], sample_shape[1], sample_shape[2], sample_shape[3]};
  in.spec.dist = Distribution::Spatial;
  _order = {0};

  // 1. Specs, replicating inputs a layer cannot take split.
  for (std::size_t id = 1; id < declared; ++id) {
    const Layer& layer = *graph[id].layer;
    std::vector<int> inputs = graph[id].inputs;
    std::vector<TensorSpec> specs;
    bool any_replicated = false;
    for (int i : inputs) {
      specs.push_back(node(i).spec);
      any_replicated |= node(i).spec.dist == Distribution::Replicated;
    }
    if (any_replicated || !layer.acceptsSpatial(specs, grid)) {
      specs.clear();
      for (int& i : inputs) {
        if (node(i).spec.dist == Distribution::Spatial) i = replicationOf(i);
        specs.push_back(node(i).spec);
      }
    }
    PlanNode& n = _nodes[id];
    n.name = layer.name();
    n.kind = layer.kind();
    n.layer = &layer;
    n.inputs = inputs;
    n.spec = layer.outputSpec(specs);
    _order.push_back(int(id));
  }
  // 2. Ghost widths: the most any consumer reads. A Replicated tensor is whole on every rank, as
  //    if the spatial group were one block, but a padded window still reads past the volume: its
  //    ghosts are that zero padding, so it gets the widths of an unsplit volume.
  const GridShape unsplit(grid.n(), 1, 1, 1);
  for (int id : _order) {
    PlanNode& n = _nodes[std::size_t(id)];
    if (id == 0) continue;
    std::vector<TensorSpec> specs;
    for (int i : n.inputs)
      specs.push_back(node(i).spec);
    for (std::size_t j = 0; j < n.inputs.size(); ++j) {
      PlanNode& src = _nodes[std::size_t(n.inputs[j])];
      n.input_part.push_back(int(src.consumers.size()));
      src.consumers.push_back(id);
      // An inserted replication reads its source's owned cells only.
      if (!n.layer) continue;
      const bool spatial = src.spec.dist == Distribution::Spatial;
      src.halo = max(src.halo, n.layer->inputHalo(specs, int(j), spatial ? grid : unsplit));
    }
  }
  // 3. Every rank's blocks: the first part of each split is the largest, the last the smallest
  //    (BlockDecomposition), so those two ranks cover every failure.
  const GridCoords last{grid.n() - 1, grid.d() - 1, grid.h() - 1, grid.w() - 1};
  for (int id : _order) {
    const PlanNode& n = node(id);
    try {
      block(id, largestRank());
      block(id, last);
    } catch (const ShapeError& e) {
      throw ShapeError(concat("layer '", n.name, "' output ", n.spec.shape, " (",
                              toString(n.spec.dist), ") on grid ", grid.str(), ": ", e.what()));
    }
  }
}

int ModelPlan::replicationOf(int id) {
  if (_replica_of[std::size_t(id)] >= 0) return _replica_of[std::size_t(id)];
  PlanNode r;
  r.name = node(id).name + ".replicate";
  r.kind = "Redistribute(spatial->replicated)";
  r.replicates = id;
  r.inputs = {id};
  r.spec = node(id).spec;
  r.spec.dist = Distribution::Replicated;
  _nodes.push_back(std::move(r));
  const int rid = int(_nodes.size()) - 1;
  _replica_of.resize(_nodes.size(), -1);
  _replica_of[std::size_t(id)] = rid;
  _order.push_back(rid);
  return rid;
}

TensorBlock ModelPlan::block(int id, const GridCoords& coords) const {
  const PlanNode& n = node(id);
  return blockFor(n.spec, _grid, coords, n.halo);
}

std::size_t ModelPlan::bytes(int id, const GridCoords& coords, std::size_t element_bytes) const {
  const Shape5 e = block(id, coords).allocationExtents();
  return std::size_t(node(id).copies(id)) * element_bytes *
         std::size_t(e[0] * e[1] * e[2] * e[3] * e[4]);
}

std::size_t ModelPlan::totalBytes(const GridCoords& coords, std::size_t element_bytes) const {
  std::size_t total = 0;
  for (int id : _order)
    total += bytes(id, coords, element_bytes);
  return total;
}

std::string ModelPlan::largestTensors(const GridCoords& coords, std::size_t element_bytes,
                                      int count) const {
  std::vector<int> ids = _order;
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) {
    return bytes(a, coords, element_bytes) > bytes(b, coords, element_bytes);
  });
  std::string out;
  for (std::size_t i = 0; i < std::min(ids.size(), std::size_t(count)); ++i) {
    const PlanNode& n = node(ids[i]);
    out += concat(i ? ", " : "", "'", n.name, "' ", n.spec.shape, " ",
                  formatBytes(double(bytes(ids[i], coords, element_bytes))));
  }
  return out;
}

std::vector<GridCoords> ModelPlan::representativeRanks() const {
  const auto positions = [](int parts) {
    std::vector<int> p{0};
    if (parts > 2) p.push_back(parts / 2);
    if (parts > 1) p.push_back(parts - 1);
    return p;
  };
  std::vector<GridCoords> out;
  for (int n : positions(_grid.n()))
    for (int d : positions(_grid.d()))
      for (int h : positions(_grid.h()))
        for (int w : positions(_grid.w()))
          out.push_back(GridCoords{n, d, h, w});
  return out;
}

}  // namespace halo3d::nn
