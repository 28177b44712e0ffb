#include "halo3d/nn/Model.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "halo3d/comm/Communicator.hpp"
#include "halo3d/core/Activity.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/MemoryInfo.hpp"
#include "halo3d/io/Collective.hpp"
#include "halo3d/kernels/Elementwise.hpp"
#include "halo3d/nn/layers/Redistribute.hpp"

namespace halo3d::nn {

int Model::input(const std::array<index_t, 4>& sample_shape) {
  require(_nodes.empty(), "Model::input() must come first");
  for (index_t e : sample_shape)
    require<ShapeError>(e > 0, "model input shape ", sample_shape, " must be positive");
  Node n;
  n.spec.shape = {0, sample_shape[0], sample_shape[1], sample_shape[2], sample_shape[3]};
  _nodes.push_back(std::move(n));
  return 0;
}

int Model::add(std::unique_ptr<Layer> layer, std::vector<int> inputs) {
  require(!_nodes.empty(), "Model::add('", layer->name(), "') before Model::input()");
  require(!built(), "Model::add('", layer->name(), "') after build()");
  for (int i : inputs)
    require(i >= 0 && i < int(_nodes.size()), "layer '", layer->name(), "' consumes node ", i,
            ", which does not exist yet");
  layer->addParameters(*_params);
  Node n;
  n.layer = std::move(layer);
  n.inputs = std::move(inputs);
  _nodes.push_back(std::move(n));
  return int(_nodes.size()) - 1;
}

int Model::replicated(int id) {
  if (_replica_of[std::size_t(id)] >= 0) return _replica_of[std::size_t(id)];
  Node n;
  n.layer = std::make_unique<Redistribute>(node(id).layer ? node(id).layer->name() + ".replicate"
                                                          : "input.replicate");
  n.inputs = {id};
  n.spec = n.layer->outputSpec({node(id).spec});
  _nodes.push_back(std::move(n));
  const int rid = int(_nodes.size()) - 1;
  _replica_of.resize(_nodes.size(), -1);
  _replica_of[std::size_t(id)] = rid;
  _order.push_back(rid);
  return rid;
}

void Model::build(const ProcessGrid& grid, index_t batch, std::size_t memory_limit) {
  require(!built(), "Model::build() called twice");
  require(_nodes.size() >= 2, "the model has no layers");
  require<InputError>(batch >= grid.shape().n(), "global batch ", batch, " is smaller than the ",
                      grid.shape().n(), " sample groups of grid ", grid.shape().str(),
                      " (every sample group needs a sample)");
  if (!_params->finalized()) _params->finalize();
  _batch = batch;
  const GridShape& gs = grid.shape();
  const std::size_t declared = _nodes.size();
  _replica_of.assign(_nodes.size(), -1);
  _order = {0};
  node(0).spec.shape[0] = batch;
  node(0).spec.dist = Distribution::Spatial;

  // 1. Specs, replicating inputs a layer cannot take split.
  for (std::size_t id = 1; id < declared; ++id) {
    Node& n = _nodes[id];
    std::vector<TensorSpec> specs;
    for (int i : n.inputs)
      specs.push_back(node(i).spec);
    bool any_replicated = false;
    for (const TensorSpec& s : specs)
      any_replicated |= s.dist == Distribution::Replicated;
    const bool spatial_ok = !any_replicated && n.layer->acceptsSpatial(specs, gs);
    if (!spatial_ok) {
      std::vector<int> inputs = n.inputs;  // replicated() grows _nodes: no references across it
      for (int& i : inputs)
        if (node(i).spec.dist == Distribution::Spatial) i = replicated(i);
      _nodes[id].inputs = inputs;
      specs.clear();
      for (int i : inputs)
        specs.push_back(node(i).spec);
    }
    Node& m = _nodes[id];
    m.spec = m.layer->outputSpec(specs);
    _order.push_back(int(id));
  }
  // 2. Ghost widths: the most any consumer reads. A Replicated tensor is whole on every rank, as
  //    if the spatial group were one block, but a padded window still reads past the volume: its
  //    ghosts are that zero padding, so it gets the widths of an unsplit volume.
  const GridShape unsplit(gs.n(), 1, 1, 1);
  for (int id : _order) {
    Node& n = node(id);
    if (!n.layer) continue;
    std::vector<TensorSpec> specs;
    for (int i : n.inputs)
      specs.push_back(node(i).spec);
    for (std::size_t j = 0; j < n.inputs.size(); ++j) {
      Node& src = node(n.inputs[j]);
      n.input_part.push_back(int(src.consumers.size()));
      src.consumers.push_back(id);
      const bool spatial = src.spec.dist == Distribution::Spatial;
      src.halo = max(src.halo, n.layer->inputHalo(specs, int(j), spatial ? gs : unsplit));
    }
  }
  // 3. Memory, before the first allocation.
  planMemory(grid, memory_limit);
  // 4. Activations and gradients.
  _grid = &grid;
  for (int id : _order) {
    Node& n = node(id);
    const std::string label = n.layer ? n.layer->name() : std::string("input");
    try {
      n.act = makeActivation(label, n.spec, grid, n.halo);
      if (id != 0) n.grad = makeActivation(label + ".grad", n.spec, grid, n.halo);
      if (id != 0 && n.consumers.size() > 1)
        for (std::size_t c = 0; c < n.consumers.size(); ++c)
          n.grad_parts.push_back(
              makeActivation(label + ".grad" + std::to_string(c), n.spec, grid, n.halo));
    } catch (const ShapeError& e) {
      _grid = nullptr;
      throw ShapeError(concat("layer '", label, "' output ", n.spec.shape, " (",
                              toString(n.spec.dist), ") on grid ", gs.str(), ": ", e.what()));
    }
  }
  for (int id : _order) {
    Node& n = node(id);
    if (!n.layer) continue;
    std::vector<const Activation*> in;
    for (int i : n.inputs)
      in.push_back(&node(i).act);
    n.layer->setup(grid, in, n.act);
  }
}

void Model::forward(RunContext& ctx) {
  require(built(), "Model::forward() before build()");
  for (int id : _order) {
    Node& n = node(id);
    if (!n.layer) continue;
    const ScopedActivity activity(n.layer->name() + " forward");
    std::vector<const Activation*> in;
    for (int i : n.inputs)
      in.push_back(&node(i).act);
    n.layer->forward(ctx, in, n.act);
  }
}

void Model::backward(RunContext& ctx) {
  require(built(), "Model::backward() before build()");
  if (ctx.reducer) ctx.reducer->begin();
  for (auto it = _order.rbegin(); it != _order.rend(); ++it) {
    Node& n = node(*it);
    if (!n.layer) continue;
    const ScopedActivity activity(n.layer->name() + " backward");
    if (n.grad_parts.size() > 1) {
      // The gradient of a tensor read by several layers is the sum of what each sends back.
      const Box& box = n.grad.owned();
      kernels::copy(n.grad_parts[0].tensor, n.grad.tensor, box);
      for (std::size_t c = 1; c < n.grad_parts.size(); ++c)
        kernels::add(n.grad.tensor, n.grad_parts[c].tensor, n.grad.tensor, box);
    }
    std::vector<const Activation*> in;
    std::vector<Activation*> din;
    for (std::size_t j = 0; j < n.inputs.size(); ++j) {
      const int i = n.inputs[j];
      Node& src = node(i);
      in.push_back(&src.act);
      if (i == 0)
        din.push_back(nullptr);  // no gradient for the data
      else if (src.grad_parts.empty())
        din.push_back(&src.grad);
      else
        din.push_back(&src.grad_parts[std::size_t(n.input_part[j])]);
    }
    n.layer->backward(ctx, in, n.act, n.grad, din);
  }
  if (ctx.reducer) {
    ScopedTimer timer(ctx.timers, "allreduce", Phase::Allreduce);
    ctx.reducer->finish();
  }
}

void Model::planMemory(const ProcessGrid& grid, std::size_t memory_limit) {
  const GridShape& gs = grid.shape();
  std::size_t total = 0;
  for (int id : _order) {
    Node& n = node(id);
    const std::string label = n.layer ? n.layer->name() : std::string("input");
    // The activation, its gradient (not for the input), and one gradient part per consumer when
    // there are several.
    const std::size_t copies = id == 0 ? 1 : 2 + (n.consumers.size() > 1 ? n.consumers.size() : 0);
    try {
      const Shape5 e = blockFor(n.spec, grid, n.halo).allocationExtents();
      n.bytes = copies * sizeof(real) * std::size_t(e[0] * e[1] * e[2] * e[3] * e[4]);
    } catch (const ShapeError& e) {
      throw ShapeError(concat("layer '", label, "' output ", n.spec.shape, " (",
                              toString(n.spec.dist), ") on grid ", gs.str(), ": ", e.what()));
    }
    total += n.bytes;
  }
  // Ranks of a node share its memory (a device's free memory is taken as this rank's own).
  std::size_t limit = memory_limit;
  if (limit == 0) {
    const std::size_t available = availableBytes<Memory>();
    limit = available == 0
                ? std::numeric_limits<std::size_t>::max()
                : available /
                      std::size_t(Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible
                                      ? ranksOnNode(grid.comm())
                                      : 1);
  }
  // Every rank learns the worst ratio, and the rank that has it says why.
  struct {
    double ratio;
    int rank;
  } mine{double(total) / double(limit), grid.rank()}, worst{};
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, grid.comm());
  if (worst.ratio <= 1.0) return;
  std::string why;
  if (grid.rank() == worst.rank) {
    std::vector<int> ids = _order;
    std::sort(ids.begin(), ids.end(), [&](int a, int b) { return node(a).bytes > node(b).bytes; });
    std::ostringstream largest;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, ids.size()); ++i) {
      const Node& n = node(ids[i]);
      largest << (i ? ", " : "")
              << concat("'", n.layer ? n.layer->name() : std::string("input"), "' ", n.spec.shape,
                        " ", formatBytes(double(n.bytes)));
    }
    why = concat(
        "the model's activations and gradients need ", formatBytes(double(total)), " (", total,
        " bytes) on rank ", grid.rank(), " of grid ", gs.str(), ", but it can have ",
        formatBytes(double(limit)),
        memory_limit ? " (--memory-limit)"
                     : " (the memory still available, shared by the node's ranks)",
        "; the largest: ", largest.str(),
        ". Split the volume over more ranks (--grid), or lower --batch or the model's width");
  }
  broadcastBytes(why, worst.rank, grid.comm());
  throw ResourceError(why);
}

