#pragma once
// What CosmoFlow brings to the shared training driver: the network of the flags for the data's
// cube size and channels, the mean-squared error of the 4 regressed parameters, and the evaluation
// (MSE beside that of always predicting a mean target: the model must beat it).

#include <array>
#include <string>

#include "halo3d/apps/common/TrainingTask.hpp"
#include "halo3d/apps/cosmoflow/Options.hpp"
#include "halo3d/nn/models/CosmoFlow.hpp"

namespace halo3d::apps {

class CosmoFlowTask : public TrainingTask {
 public:
  explicit CosmoFlowTask(const CosmoFlowOptions& options) : _o(options) {}

  // The baseline of evaluate(): the MSE of always predicting `mean`, called `what` in the summary
  // ("the training mean"). Must be set before evaluate().
  void setBaseline(const std::array<double, 4>& mean, std::string what);

  const char* program() const override { return "cosmoflow"; }
  void configure(const SampleCatalog& data) override;
  SampleKind sampleKind() const override { return SampleKind::CosmoFlow; }
  ReadOptions readOptions() const override;
  std::unique_ptr<nn::Model> makeModel(std::shared_ptr<nn::ParameterStore> store) const override;
  std::string describe(const nn::Model& model, const ProcessGrid& grid,
                       index_t batch) const override;
  std::string configJson() const override;
  double loss(const ProcessGrid& grid, const nn::Model& model, const Batch<>& batch,
              nn::Activation* doutput) const override;
  std::string lossName() const override { return "mse"; }
  EvaluationResult evaluate(const ProcessGrid& grid, ModelCache& models,
                            DataLoader<>& loader) override;

 private:
  const CosmoFlowOptions& _o;
  nn::CosmoFlowConfig _config;
  std::array<double, 4> _baseline_mean{0, 0, 0, 0};
  std::string _baseline_name;
};

// The mean of every target over a data set, in file order (each spatial group reads its samples'
// targets). Collective.
std::array<double, 4> targetMean(const ProcessGrid& grid, DataLoader<>& loader);

}  // namespace halo3d::apps
