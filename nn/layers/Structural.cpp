#include "halo3d/nn/layers/Structural.hpp"

#include "halo3d/core/Error.hpp"
#include "halo3d/kernels/Channels.hpp"
#include "halo3d/nn/StorageDispatch.hpp"

namespace halo3d::nn {

TensorSpec Concat::outputSpec(const std::vector<TensorSpec>& inputs) const {
  require<ShapeError>(inputs.size() == 2, name(), ": Concat takes two inputs, got ", inputs.size());
  const TensorSpec &a = inputs[0], &b = inputs[1];
  require<ShapeError>(a.shape[0] == b.shape[0] && a.volume() == b.volume(), name(),
                      ": cannot concatenate ", a.shape, " and ", b.shape,
                      " (batch and volume must match)");
  TensorSpec y = a;
  y.shape[1] = a.shape[1] + b.shape[1];
  return y;
}

void Concat::forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) {
  if (bridgedBf16({in[0], in[1], &out})) return forwardInFloat(*this, ctx, in, out);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  onStorage(out, [&](auto s) {
    using T = typename decltype(s)::type;
    kernels::concatChannels(storageOf<T>(*in[0]), storageOf<T>(*in[1]), storageOf<T>(out),
                            out.owned());
  });
}

void Concat::backward(RunContext& ctx, const std::vector<const Activation*>& in,
                      const Activation& out, const Activation& dout,
                      const std::vector<Activation*>& din) {
  if (bridgedBf16({in[0], in[1], &dout})) return backwardInFloat(*this, ctx, in, out, dout, din);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  onStorage(dout, [&](auto s) {
    using T = typename decltype(s)::type;
    const HaloTensor<T>& dy = storageOf<T>(dout);
    if (din[0]) kernels::sliceChannels(dy, 0, storageOf<T>(*din[0]), in[0]->owned());
    if (din[1])
      kernels::sliceChannels(dy, in[0]->spec.shape[1], storageOf<T>(*din[1]), in[1]->owned());
  });
}

TensorSpec Flatten::outputSpec(const std::vector<TensorSpec>& inputs) const {
  require<ShapeError>(inputs.size() == 1, name(), ": Flatten takes one input");
  const Shape5& s = inputs[0].shape;
  TensorSpec y = inputs[0];
  y.shape = {s[0], s[1] * s[2] * s[3] * s[4], 1, 1, 1};
  return y;
}

namespace {
// (n, c, d, h, w) of a whole-volume tensor <-> (n, f) of its flattening.
template <class From, class To>
void reshapeCopy(const From& from, const To& to, bool forward) {
  const index_t nl = index_t(from.extent(0)), c = index_t(from.extent(1)),
                d = index_t(from.extent(2));
  const index_t h = index_t(from.extent(3)), w = index_t(from.extent(4));
  Kokkos::parallel_for(
      "halo3d::flatten",
      Kokkos::MDRangePolicy<Kokkos::Rank<5>, Kokkos::IndexType<index_t>>({0, 0, 0, 0, 0},
                                                                         {nl, c, d, h, w}),
      KOKKOS_LAMBDA(index_t n, index_t ci, index_t di, index_t hi, index_t wi) {
        const index_t f = ((ci * d + di) * h + hi) * w + wi;
        if (forward)
          to(n, f, 0, 0, 0) = from(n, ci, di, hi, wi);
        else
          from(n, ci, di, hi, wi) = to(n, f, 0, 0, 0);
      });
}
}  // namespace

void Flatten::forward(RunContext& ctx, const std::vector<const Activation*>& in, Activation& out) {
  if (bridgedBf16({in[0], &out})) return forwardInFloat(*this, ctx, in, out);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  onStorage(out, [&](auto s) {
    using T = typename decltype(s)::type;
    reshapeCopy(storageOf<T>(*in[0]).owned(), storageOf<T>(out).owned(), true);
  });
}

void Flatten::backward(RunContext& ctx, const std::vector<const Activation*>& in,
                       const Activation& out, const Activation& dout,
                       const std::vector<Activation*>& din) {
  if (bridgedBf16({in[0], &dout})) return backwardInFloat(*this, ctx, in, out, dout, din);
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  if (!din[0]) return;
  onStorage(dout, [&](auto s) {
    using T = typename decltype(s)::type;
    reshapeCopy(storageOf<T>(*din[0]).owned(), storageOf<T>(dout).owned(), false);
  });
}

}  // namespace halo3d::nn
