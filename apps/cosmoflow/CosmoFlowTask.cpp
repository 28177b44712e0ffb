#include "halo3d/apps/cosmoflow/CosmoFlowTask.hpp"

#include <cstdio>

#include "halo3d/apps/common/ModelCache.hpp"
#include "halo3d/apps/common/RunSupport.hpp"
#include "halo3d/comm/Allreduce.hpp"
#include "halo3d/core/Activity.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/nn/Loss.hpp"

namespace halo3d::apps {

namespace {

// Sum over the data group of a quantity identical on the ranks of each spatial group.
double sumOverGroups(const ProcessGrid& grid, double local) {
  return sumOver(local, grid.dataComm());
}

}  // namespace

void CosmoFlowTask::setBaseline(const std::array<double, 4>& mean, std::string what) {
  _baseline_mean = mean;
  _baseline_name = std::move(what);
}

void CosmoFlowTask::configure(const SampleCatalog& catalog) {
  const Extents3 e = catalog.extents();
  require<InputError>(e[0] == e[1] && e[1] == e[2],
                      "CosmoFlow needs cubic samples, the data holds ", e);
  require<InputError>(_o.input_size == 0 || _o.input_size == e[0], "--input-size ", _o.input_size,
                      " does not match the data's samples of ", e[0], "^3");
  require<InputError>(catalog.targetWidth() == 4, "CosmoFlow regresses 4 parameters; the data has ",
                      catalog.targetWidth(), " targets per sample");
  nn::CosmoFlowConfig c;
  c.input_size = e[0];
  c.input_channels = catalog.channels();
  c.width = _o.width;
  c.batchnorm = _o.batchnorm;
  c.bn_group = statsGroupOf(_o.bn_stats);
  c.dropout = _o.dropout;
  c.validate();
  _config = c;
}

ReadOptions CosmoFlowTask::readOptions() const {
  return sharedReadOptions(_o);
}

std::unique_ptr<nn::Model> CosmoFlowTask::makeModel(
    std::shared_ptr<nn::ParameterStore> store) const {
  return nn::makeCosmoFlow(_config, std::move(store));
}

std::string CosmoFlowTask::describe(const nn::Model& model, const ProcessGrid& grid,
                                    index_t batch) const {
  return concat("cosmoflow: grid ", grid.shape().str(), ", ", grid.size(), " ranks, input ",
                _config.input_size, "^3 x ", _config.input_channels, ", batch ", batch, ", ",
                model.parameters().trainableSize(), " parameters\n", model.summary());
}

// Everything that defines the model and the optimisation, and nothing about the partition
// (checkpoints are identical under every grid).
std::string CosmoFlowTask::configJson() const {
  nlohmann::json j;
  j["model"] = "cosmoflow";
  j["input_size"] = _config.input_size;
  j["input_channels"] = _config.input_channels;
  j["width"] = _config.width;
  j["batchnorm"] = _config.batchnorm;
  j["bn_stats"] = _o.bn_stats;
  j["dropout"] = _config.dropout;
  addOptimisationConfig(j, _o);
  return j.dump();
}

double CosmoFlowTask::loss(const ProcessGrid& grid, const nn::Model& model, const Batch<>& batch,
                           nn::Activation* doutput) const {
  return nn::MseLoss().compute(grid, model.output(), batch.targets, doutput);
}

// MSE of the model on every sample of `loader`'s data, and of always predicting the baseline mean.
EvaluationResult CosmoFlowTask::evaluate(const ProcessGrid& grid, ModelCache& models,
                                         DataLoader<>& loader) {
  require<Error>(!_baseline_name.empty(), "CosmoFlowTask::evaluate: no baseline set");
  nn::RunContext ctx;
  ctx.grid = &grid;
  ctx.training = false;
  nn::MseLoss mse;
  double sq = 0, base = 0;
  index_t samples = 0;
  for (index_t s = 0; s < loader.stepsPerEpoch(); ++s) {
    setActivity(concat("evaluation, batch ", s + 1, " of ", loader.stepsPerEpoch()));
    const Batch<> b = loader.next();
    nn::Model& m = models.feed(b);
    m.forward(ctx);
    sq += mse.compute(grid, m.output(), b.targets, nullptr) * double(b.global_batch * 4);
    double local = 0;
    for (std::size_t i = 0; i < b.targets.size(); ++i) {
      const double d = b.targets[i] - _baseline_mean[i % 4];
      local += d * d;
    }
    base += sumOverGroups(grid, local);
    samples += b.global_batch;
  }
  EvaluationResult e;
  const double mse_value = sq / double(samples * 4), baseline = base / double(samples * 4);
  e.samples = samples;
  e.record = {{"mse", mse_value}, {"baseline_mse", baseline}, {"samples", samples}};
  e.summary = concat("mse ", mse_value, " (predicting ", _baseline_name, ": ", baseline, ", ratio ",
                     baseline / mse_value, ")");
  return e;
}

std::array<double, 4> targetMean(const ProcessGrid& grid, DataLoader<>& loader) {
  std::array<double, 4> sum{0, 0, 0, 0};
  index_t n = 0;
  for (index_t s = 0; s < loader.stepsPerEpoch(); ++s) {
    setActivity(concat("target mean, batch ", s + 1, " of ", loader.stepsPerEpoch()));
    const Batch<> b = loader.next();
    for (std::size_t i = 0; i < b.targets.size(); ++i)
      sum[i % 4] += b.targets[i];
    n += b.global_batch;
  }
  for (double& v : sum)
    v = sumOverGroups(grid, v) / double(n);
  return sum;
}

}  // namespace halo3d::apps
