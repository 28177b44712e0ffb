#pragma once
// Everything a training run saves and restores, in host memory and in the global layout: nothing in
// it depends on the process grid. Parameters in halo3d are replicated (data x spatial parallelism
// replicates the weights), so any one rank's copy is the whole state; nn/ fills this from its
// ParameterStore and optimizer.
//
//   model      PyTorch state_dict names and shapes: "conv1.weight" (O, I, kD, kH, kW),
//              "bn1.running_mean" (C,), "bn1.num_batches_tracked" () int64, "fc.weight" (out, in)
//   optimizer  per-parameter optimizer tensors: "exp_avg.conv1.weight", "momentum_buffer.fc.bias"
//   counters   integers: "epoch", "step", "optimizer.steps", RNG counters such as "rng.dropout"
//   scalars    reals: "lr", the last loss, ...
//   config     the run configuration as JSON text; it must not mention the grid, so that files
//              are byte-identical across grids

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/Types.hpp"
#include "halo3d/io/ElementType.hpp"

namespace halo3d {

// A host tensor of float32, float64 or int64 values, C order; an empty shape is a scalar (one
// value).
struct HostArray {
  std::vector<index_t> shape;
  std::variant<std::vector<float>, std::vector<double>, std::vector<std::int64_t>> values;

  HostArray() = default;
  // Requires values.size() == the product of shape (ShapeError otherwise).
  template <class T>
  HostArray(std::vector<index_t> s, std::vector<T> v) : shape(std::move(s)), values(std::move(v)) {
    require<ShapeError>(index_t(std::get<std::vector<T>>(values).size()) == elements(),
                        "HostArray of shape ", shape, " given ",
                        std::get<std::vector<T>>(values).size(), " values");
  }

  // The product of the shape (1 for a scalar).
  index_t elements() const {
    index_t n = 1;
    for (index_t e : shape)
      n *= e;
    return n;
  }
  ElementType type() const {
    switch (values.index()) {
      case 0:
        return ElementType::Float32;
      case 1:
        return ElementType::Float64;
      default:
        return ElementType::Int64;
    }
  }
  const void* data() const {
    return std::visit([](const auto& v) { return static_cast<const void*>(v.data()); }, values);
  }
  friend bool operator==(const HostArray& a, const HostArray& b) {
    return a.shape == b.shape && a.values == b.values;
  }
};

struct CheckpointState {
  std::map<std::string, HostArray> model;
  std::map<std::string, HostArray> optimizer;
  std::map<std::string, std::int64_t> counters;
  std::map<std::string, double> scalars;
  std::string config;

  friend bool operator==(const CheckpointState& a, const CheckpointState& b) {
    return a.model == b.model && a.optimizer == b.optimizer && a.counters == b.counters &&
           a.scalars == b.scalars && a.config == b.config;
  }
};

}  // namespace halo3d
