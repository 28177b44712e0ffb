#include "halo3d/nn/Checkpointing.hpp"

#include <sstream>

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/StateDict.hpp"

namespace halo3d::nn {

CheckpointState captureState(const ParameterStore& store, Optimizer& optimizer,
                             const std::map<std::string, std::int64_t>& counters,
                             const std::string& config_json) {
  CheckpointState s;
  s.model = exportStateDict(store);
  for (const auto& [name, view] : optimizer.state()) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view);
    std::vector<real> values(host.data(), host.data() + host.size());
    const std::vector<index_t> shape{index_t(values.size())};  // before the move below
    s.optimizer[name] = HostArray(shape, std::move(values));
  }
  s.counters = counters;
  s.counters["optimizer.steps"] = optimizer.steps();
  s.config = config_json;
  return s;
}

std::map<std::string, std::int64_t> restoreState(const CheckpointState& state,
                                                 ParameterStore& store, Optimizer& optimizer,
                                                 const std::string& source) {
  importStateDict(store, state.model, source);
  std::ostringstream missing;
  int bad = 0;
  for (const auto& [name, view] : optimizer.state()) {
    const auto it = state.optimizer.find(name);
    if (it == state.optimizer.end() || it->second.elements() != index_t(view.size())) {
      missing << "\n  optimizer tensor '" << name << "' missing or of the wrong size";
      ++bad;
      continue;
    }
    auto host = Kokkos::create_mirror_view(view);
    std::visit(
        [&](const auto& v) {
          for (std::size_t i = 0; i < v.size(); ++i)
            host(i) = real(v[i]);
        },
        it->second.values);
    Kokkos::deep_copy(view, host);
  }
  require<InputError>(
      bad == 0, "checkpoint ", source,
      " does not fit the optimizer (a different optimizer or model?):", missing.str());
  const auto steps = state.counters.find("optimizer.steps");
  optimizer.setSteps(steps == state.counters.end() ? 0 : steps->second);
  return state.counters;
}

}  // namespace halo3d::nn
