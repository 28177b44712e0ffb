#pragma once
// What the 3D U-Net brings to the shared training driver: the network of the flags for the data's
// volume and channels (checked to end split like the labels), the segmentation loss of --loss, and
// the evaluation (loss and per-class Dice of the argmax against the true labels).

#include <string>

#include "halo3d/apps/common/TrainingTask.hpp"
#include "halo3d/apps/unet3d/Options.hpp"
#include "halo3d/nn/models/UNet3d.hpp"

namespace halo3d::apps {

class UNetTask : public TrainingTask {
 public:
  explicit UNetTask(const UNetOptions& options) : _o(options) {}

  const char* program() const override { return "unet3d"; }
  SampleCatalog openData(const std::string& path, const char* flag,
                         const ProcessGrid& grid) const override;
  void configure(const SampleCatalog& data) override;
  SampleKind sampleKind() const override { return SampleKind::UNet; }
  ReadOptions readOptions() const override;
  std::unique_ptr<nn::Model> makeModel(std::shared_ptr<nn::ParameterStore> store) const override;
  void checkPlan(const nn::ModelPlan& plan) const override;
  std::string describe(const nn::Model& model, const ProcessGrid& grid,
                       index_t batch) const override;
  std::string configJson() const override;
  double loss(const ProcessGrid& grid, const nn::Model& model, const Batch<>& batch,
              nn::Activation* doutput) const override;
  std::string lossName() const override { return segmentationLossName(_o.loss); }
  EvaluationResult evaluate(const ProcessGrid& grid, ModelCache& models,
                            DataLoader<>& loader) override;

 private:
  const UNetOptions& _o;
  nn::UNetConfig _config;
};

}  // namespace halo3d::apps
