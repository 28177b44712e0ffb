#include "halo3d/apps/unet3d/UNetTask.hpp"

#include "halo3d/apps/common/ModelCache.hpp"
#include "halo3d/apps/common/RunSupport.hpp"
#include "halo3d/apps/unet3d/ModelSetup.hpp"
#include "halo3d/core/Activity.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d::apps {

SampleCatalog UNetTask::openData(const std::string& path, const char* flag,
                                 const ProcessGrid& grid) const {
  checkDeclaredClasses(path, _o.classes);
  return TrainingTask::openData(path, flag, grid);
}

void UNetTask::configure(const SampleCatalog& data) {
  _config = modelConfig(_o, data, true);
}

ReadOptions UNetTask::readOptions() const {
  return apps::readOptions(_o);
}

std::unique_ptr<nn::Model> UNetTask::makeModel(std::shared_ptr<nn::ParameterStore> store) const {
  return nn::makeUNet3d(_config, std::move(store));
}

void UNetTask::checkPlan(const nn::ModelPlan& plan) const {
  requireSpatialOutput(plan, _config);
}

std::string UNetTask::describe(const nn::Model& model, const ProcessGrid& grid,
                               index_t batch) const {
  return concat("unet3d: grid ", grid.shape().str(), ", ", grid.size(), " ranks, input ",
                _config.input_size, "^3 x ", _config.in_channels, ", base ", _config.base,
                ", depth ", _config.depth, ", ", _config.classes, " classes, batch ", batch, ", ",
                model.parameters().trainableSize(), " parameters\n", model.summary());
}

std::string UNetTask::configJson() const {
  return apps::configJson(_o, _config);
}

double UNetTask::loss(const ProcessGrid& grid, const nn::Model& model, const Batch<>& batch,
                      nn::Activation* doutput) const {
  return segmentationLoss(_o.loss, grid, model.output(), batch.labels, doutput);
}

// Loss and Dice counts over every sample of `loader`'s data.
EvaluationResult UNetTask::evaluate(const ProcessGrid& grid, ModelCache& models,
                                    DataLoader<>& loader) {
  DiceCounts counts(_config.classes);
  double loss = 0;
  index_t samples = 0;
  nn::RunContext ctx;
  ctx.grid = &grid;
  ctx.training = false;
  for (index_t s = 0; s < loader.stepsPerEpoch(); ++s) {
    setActivity(concat("evaluation, batch ", s + 1, " of ", loader.stepsPerEpoch()));
    const Batch<> b = loader.next();
    nn::Model& m = models.feed(b);
    m.forward(ctx);
    loss += segmentationLoss(_o.loss, grid, m.output(), b.labels, nullptr) * double(b.global_batch);
    const Labels predicted = labelsLike(m.output(), "halo3d::predicted");
    softmaxArgmax(nn::floatCopyOf(m.output()), predicted, nn::Tensor(), m.output().owned());
    counts.add(predicted, b.labels, m.output().owned());
    samples += b.global_batch;
  }
  counts.allreduce(grid.comm());
  loss /= double(samples);
  EvaluationResult e;
  e.samples = samples;
  e.record = counts.json();
  e.record["loss"] = loss;
  e.record["samples"] = samples;
  e.summary = concat("loss ", loss, "  ", counts.summary());
  return e;
}

}  // namespace halo3d::apps
