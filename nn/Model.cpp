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
#include "halo3d/nn/PrecisionBridge.hpp"
#include "halo3d/nn/layers/Redistribute.hpp"

namespace halo3d::nn {

int Model::input(const std::array<index_t, 4>& sample_shape) {
  require(_nodes.empty(), "Model::input() must come first");
  for (index_t e : sample_shape)
    require<ShapeError>(e > 0, "model input shape ", sample_shape, " must be positive");
  _sample_shape = sample_shape;
  _nodes.emplace_back();
  _inputs.emplace_back();
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
  _nodes.push_back(std::move(n));
  _inputs.push_back(std::move(inputs));
  return int(_nodes.size()) - 1;
}

std::vector<GraphNode> Model::graph() const {
  std::vector<GraphNode> g;
  for (const Node& n : _nodes)
    g.push_back(GraphNode{n.layer.get(), {}});
  for (std::size_t id = 0; id < _inputs.size(); ++id)
    g[id].inputs = _inputs[id];
  return g;
}

ModelPlan Model::plan(const GridShape& grid, index_t batch) const {
  require(!_nodes.empty(), "Model::plan() before Model::input()");
  return ModelPlan(graph(), _sample_shape, grid, batch);
}

const ModelPlan& Model::builtPlan() const {
  require(built(), "Model::builtPlan() before build()");
  return *_plan;
}

void Model::build(const ProcessGrid& grid, index_t batch, std::size_t memory_limit,
                  Precision precision) {
  require(!built(), "Model::build() called twice");
  requirePrecisionAvailable(precision);
  _precision = precision;
  ModelPlan p = plan(grid.shape(), batch);
  if (!_params->finalized()) _params->finalize();
  // The replications the plan inserted become Redistribute layers.
  for (std::size_t id = _nodes.size(); id < p.nodes().size(); ++id) {
    Node n;
    n.layer = std::make_unique<Redistribute>(p.node(int(id)).name);
    _nodes.push_back(std::move(n));
  }
  _plan = std::move(p);
  checkMemory(grid, memory_limit);
  _grid = &grid;
  for (int id : _plan->order()) {
    Node& n = node(id);
    const PlanNode& pn = _plan->node(id);
    n.act = makeActivation(pn.name, pn.spec, grid, pn.halo, precision);
    if (id != 0) n.grad = makeActivation(pn.name + ".grad", pn.spec, grid, pn.halo, precision);
    if (id != 0 && pn.consumers.size() > 1)
      for (std::size_t c = 0; c < pn.consumers.size(); ++c)
        n.grad_parts.push_back(makeActivation(pn.name + ".grad" + std::to_string(c), pn.spec, grid,
                                              pn.halo, precision));
  }
  for (int id : _plan->order()) {
    Node& n = node(id);
    if (!n.layer) continue;
    n.layer->setup(grid, inputsOf(id), n.act);
  }
}

std::vector<const Activation*> Model::inputsOf(int id) {
  std::vector<const Activation*> in;
  for (int i : _plan->node(id).inputs)
    in.push_back(&node(i).act);
  return in;
}

void Model::forward(RunContext& ctx) {
  require(built(), "Model::forward() before build()");
  for (int id : _plan->order()) {
    Node& n = node(id);
    if (!n.layer) continue;
    const ScopedActivity activity(n.layer->name() + " forward");
    n.layer->forward(ctx, inputsOf(id), n.act);
  }
}

void Model::backward(RunContext& ctx) {
  require(built(), "Model::backward() before build()");
  if (ctx.reducer) ctx.reducer->begin();
  const std::vector<int>& order = _plan->order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node& n = node(*it);
    const PlanNode& pn = _plan->node(*it);
    if (!n.layer) continue;
    const ScopedActivity activity(n.layer->name() + " backward");
    if (n.grad_parts.size() > 1) {
      // The gradient of a tensor read by several layers is the sum of what each sends back.
      // In bf16 the sum is taken in float (the precision bridge) and rounded once.
      const Box& box = n.grad.owned();
      FloatStandIn sum(n.grad, Box());
      kernels::copy(FloatStandIn(n.grad_parts[0], box)->tensor, sum->tensor, box);
      for (std::size_t c = 1; c < n.grad_parts.size(); ++c)
        kernels::add(sum->tensor, FloatStandIn(n.grad_parts[c], box)->tensor, sum->tensor, box);
      sum.narrow(box);
    }
    std::vector<const Activation*> in;
    std::vector<Activation*> din;
    for (std::size_t j = 0; j < pn.inputs.size(); ++j) {
      const int i = pn.inputs[j];
      Node& src = node(i);
      in.push_back(&src.act);
      if (i == 0)
        din.push_back(nullptr);  // no gradient for the data
      else if (src.grad_parts.empty())
        din.push_back(&src.grad);
      else
        din.push_back(&src.grad_parts[std::size_t(pn.input_part[j])]);
    }
    n.layer->backward(ctx, in, n.act, n.grad, din);
  }
  if (ctx.reducer) {
    ScopedTimer timer(ctx.timers, "allreduce", Phase::Allreduce);
    ctx.reducer->finish();
  }
}

void Model::checkMemory(const ProcessGrid& grid, std::size_t memory_limit) const {
  const std::size_t total = _plan->totalBytes(grid.coords(), activationElementBytes());
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
  if (grid.rank() == worst.rank)
    why =
        concat("the model's activations and gradients need ", formatBytes(double(total)), " (",
               total, " bytes) on rank ", grid.rank(), " of grid ", grid.shape().str(),
               ", but it can have ", formatBytes(double(limit)),
               memory_limit ? " (--memory-limit)"
                            : " (the memory still available, shared by the node's ranks)",
               "; the largest: ", _plan->largestTensors(grid.coords(), activationElementBytes(), 3),
               ". Split the volume over more ranks (--grid), or lower --batch or the model's "
               "width");
  broadcastBytes(why, worst.rank, grid.comm());
  throw ResourceError(why);
}

std::size_t Model::activationBytes() const {
  return builtPlan().totalBytes(_grid->coords(), activationElementBytes());
}

std::string Model::summary() const {
  const ModelPlan& p = builtPlan();
  const GridCoords& me = _grid->coords();
  std::ostringstream os;
  for (int id : p.order()) {
    const PlanNode& n = p.node(id);
    os << n.name << "  " << n.kind << "  (" << n.spec.shape[0] << ", " << n.spec.shape[1] << ", "
       << n.spec.shape[2] << ", " << n.spec.shape[3] << ", " << n.spec.shape[4] << ")  "
       << toString(n.spec.dist) << "  halo " << n.halo << "  "
       << formatBytes(double(p.bytes(id, me, activationElementBytes()))) << '\n';
  }
  os << "activations and gradients per rank: " << formatBytes(double(activationBytes())) << " ("
     << toString(_precision) << ")\n";
  return os.str();
}

int Model::named(const std::string& name) const {
  for (std::size_t id = 0; id < _nodes.size(); ++id)
    if (_nodes[id].layer && _nodes[id].layer->name() == name) return int(id);
  throw InputError(concat("the model has no layer named '", name, "'"));
}

const Activation& Model::activation(const std::string& name) const {
  return _nodes.at(std::size_t(named(name))).act;
}
const Activation& Model::gradient(const std::string& name) const {
  return _nodes.at(std::size_t(named(name))).grad;
}

std::vector<const Layer*> Model::layers() const {
  std::vector<const Layer*> out;
  for (int id : builtPlan().order())
    if (_nodes.at(std::size_t(id)).layer) out.push_back(_nodes.at(std::size_t(id)).layer.get());
  return out;
}

}  // namespace halo3d::nn