std::size_t Model::activationBytes() const {
  std::size_t total = 0;
  for (int id : _order)
    total += _nodes.at(std::size_t(id)).bytes;
  return total;
}

std::string Model::summary() const {
  std::ostringstream os;
  for (int id : _order) {
    const Node& n = _nodes.at(std::size_t(id));
    os << (n.layer ? n.layer->name() : std::string("input")) << "  "
       << (n.layer ? n.layer->kind() : "Input") << "  (" << n.spec.shape[0] << ", "
       << n.spec.shape[1] << ", " << n.spec.shape[2] << ", " << n.spec.shape[3] << ", "
       << n.spec.shape[4] << ")  " << toString(n.spec.dist) << "  halo " << n.halo << "  "
       << formatBytes(double(n.bytes)) << '\n';
  }
  os << "activations and gradients per rank: " << formatBytes(double(activationBytes())) << '\n';
  return os.str();
}

const Model::Node& Model::named(const std::string& name) const {
  for (const Node& n : _nodes)
    if (n.layer && n.layer->name() == name) return n;
  throw InputError(concat("the model has no layer named '", name, "'"));
}

const Activation& Model::activation(const std::string& name) const {
  return named(name).act;
}
const Activation& Model::gradient(const std::string& name) const {
  return named(name).grad;
}

std::vector<const Layer*> Model::layers() const {
  std::vector<const Layer*> out;
  for (int id : _order)
    if (_nodes.at(std::size_t(id)).layer) out.push_back(_nodes.at(std::size_t(id)).layer.get());
  return out;
}

}  // namespace halo3d::nn
