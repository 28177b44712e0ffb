#pragma once
// The ideal training step of a built model, as a list of work items taken from the model's own
// plan: every convolution with its shape (timed by oneDNN, support/OneDnnConvolutions.hpp), and the
// compulsory memory traffic of everything else the step runs (priced at the STREAM-copy bandwidth,
// support/StreamBandwidth.hpp). Both are measured in the benchmark's own run; this file only says
// what there is to measure.
//
// Counting rule for the memory-bound work (fp32 elements, this rank's owned cells, ghosts never
// counted; each layer is one pass of its own over memory, no fusion across layers, nothing assumed
// to stay in cache; |t| = bytes of tensor t):
//   LeakyReLU         forward |x| + |y|;          backward |x| + |dy| + |dx|
//   Dropout           forward |x| + |y|;          backward |dy| + |dx| (the mask is recomputed)
//   BatchNorm         forward 2|x| + |y| (the statistics need all of x before any y);
//                     backward 2(|x| + |dy|) + |dx| (likewise the two sums before dx)
//   average pooling   forward |x| + |y|;          backward |dy| + |dx|
//   max pooling       forward |x| + 2|y| (y and the 4-byte position of each maximum);
//                     backward |dy| + |y| (positions) + |dx|
//   Concat            forward |a| + |b| + |y|;    backward |dy| + |da| + |db|
//   Flatten           0 (a view: the layout of (N, C, D, H, W) already is C order)
//   Dense             forward |W| + |b| + |x| + |y|; backward |W| + |dW| + |db| + |x| + |dy| (+
//   |dx|) other layers      forward the inputs + |y|;  backward the inputs + |dy| + the input
//   gradients a tensor read by k layers: backward k|dt_i| + |dt| (its gradient is the sum of k
//   parts) the loss          the caller's count (lossBytes: prediction, targets, gradient) the
//   optimizer     read parameters, gradients and state, write parameters and state:
//                     (3 P + 2 S) * 4 with P trainable and S state elements
// The first layer computes no data gradient (the input is data), in both halo3d and the ideal.
//
// What the ideal leaves out: the halo exchange and the replication before the dense head
// (communication), the gradient allreduce (zero at 1 rank), BatchNorm's statistics allreduce, data
// loading, and any layout conversion (oneDNN runs in its own preferred layouts throughout).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/ConvTranspose3dGeometry.hpp"
#include "halo3d/nn/Model.hpp"
#include "halo3d/nn/Optimizer.hpp"
#include "halo3d/nn/layers/BatchNorm3d.hpp"
#include "halo3d/nn/layers/Conv3d.hpp"
#include "halo3d/nn/layers/ConvTranspose3d.hpp"
#include "halo3d/nn/layers/Dense.hpp"
#include "halo3d/nn/layers/Elementwise.hpp"
#include "halo3d/nn/layers/Pool3d.hpp"
#include "halo3d/nn/layers/Structural.hpp"

