#include "halo3d/nn/layers/ConvTranspose3d.hpp"

#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"

namespace halo3d::nn {

namespace {
using Views = kernels::ConvTranspose3dViews<real, Memory>;
using Exec = Kokkos::DefaultExecutionSpace;
}  // namespace

ConvTranspose3d::ConvTranspose3d(std::string name, index_t in_channels, index_t out_channels,
                                 const kernels::ConvTranspose3dGeometry& g, bool bias)
    : ConvLayer(std::move(name), in_channels, out_channels, g, bias) {}

std::string ConvTranspose3d::kind() const {
  return concat("ConvTranspose3d(", _in, "->", _out, ", k", _g.window.kernel, " s",
                _g.window.stride, ")");
}

void ConvTranspose3d::addParameters(ParameterStore& store) {
  const auto& k = _g.window.kernel;
  _weight = &store.add(name() + ".weight", {_in, _out, k[0], k[1], k[2]});
  if (_has_bias) _bias = &store.add(name() + ".bias", {_out});
}

void ConvTranspose3d::computeForward(const Activation& x, const Activation& y, const Box& out) {
  const Views::bias_type b = _bias ? Views::bias_type(_bias->valueAs<1>()) : Views::bias_type();
  kernels::convTranspose3dForward(Exec(), x.tensor, Views::weights_type(_weight->valueAs<5>()), b,
                                  _g, y.tensor, out);
}

void ConvTranspose3d::computeBackwardData(const Activation& dy, const Activation& dx,
                                          const Box& in_box, const Box& dy_box) {
  kernels::convTranspose3dBackwardData(
      Exec(), dy.tensor, Views::weights_type(_weight->valueAs<5>()), _g, dx.tensor, in_box, dy_box);
}

void ConvTranspose3d::computeBackwardFilter(const Activation& x, const Activation& dy,
                                            const Box& owned) {
  const Views::bias_grad_type db =
      _bias ? Views::bias_grad_type(_bias->gradAs<1>()) : Views::bias_grad_type();
  kernels::convTranspose3dBackwardFilter(Exec(), x.tensor, dy.tensor, _g,
                                         Views::weights_grad_type(_weight->gradAs<5>()), db, owned,
                                         false);
}

// 2 flops per weight tap and input cell (each input cell scatters to every output of its taps).
LayerWork ConvTranspose3d::work(const std::vector<Shape5>& inputs, const Shape5& output,
                                std::size_t element_bytes, bool input_gradient) const {
  const Shape5& x = inputs.at(0);
  const double taps =
      double(_out) * double(_g.window.kernel[0] * _g.window.kernel[1] * _g.window.kernel[2]);
  const double forward = 2 * taps * cellsOf(x);
  const double bytes = (cellsOf(x) + cellsOf(output)) * double(element_bytes);
  return LayerWork{forward, forward * (input_gradient ? 2 : 1), bytes,
                   bytes * (input_gradient ? 2 : 1),
                   double(_g.hostWorkspaceBytes(output[0], x[1], output[1],
                                                {output[2], output[3], output[4]}, element_bytes))};
}

}  // namespace halo3d::nn
