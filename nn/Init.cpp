#include "halo3d/nn/Init.hpp"

#include <cmath>

#include "halo3d/kernels/Random.hpp"

namespace halo3d::nn {

namespace {
bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
std::string stem(const std::string& name) {
  return name.substr(0, name.rfind('.'));
}
}  // namespace

void initializeParameters(ParameterStore& store, std::uint64_t seed) {
  auto host = Kokkos::create_mirror_view(store.values());
  const std::vector<Parameter*> params = store.all();
  for (std::size_t k = 0; k < params.size(); ++k) {
    const Parameter& p = *params[k];
    real* out = host.data() + p.offset();
    const std::string base = stem(p.name());
    const bool batchnorm = store.contains(base + ".running_mean");
    if (batchnorm || endsWith(p.name(), ".running_mean") || endsWith(p.name(), ".running_var")) {
      const real v =
          (endsWith(p.name(), ".weight") || endsWith(p.name(), ".running_var")) ? real(1) : real(0);
      for (std::size_t i = 0; i < p.size(); ++i)
        out[i] = v;
      continue;
    }
    if (endsWith(p.name(), ".bias")) {
      for (std::size_t i = 0; i < p.size(); ++i)
        out[i] = 0.0f;
      continue;
    }
    // fan_in: shape[1] times the kernel volume.
    double fan_in = 1;
    for (std::size_t d = 1; d < p.shape().size(); ++d)
      fan_in *= double(p.shape()[d]);
    const double bound = std::sqrt(6.0 / fan_in);
    const kernels::RandomStream stream{seed, 0u, std::uint32_t(k)};
    for (std::size_t i = 0; i < p.size(); ++i)
      out[i] = real((2.0 * kernels::uniform01(kernels::randomBits(stream, i)) - 1.0) * bound);
  }
  Kokkos::deep_copy(store.values(), host);
}

}  // namespace halo3d::nn
