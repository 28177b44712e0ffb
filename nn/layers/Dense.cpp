#include "halo3d/nn/layers/Dense.hpp"

#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/Dense.hpp"
#include "halo3d/nn/PrecisionBridge.hpp"

namespace halo3d::nn {

namespace {
using Matrix = Kokkos::View<real**, Kokkos::LayoutRight, Memory>;
using ConstMatrix = Kokkos::View<const real**, Kokkos::LayoutRight, Memory>;
using Vec = Kokkos::View<real*, Kokkos::LayoutRight, Memory>;

// The (N, F, 1, 1, 1) activation as an (N, F) matrix over the same memory (no ghosts: halo 0).
Matrix asMatrix(const Tensor& t) {
  const auto& v = t.view();
  require<ShapeError>(v.extent(2) == 1 && v.extent(3) == 1 && v.extent(4) == 1,
                      "dense layer input '", t.label(), "' is not flat: extents (", v.extent(0),
                      ", ", v.extent(1), ", ", v.extent(2), ", ", v.extent(3), ", ", v.extent(4),
                      ")");
  return Matrix(v.data(), v.extent(0), v.extent(1));
}
}  // namespace

Dense::Dense(std::string name, index_t in_features, index_t out_features)
    : Layer(std::move(name)), _in(in_features), _out(out_features) {
  require<ShapeError>(in_features > 0 && out_features > 0, this->name(),
                      ": features must be positive, got ", in_features, " -> ", out_features);
}

std::string Dense::kind() const {
  return concat("Linear(", _in, "->", _out, ")");
}

TensorSpec Dense::outputSpec(const std::vector<TensorSpec>& inputs) const {
  const Shape5& s = inputs.at(0).shape;
  require<ShapeError>(s[1] * s[2] * s[3] * s[4] == _in && s[2] * s[3] * s[4] == 1, name(),
                      ": expects (N, ", _in, ", 1, 1, 1), got ", s,
                      " (flatten first; for CosmoFlow the input size must leave a 2^3 volume)");
  TensorSpec y = inputs[0];
  y.shape = {s[0], _out, 1, 1, 1};
  return y;
}

void Dense::addParameters(ParameterStore& store) {
  _weight = &store.add(name() + ".weight", {_out, _in});
  _bias = &store.add(name() + ".bias", {_out});
}

void Dense::forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) {
  if (anyBf16({in[0], &out})) return forwardInFloat(*this, ctx, in, out);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  kernels::denseForward<real>(
      asMatrix(in[0]->tensor), ConstMatrix(_weight->valueAs<2>()),
      Kokkos::View<const real*, Kokkos::LayoutRight, Memory>(_bias->valueAs<1>()),
      asMatrix(out.tensor));
  fence("dense forward done");
}

void Dense::backward(RunContext& ctx, const std::vector<const Activation*>& in,
                     const Activation& out, const Activation& dout,
                     const std::vector<Activation*>& din) {
  if (anyBf16({in[0], &dout})) return backwardInFloat(*this, ctx, in, out, dout, din);
  {
    ScopedTimer t(ctx.timers, name(), Phase::Compute);
    assignParameterGradients(ctx, *in[0], *_weight, _bias, [&] {
      kernels::denseBackwardWeights<real>(asMatrix(in[0]->tensor), asMatrix(dout.tensor),
                                          Matrix(_weight->gradAs<2>()), false);
      kernels::denseBackwardBias<real>(asMatrix(dout.tensor), Vec(_bias->gradAs<1>()), false);
    });
    fence("dense parameter gradients final before the allreduce");
  }
  markGradientsReady(ctx, *_weight, _bias);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  if (din[0])
    kernels::denseBackwardData<real>(asMatrix(dout.tensor), ConstMatrix(_weight->valueAs<2>()),
                                     asMatrix(din[0]->tensor));
  fence("dense backward done");
}

LayerWork Dense::work(const std::vector<Shape5>& inputs, const Shape5& output,
                      std::size_t element_bytes, bool input_gradient) const {
  const double forward = 2 * double(output[0]) * double(_in) * double(_out);
  const double bytes = double(_in) * double(_out) * double(element_bytes);  // the weights dominate
  return LayerWork{forward, forward * (input_gradient ? 2 : 1), bytes, 2 * bytes};
}

}  // namespace halo3d::nn
