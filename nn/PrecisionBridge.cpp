#include "halo3d/nn/PrecisionBridge.hpp"

#include <atomic>

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/Layer.hpp"
#include "halo3d/nn/layers/Redistribute.hpp"

namespace halo3d::nn {

namespace {

// dst(n, c, box) = convert(src(n, c, box)) where both hold the cells, with one conversion (the
// bf16 constructor rounds to nearest even; bf16 -> float is exact).
template <class To, class From>
void convertBox(const HaloTensor<From>& src, const HaloTensor<To>& dst, const Box& box) {
  const Box b = intersect(intersect(box, heldBox(src.block())), heldBox(dst.block()));
  if (b.empty()) return;
  require<ShapeError>(src.block().localSamples() == dst.block().localSamples() &&
                          src.block().channels() == dst.block().channels(),
                      "precision bridge: '", src.label(), "' and '", dst.label(),
                      "' differ in samples or channels");
  const Extents3 s0 = src.toLocal(b.min()), d0 = dst.toLocal(b.min());
  const index_t sd = s0[0], sh = s0[1], sw = s0[2], dd = d0[0], dh = d0[1], dw = d0[2];
  const auto from = src.view();
  const auto to = dst.view();
  Kokkos::parallel_for(
      "halo3d::nn::convertBox",
      Kokkos::MDRangePolicy<Kokkos::Rank<5>, Kokkos::IndexType<index_t>>(
          {0, 0, 0, 0, 0}, {index_t(from.extent(0)), index_t(from.extent(1)), b.extent(0),
                            b.extent(1), b.extent(2)}),
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w) {
        to(n, c, dd + d, dh + h, dw + w) = To(from(n, c, sd + d, sh + h, sw + w));
      });
}

}  // namespace

Box heldBox(const TensorBlock& b) {
  return b.owned().grown(b.halo().loExtents(), b.halo().hiExtents());
}

void widenBox(const TensorBf16& src, const Tensor& dst, const Box& box) {
  convertBox(src, dst, box);
}

void narrowBox(const Tensor& src, const TensorBf16& dst, const Box& box) {
  convertBox(src, dst, box);
}

FloatStandIn::FloatStandIn(const Activation& a, const Box& fill) : _float(a) {
  if (!a.isBf16()) return;
  _original = a.tensor_bf16;
  _float.precision = Precision::fp32;
  _float.tensor_bf16 = TensorBf16();
  _float.tensor = Tensor(_original.label() + ".float", _original.block());
  widen(fill);
}

void FloatStandIn::widen(const Box& box) const {
  if (bridged()) widenBox(_original, _float.tensor, box);
}

void FloatStandIn::narrow(const Box& box) const {
  if (bridged()) narrowBox(_float.tensor, _original, box);
}

namespace {
std::atomic<bool> g_native_bf16{true};
}  // namespace

void setNativeBf16Kernels(bool enabled) {
  g_native_bf16 = enabled;
}

bool nativeBf16Kernels() {
  return g_native_bf16;
}

bool anyBf16(const std::vector<const Activation*>& a) {
  for (const Activation* x : a)
    if (x && x->isBf16()) return true;
  return false;
}

void forwardInFloat(Layer& layer, RunContext& ctx, const std::vector<const Activation*>& in,
                    Activation& out) {
  std::vector<FloatStandIn> xs;
  xs.reserve(in.size());
  for (const Activation* a : in)
    xs.emplace_back(*a);
  std::vector<const Activation*> xf;
  for (const FloatStandIn& x : xs)
    xf.push_back(&*x);
  FloatStandIn y(out, Box());
  layer.forward(ctx, xf, y.get());
  y.narrow(out.owned());
}

void backwardInFloat(Layer& layer, RunContext& ctx, const std::vector<const Activation*>& in,
                     const Activation& out, const Activation& dout,
                     const std::vector<Activation*>& din) {
  std::vector<FloatStandIn> xs;
  xs.reserve(in.size());
  for (const Activation* a : in)
    xs.emplace_back(*a);
  std::vector<const Activation*> xf;
  for (const FloatStandIn& x : xs)
    xf.push_back(&*x);
  const FloatStandIn y(out), dy(dout);
  std::vector<std::optional<FloatStandIn>> dxs(din.size());
  std::vector<Activation*> dxf(din.size(), nullptr);
  for (std::size_t i = 0; i < din.size(); ++i)
    if (din[i]) {
      dxs[i].emplace(*din[i], Box());
      dxf[i] = &dxs[i]->get();
    }
  layer.backward(ctx, xf, *y, *dy, dxf);
  for (std::size_t i = 0; i < din.size(); ++i)
    if (din[i]) dxs[i]->narrow(din[i]->owned());
}

Tensor floatCopyOf(const Activation& a) {
  return FloatStandIn(a)->tensor;
}

void storeBox(const Tensor& src, const Activation& dst, const Box& box) {
  if (!dst.isBf16()) return copyBox(src, dst.tensor, box);
  require<ShapeError>(heldBox(src.block()).contains(box) && heldBox(dst.block()).contains(box),
                      "storeBox: box ", box, " is not held by both '", src.label(), "' and '",
                      dst.tensor_bf16.label(), "'");
  narrowBox(src, dst.tensor_bf16, box);
}

void storeBox(const TensorBf16& src, const Activation& dst, const Box& box) {
  if (dst.isBf16()) return copyBox(src, dst.tensor_bf16, box);
  require<ShapeError>(heldBox(src.block()).contains(box) && heldBox(dst.block()).contains(box),
                      "storeBox: box ", box, " is not held by both '", src.label(), "' and '",
                      dst.tensor.label(), "'");
  widenBox(src, dst.tensor, box);
}

}  // namespace halo3d::nn
