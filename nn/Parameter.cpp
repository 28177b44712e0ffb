#include "halo3d/nn/Parameter.hpp"

#include "halo3d/core/Error.hpp"

namespace halo3d::nn {

std::size_t Parameter::size() const {
  std::size_t s = 1;
  for (index_t e : _shape)
    s *= std::size_t(e);
  return s;
}

template <int Rank>
typename UnmanagedViewOf<Rank>::type Parameter::reshape(const FlatView& v) const {
  require<ShapeError>(int(_shape.size()) == Rank, "parameter '", _name, "' has shape ", _shape,
                      ", not rank ", Rank);
  require(v.data() != nullptr, "parameter '", _name,
          "' has no storage (store not finalized, or a buffer's gradient)");
  if constexpr (Rank == 1) {
    return typename UnmanagedViewOf<1>::type(v.data(), _shape[0]);
  } else if constexpr (Rank == 2) {
    return typename UnmanagedViewOf<2>::type(v.data(), _shape[0], _shape[1]);
  } else {
    return typename UnmanagedViewOf<5>::type(v.data(), _shape[0], _shape[1], _shape[2], _shape[3],
                                             _shape[4]);
  }
}

template UnmanagedViewOf<1>::type Parameter::reshape<1>(const FlatView&) const;
template UnmanagedViewOf<2>::type Parameter::reshape<2>(const FlatView&) const;
template UnmanagedViewOf<5>::type Parameter::reshape<5>(const FlatView&) const;

Parameter& ParameterStore::add(const std::string& name, const std::vector<index_t>& shape,
                               bool trainable) {
  if (_finalized) {
    // A second model over the same parameters (e.g. for a smaller final batch) binds to the
    // existing entry.
    Parameter& p = find(name);
    require<ShapeError>(p.shape() == shape && p.trainable() == trainable, "parameter '", name,
                        "' of shape ", shape, " does not match the shared store's ", p.shape());
    return p;
  }
  require<InputError>(!contains(name), "duplicate parameter name '", name, "'");
  for (index_t e : shape)
    require<ShapeError>(e > 0, "parameter '", name, "' has a non-positive extent in ", shape);
  _params.emplace_back(name, shape, trainable);
  return _params.back();
}

void ParameterStore::finalize() {
  require(!_finalized, "ParameterStore::finalize() called twice");
  // Trainable first: their gradients are then one contiguous prefix.
  std::size_t offset = 0;
  for (bool pass : {true, false})
    for (Parameter& p : _params)
      if (p.trainable() == pass) {
        p._offset = offset;
        offset += p.size();
        if (pass) _trainable_size = offset;
      }
  _values = FlatView("halo3d::parameters", offset);
  _grads = FlatView("halo3d::gradients", _trainable_size);
  for (Parameter& p : _params) {
    p._value = Kokkos::subview(_values, Kokkos::make_pair(p._offset, p._offset + p.size()));
    if (p.trainable())
      p._grad = Kokkos::subview(_grads, Kokkos::make_pair(p._offset, p._offset + p.size()));
  }
  _finalized = true;
}

std::vector<Parameter*> ParameterStore::all() {
  std::vector<Parameter*> out;
  for (Parameter& p : _params)
    out.push_back(&p);
  return out;
}

std::vector<const Parameter*> ParameterStore::all() const {
  std::vector<const Parameter*> out;
  for (const Parameter& p : _params)
    out.push_back(&p);
  return out;
}

std::vector<Parameter*> ParameterStore::trainable() {
  std::vector<Parameter*> out;
  for (Parameter& p : _params)
    if (p.trainable()) out.push_back(&p);
  return out;
}

bool ParameterStore::contains(const std::string& name) const {
  for (const Parameter& p : _params)
    if (p.name() == name) return true;
  return false;
}

Parameter& ParameterStore::find(const std::string& name) {
  for (Parameter& p : _params)
    if (p.name() == name) return p;
  throw InputError(concat("no parameter named '", name, "' in the model"));
}

const Parameter& ParameterStore::find(const std::string& name) const {
  return const_cast<ParameterStore*>(this)->find(name);
}

}  // namespace halo3d::nn