namespace halo3d::bench {

// One convolution of the model on this rank's blocks, as oneDNN is asked for it.
struct IdealConv {
  std::string layer;
  bool transposed = false;
  index_t samples = 0, in_channels = 0, out_channels = 0;
  Extents3 in{}, out{};
  std::array<int, 3> kernel{}, stride{}, padding{};
  bool bias = false;
  bool data_gradient = true;  // false for the first layer: no gradient w.r.t. the data
};

// Compulsory bytes of one memory-bound piece of the step, per pass.
struct IdealTraffic {
  std::string what;  // the layer's name, "<node> gradient sum", "loss", "optimizer"
  std::string kind;
  double forward_bytes = 0, backward_bytes = 0;
};

struct IdealStepWork {
  std::vector<IdealConv> convs;
  std::vector<IdealTraffic> traffic;
  double memoryBytes() const {
    double b = 0;
    for (const IdealTraffic& t : traffic)
      b += t.forward_bytes + t.backward_bytes;
    return b;
  }
};

namespace detail {

inline double bytesOf(const Shape5& s) {
  return nn::cellsOf(s) * double(sizeof(float));
}

inline double parameterBytes(const nn::ParameterStore& store, const std::string& name) {
  return store.contains(name) ? double(store.find(name).size()) * double(sizeof(float)) : 0.0;
}

// This rank's owned shape (samples, C, D, H, W) of plan node `id`.
inline Shape5 ownedShape(const nn::ModelPlan& plan, int id, const GridCoords& coords) {
  const TensorBlock b = plan.block(id, coords);
  const Box& o = b.owned();
  return {b.localSamples(), b.channels(), o.extent(0), o.extent(1), o.extent(2)};
}

// Stride and padding of a window layer with kernel `k`, found as the (stride, padding) whose
// geometry reads the same input cells as the layer for the first outputs along each dimension
// (the layer keeps its geometry private; its input windows are public). Dilation 1.
template <class Geometry>
void solveStrideAndPadding(const nn::WindowLayer& layer, IdealConv& c) {
  for (int dim = 0; dim < 3; ++dim) {
    const int k = c.kernel[std::size_t(dim)];
    bool found = false;
    for (int s = 1; s <= std::max(k, 2) && !found; ++s)
      for (int p = 0; p < k && !found; ++p) {
        const Geometry g = Geometry::cubic(k, s, p);
        index_t extent = -1;
        try {
          extent = g.outputExtent(dim, c.in[std::size_t(dim)]);
        } catch (const ShapeError&) {
          continue;  // this window does not fit the volume
        }
        if (extent != c.out[std::size_t(dim)]) continue;
        bool same = true;
        for (index_t o = 0; o < std::min<index_t>(c.out[std::size_t(dim)], 2 * k + 2); ++o) {
          const Box one = Box::fromExtents(c.out).withRange(dim, o, o + 1);
          const Box w = layer.inputWindow(one);
          const auto r = g.inputWindow(dim, o, o + 1);
          same = same && w.min(dim) == r[0] && w.max(dim) == r[1];
        }
        if (same) {
          c.stride[std::size_t(dim)] = s;
          c.padding[std::size_t(dim)] = p;
          found = true;
        }
      }
    require(found, "ideal step: no stride and padding reproduce the windows of ", c.layer);
  }
}

inline IdealConv convOf(const nn::ModelPlan& plan, int id, const GridCoords& coords,
                        const nn::ParameterStore& store, bool transposed) {
  const nn::PlanNode& n = plan.node(id);
  IdealConv c;
  c.layer = n.name;
  c.transposed = transposed;
  const Shape5 x = ownedShape(plan, n.inputs.at(0), coords), y = ownedShape(plan, id, coords);
  c.samples = x[0];
  c.in_channels = x[1];
  c.out_channels = y[1];
  c.in = {x[2], x[3], x[4]};
  c.out = {y[2], y[3], y[4]};
  const std::vector<index_t>& w = store.find(n.name + ".weight").shape();
  c.kernel = {int(w.at(2)), int(w.at(3)), int(w.at(4))};
  c.bias = store.contains(n.name + ".bias");
  c.data_gradient = n.inputs.at(0) != 0;
  const auto& window = dynamic_cast<const nn::WindowLayer&>(*n.layer);
  if (transposed)
    solveStrideAndPadding<kernels::ConvTranspose3dGeometry>(window, c);
  else
    solveStrideAndPadding<WindowGeometry>(window, c);
  return c;
}

inline IdealTraffic trafficOf(const nn::ModelPlan& plan, int id, const GridCoords& coords,
                              const nn::ParameterStore& store) {
  const nn::PlanNode& n = plan.node(id);
  const nn::Layer* l = n.layer;
  const double y = bytesOf(ownedShape(plan, id, coords));
  std::vector<double> x;
  for (int i : n.inputs)
    x.push_back(bytesOf(ownedShape(plan, i, coords)));
  double in_sum = 0, dx_sum = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    in_sum += x[j];
    if (n.inputs[j] != 0) dx_sum += x[j];
  }
  IdealTraffic t{n.name, n.kind};
  if (dynamic_cast<const nn::LeakyRelu*>(l)) {
    t.forward_bytes = in_sum + y;
    t.backward_bytes = in_sum + y + dx_sum;
  } else if (dynamic_cast<const nn::Dropout*>(l)) {
    t.forward_bytes = in_sum + y;
    t.backward_bytes = y + dx_sum;
  } else if (dynamic_cast<const nn::BatchNorm3d*>(l)) {
    t.forward_bytes = 2 * in_sum + y;
    t.backward_bytes = 2 * (in_sum + y) + dx_sum;
  } else if (dynamic_cast<const nn::Pool3d*>(l)) {
    const bool max = n.kind.rfind("MaxPool", 0) == 0;
    t.forward_bytes = in_sum + (max ? 2 : 1) * y;
    t.backward_bytes = (max ? 2 : 1) * y + dx_sum;
  } else if (dynamic_cast<const nn::Flatten*>(l)) {
    t.forward_bytes = t.backward_bytes = 0;
  } else if (dynamic_cast<const nn::Dense*>(l)) {
    const double w = parameterBytes(store, n.name + ".weight");
    const double b = parameterBytes(store, n.name + ".bias");
    t.forward_bytes = w + b + in_sum + y;
    t.backward_bytes = 2 * w + b + in_sum + y + dx_sum;
  } else {  // Concat and any layer without a rule of its own
    t.forward_bytes = in_sum + y;
    t.backward_bytes = in_sum + y + dx_sum;
  }
  return t;
}

}  // namespace detail

// The ideal step's work on the rank at `coords` of `model` (built): its convolutions and memory
// traffic, layer by layer in execution order, then the gradient sums, the loss (`loss_bytes`) and
// the optimizer's update.
inline IdealStepWork idealStepWork(const nn::Model& model, const GridCoords& coords,
                                   nn::Optimizer& optimizer, double loss_bytes) {
  const nn::ModelPlan& plan = model.builtPlan();
  const nn::ParameterStore& store = model.parameters();
  IdealStepWork work;
  for (int id : plan.order()) {
    const nn::PlanNode& n = plan.node(id);
    if (!n.layer) continue;  // the input, or a replication (communication: left out)
    if (dynamic_cast<const nn::ConvTranspose3d*>(n.layer))
      work.convs.push_back(detail::convOf(plan, id, coords, store, true));
    else if (dynamic_cast<const nn::Conv3d*>(n.layer))
      work.convs.push_back(detail::convOf(plan, id, coords, store, false));
    else
      work.traffic.push_back(detail::trafficOf(plan, id, coords, store));
    if (n.consumers.size() > 1) {
      const double t = detail::bytesOf(detail::ownedShape(plan, id, coords));
      work.traffic.push_back(
          {n.name + " gradient sum", "Sum", 0.0, double(n.consumers.size() + 1) * t});
    }
  }
  work.traffic.push_back({"loss", "Loss", 0.0, loss_bytes});
  double params = 0, state = 0;
  for (const nn::Parameter* p : store.all())
    if (p->trainable()) params += double(p->size());
  for (const auto& s : optimizer.state())
    state += double(s.second.extent(0));
  work.traffic.push_back({"optimizer", "Optimizer", 0.0, (3 * params + 2 * state) * sizeof(float)});
  return work;
}

}  // namespace halo3d::bench
