#include "halo3d/nn/layers/Elementwise.hpp"

#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/Activations.hpp"
#include "halo3d/kernels/Dropout.hpp"
#include "halo3d/kernels/Elementwise.hpp"
#include "halo3d/nn/PrecisionBridge.hpp"

namespace halo3d::nn {

std::string LeakyRelu::kind() const {
  return _slope == 0.0 ? "ReLU" : concat("LeakyReLU(", _slope, ")");
}

void LeakyRelu::forward(RunContext& ctx, const std::vector<const Activation*>& in,
                        Activation& out) {
  if (anyBf16({in[0], &out})) return forwardInFloat(*this, ctx, in, out);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  kernels::leakyReluForward(in[0]->tensor, _slope, out.tensor, out.owned());
}

void LeakyRelu::backward(RunContext& ctx, const std::vector<const Activation*>& in,
                         const Activation& out, const Activation& dout,
                         const std::vector<Activation*>& din) {
  if (anyBf16({in[0], &dout})) return backwardInFloat(*this, ctx, in, out, dout, din);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  if (din[0])
    kernels::leakyReluBackward(in[0]->tensor, dout.tensor, _slope, din[0]->tensor, in[0]->owned());
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
  if (anyBf16({in[0], &out})) return forwardInFloat(*this, ctx, in, out);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  _last_training = ctx.training;
  if (!ctx.training || _p == 0.0) {
    kernels::copy(in[0]->tensor, out.tensor, out.owned());
    return;
  }
  const kernels::RandomStream stream{ctx.seed, std::uint32_t(ctx.step), _layer_id};
  kernels::dropoutForward(in[0]->tensor, _p, stream, out.tensor, out.owned());
}

void Dropout::backward(RunContext& ctx, const std::vector<const Activation*>& in,
                       const Activation& out, const Activation& dout,
                       const std::vector<Activation*>& din) {
  if (anyBf16({in[0], &dout})) return backwardInFloat(*this, ctx, in, out, dout, din);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  if (!din[0]) return;
  if (!_last_training || _p == 0.0) {
    kernels::copy(dout.tensor, din[0]->tensor, in[0]->owned());
    return;
  }
  const kernels::RandomStream stream{ctx.seed, std::uint32_t(ctx.step), _layer_id};
  kernels::dropoutBackward(Kokkos::DefaultExecutionSpace(), dout.tensor, _p, stream, din[0]->tensor,
                           in[0]->owned());
}

}  // namespace halo3d::nn
