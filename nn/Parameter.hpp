#pragma once
// The model's named state. A Parameter is a trainable tensor with its gradient, or a buffer
// (BatchNorm running statistics) that is saved and loaded but not trained. Names are PyTorch
// state_dict keys and shapes are PyTorch's, so checkpoints and --init-weights files map one to one.
//
// All values live in one flat View per model (ParameterStore), trainable parameters first, so that
// the gradient allreduce and the optimizers work on a few contiguous ranges instead of one call per
// tensor. Parameters are replicated: every rank of every grid holds the same values.

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "halo3d/core/Types.hpp"
#include "halo3d/nn/Real.hpp"

namespace halo3d::nn {

using Memory = Kokkos::DefaultExecutionSpace::memory_space;
using FlatView = Kokkos::View<real*, Memory>;
template <int Rank>
struct UnmanagedViewOf;
template <>
struct UnmanagedViewOf<1> {
  using type =
      Kokkos::View<real*, Kokkos::LayoutRight, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
};
template <>
struct UnmanagedViewOf<2> {
  using type =
      Kokkos::View<real**, Kokkos::LayoutRight, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
};
template <>
struct UnmanagedViewOf<5> {
  using type =
      Kokkos::View<real*****, Kokkos::LayoutRight, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
};

class Parameter {
 public:
  Parameter(std::string name, std::vector<index_t> shape, bool trainable)
      : _name(std::move(name)), _shape(std::move(shape)), _trainable(trainable) {}

  const std::string& name() const { return _name; }
  const std::vector<index_t>& shape() const { return _shape; }
  bool trainable() const { return _trainable; }
  std::size_t size() const;
  // Element offset in the store's flat views (valid after ParameterStore::finalize()).
  std::size_t offset() const { return _offset; }

  // The value and gradient as flat Views, or reshaped to the PyTorch shape (rank 1, 2 or 5). The
  // gradient of a buffer is empty.
  FlatView value() const { return _value; }
  FlatView grad() const { return _grad; }
  template <int Rank>
  typename UnmanagedViewOf<Rank>::type valueAs() const {
    return reshape<Rank>(_value);
  }
  template <int Rank>
  typename UnmanagedViewOf<Rank>::type gradAs() const {
    return reshape<Rank>(_grad);
  }

 private:
  friend class ParameterStore;
  template <int Rank>
  typename UnmanagedViewOf<Rank>::type reshape(const FlatView& v) const;

  std::string _name;
  std::vector<index_t> _shape;
  bool _trainable;
  std::size_t _offset = 0;
  FlatView _value, _grad;
};

// Owns the flat storage of all parameters and buffers of a model, plus integer counters (PyTorch's
// num_batches_tracked). Add everything, then finalize() once; Parameter references stay valid for
// the store's lifetime. After finalize(), add() binds to an existing entry of the same name and
// shape, so that several models (built for different batch sizes) can share one set of parameters.
class ParameterStore {
 public:
  Parameter& add(const std::string& name, const std::vector<index_t>& shape, bool trainable = true);
  std::int64_t& counter(const std::string& name) { return _counters[name]; }
  const std::map<std::string, std::int64_t>& counters() const { return _counters; }
  void finalize();
  bool finalized() const { return _finalized; }

  // All entries in registration order; the trainable ones.
  std::vector<Parameter*> all();
  std::vector<const Parameter*> all() const;
  std::vector<Parameter*> trainable();
  // Throws InputError naming the key if absent.
  Parameter& find(const std::string& name);
  const Parameter& find(const std::string& name) const;
  bool contains(const std::string& name) const;

  // Flat storage: values of everything (trainable first), gradients of the trainable prefix.
  FlatView values() const { return _values; }
  FlatView grads() const { return _grads; }
  std::size_t trainableSize() const { return _trainable_size; }

 private:
  std::deque<Parameter> _params;
  std::map<std::string, std::int64_t> _counters;
  FlatView _values, _grads;
  std::size_t _trainable_size = 0;
  bool _finalized = false;
};

}  // namespace halo3d::nn
