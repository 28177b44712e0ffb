#include "halo3d/nn/layers/BatchNorm3d.hpp"

#include "halo3d/comm/Allreduce.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/BatchNorm.hpp"
#include "halo3d/nn/StorageDispatch.hpp"

namespace halo3d::nn {

namespace {
using Vec = Kokkos::View<real*, Kokkos::LayoutRight, Memory>;
using ConstVec = Kokkos::View<const real*, Kokkos::LayoutRight, Memory>;
}  // namespace

BatchNorm3d::BatchNorm3d(std::string name, index_t channels, StatsGroup group, double eps,
                         double momentum)
    : Layer(std::move(name)), _channels(channels), _group(group), _eps(eps), _momentum(momentum) {
  require<ShapeError>(channels > 0, this->name(), ": channels must be positive, got ", channels);
}

std::string BatchNorm3d::kind() const {
  return concat("BatchNorm3d(", _channels,
                _group == StatsGroup::Global ? ", global stats)" : ", spatial-group stats)");
}

TensorSpec BatchNorm3d::outputSpec(const std::vector<TensorSpec>& inputs) const {
  require<ShapeError>(inputs.size() == 1 && inputs[0].shape[1] == _channels, name(), ": expects ",
                      _channels, " channels, got ", inputs.at(0).shape[1]);
  return inputs[0];
}

void BatchNorm3d::addParameters(ParameterStore& store) {
  _weight = &store.add(name() + ".weight", {_channels});
  _bias = &store.add(name() + ".bias", {_channels});
  _running_mean = &store.add(name() + ".running_mean", {_channels}, false);
  _running_var = &store.add(name() + ".running_var", {_channels}, false);
  _batches_tracked = &store.counter(name() + ".num_batches_tracked");
}

void BatchNorm3d::setup(const ProcessGrid&, const std::vector<const Activation*>&,
                        const Activation&) {
  _stats = Kokkos::View<double*, Memory>(name() + ".stats", kernels::batchNormStatsSize(_channels));
  _sums = Kokkos::View<double*, Memory>(name() + ".sums",
                                        kernels::batchNormBackwardSumsSize(_channels));
  _mean = Kokkos::View<real*, Memory>(name() + ".mean", _channels);
  _var = Kokkos::View<real*, Memory>(name() + ".var", _channels);
  _batch_stats = Kokkos::View<double*, Memory>(name() + ".batch_stats",
                                               kernels::batchNormStatsSize(_channels));
  _batch_mean = Kokkos::View<real*, Memory>(name() + ".batch_mean", _channels);
  _batch_var = Kokkos::View<real*, Memory>(name() + ".batch_var", _channels);
}

MPI_Comm BatchNorm3d::reduceComm(const RunContext& ctx, const Activation& x) const {
  const bool spatial = x.spec.dist == Distribution::Spatial;
  if (_group == StatsGroup::Global) return spatial ? ctx.grid->comm() : ctx.grid->dataComm();
  return spatial ? ctx.grid->spatialComm() : MPI_COMM_NULL;
}

double BatchNorm3d::groupCount(const RunContext& ctx, const Activation& x) const {
  const Shape5& s = x.spec.shape;
  const double voxels = double(s[2]) * double(s[3]) * double(s[4]);
  if (_group == StatsGroup::Global) return double(s[0]) * voxels;
  return double(x.block().localSamples()) * voxels;
}

void BatchNorm3d::forward(RunContext& ctx, const std::vector<const Activation*>& in,
                          Activation& out) {
  if (bridgedBf16({in[0], &out})) return forwardInFloat(*this, ctx, in, out);
  const Activation& x = *in[0];
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  _used_batch_stats = ctx.training;
  if (ctx.training) {
    onStorage(x, [&](auto s) {
      using T = typename decltype(s)::type;
      kernels::batchNormStatistics(storageOf<T>(x), _stats, x.owned(), false);
    });
    if (MPI_Comm comm = reduceComm(ctx, x); comm != MPI_COMM_NULL) {
      ScopedTimer a(ctx.timers, name(), Phase::Allreduce);
      allreduceSum(_stats, comm);
    }
    kernels::batchNormMoments<real>(_stats, _mean, _var);
    if (_group == StatsGroup::Spatial && ctx.grid->shape().n() > 1) {
      // Normalisation uses the sample group's statistics, but the running statistics follow the
      // whole mini-batch: otherwise every sample group would keep its own running statistics, and
      // evaluation (or a checkpoint, which holds one copy) would depend on the rank.
      Kokkos::deep_copy(_batch_stats, _stats);
      {
        ScopedTimer a(ctx.timers, name(), Phase::Allreduce);
        allreduceSum(_batch_stats, ctx.grid->dataComm());
      }
      kernels::batchNormMoments<real>(_batch_stats, _batch_mean, _batch_var);
      const Shape5& sh = x.spec.shape;
      kernels::batchNormUpdateRunningStats<real>(
          _batch_mean, _batch_var, double(sh[0]) * double(sh[2]) * double(sh[3]) * double(sh[4]),
          _momentum, Vec(_running_mean->valueAs<1>()), Vec(_running_var->valueAs<1>()));
    } else {
      kernels::batchNormUpdateRunningStats<real>(_mean, _var, groupCount(ctx, x), _momentum,
                                                 Vec(_running_mean->valueAs<1>()),
                                                 Vec(_running_var->valueAs<1>()));
    }
    ++*_batches_tracked;
  } else {
    Kokkos::deep_copy(_mean, _running_mean->value());
    Kokkos::deep_copy(_var, _running_var->value());
  }
  onStorage(x, [&](auto s) {
    using T = typename decltype(s)::type;
    kernels::batchNormForward<T>(storageOf<T>(x), _mean, _var, ConstVec(_weight->valueAs<1>()),
                                 ConstVec(_bias->valueAs<1>()), _eps, storageOf<T>(out),
                                 out.owned());
  });
  fence("batch norm forward done");
}

void BatchNorm3d::backward(RunContext& ctx, const std::vector<const Activation*>& in,
                           const Activation& out, const Activation& dout,
                           const std::vector<Activation*>& din) {
  if (bridgedBf16({in[0], &dout})) return backwardInFloat(*this, ctx, in, out, dout, din);
  const Activation& x = *in[0];
  require(_used_batch_stats, name(), ": backward after an evaluation-mode forward");
  ScopedTimer t(ctx.timers, name(), Phase::Compute);
  onStorage(x, [&](auto s) {
    using T = typename decltype(s)::type;
    kernels::batchNormBackwardSums<T>(storageOf<T>(x), storageOf<T>(dout), _mean, _var, _eps, _sums,
                                      x.owned(), false);
  });
  // gamma/beta gradients from this rank's partial sums: the GradientReducer adds the ranks up.
  assignParameterGradients(ctx, x, *_weight, _bias, [&] {
    kernels::batchNormParameterGradients<real>(_sums, Vec(_weight->gradAs<1>()),
                                               Vec(_bias->gradAs<1>()), false);
  });
  fence("batch norm parameter gradients final before the allreduce");
  markGradientsReady(ctx, *_weight, _bias);
  if (!din[0]) return;
  if (MPI_Comm comm = reduceComm(ctx, x); comm != MPI_COMM_NULL) {
    ScopedTimer a(ctx.timers, name(), Phase::Allreduce);
    allreduceSum(_sums, comm);
  }
  onStorage(x, [&](auto s) {
    using T = typename decltype(s)::type;
    kernels::batchNormBackward<T>(storageOf<T>(x), storageOf<T>(dout), _mean, _var,
                                  ConstVec(_weight->valueAs<1>()), _eps, _sums, groupCount(ctx, x),
                                  storageOf<T>(*din[0]), x.owned());
  });
  fence("batch norm backward done");
}

}  // namespace halo3d::nn
