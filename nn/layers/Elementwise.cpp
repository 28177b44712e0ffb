#include "halo3d/nn/layers/Elementwise.hpp"

#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/Activations.hpp"
#include "halo3d/kernels/Dropout.hpp"
#include "halo3d/kernels/Elementwise.hpp"
#include "halo3d/nn/StorageDispatch.hpp"

namespace halo3d::nn {

std::string LeakyRelu::kind() const {
  return _slope == 0.0 ? "ReLU" : concat("LeakyReLU(", _slope, ")");
}

void LeakyRelu::forward(RunContext& ctx, const std::vector<const Activation*>& in,
                        Activation& out) {
  if (bridgedBf16({in[0], &out})) return forwardInFloat(*this, ctx, in, out);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  onStorage(out, [&](auto s) {
    using T = typename decltype(s)::type;
    kernels::leakyReluForward(storageOf<T>(*in[0]), _slope, storageOf<T>(out), out.owned());
  });
}

void LeakyRelu::backward(RunContext& ctx, const std::vector<const Activation*>& in,
                         const Activation& out, const Activation& dout,
                         const std::vector<Activation*>& din) {
  if (bridgedBf16({in[0], &dout})) return backwardInFloat(*this, ctx, in, out, dout, din);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  if (!din[0]) return;
  onStorage(dout, [&](auto s) {
    using T = typename decltype(s)::type;
    kernels::leakyReluBackward(storageOf<T>(*in[0]), storageOf<T>(dout), _slope,
                               storageOf<T>(*din[0]), in[0]->owned());
  });
}

Dropout::Dropout(std::string name, double p, std::uint32_t layer_id)
    : ElementwiseLayer(std::move(name)), _p(p), _layer_id(layer_id) {
  require<InputError>(p >= 0.0 && p < 1.0, this->name(),
                      ": dropout probability must be in [0, 1), got ", p);
}

std::string Dropout::kind() const {
  return concat("Dropout(", _p, ")");
}

void Dropout::forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) {
  if (bridgedBf16({in[0], &out})) return forwardInFloat(*this, ctx, in, out);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  _last_training = ctx.training;
  onStorage(out, [&](auto s) {
    using T = typename decltype(s)::type;
    const HaloTensor<T>&x = storageOf<T>(*in[0]), &y = storageOf<T>(out);
    if (!ctx.training || _p == 0.0) return kernels::copy(x, y, out.owned());
    const kernels::RandomStream stream{ctx.seed, std::uint32_t(ctx.step), _layer_id};
    kernels::dropoutForward(x, _p, stream, y, out.owned());
  });
}

void Dropout::backward(RunContext& ctx, const std::vector<const Activation*>& in,
                       const Activation& out, const Activation& dout,
                       const std::vector<Activation*>& din) {
  if (bridgedBf16({in[0], &dout})) return backwardInFloat(*this, ctx, in, out, dout, din);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  if (!din[0]) return;
  onStorage(dout, [&](auto s) {
    using T = typename decltype(s)::type;
    const HaloTensor<T>&dy = storageOf<T>(dout), &dx = storageOf<T>(*din[0]);
    if (!_last_training || _p == 0.0) return kernels::copy(dy, dx, in[0]->owned());
    const kernels::RandomStream stream{ctx.seed, std::uint32_t(ctx.step), _layer_id};
    kernels::dropoutBackward(Kokkos::DefaultExecutionSpace(), dy, _p, stream, dx, in[0]->owned());
  });
}

}  // namespace halo3d::nn
