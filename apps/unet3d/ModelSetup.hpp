#pragma once
// What train, eval and predict agree on: the model configuration from the flags and the data, the
// checks that the data fits it, the read options and the loss.

#include <string>

#include "halo3d/apps/unet3d/Options.hpp"
#include "halo3d/apps/unet3d/Segmentation.hpp"
#include "halo3d/io/HyperslabReader.hpp"
#include "halo3d/io/SampleCatalog.hpp"
#include "halo3d/nn/models/UNet3d.hpp"

namespace halo3d::apps {

// The U-Net of the flags for samples of `catalog`. With `whole_samples` (train, eval) the model's
// input is the sample volume, which must be cubic and match --input-size when given; otherwise
// (predict) the caller sets the input volume. Throws InputError naming the flag and the value.
nn::UNetConfig modelConfig(const UNetOptions& o, const SampleCatalog& catalog, bool whole_samples);

// Checks the class count a data set declares against --classes: the `classes` list of the
// datagen.json manifest beside the files of `data_path`, when there is one. (Labels outside [0,
// classes) are refused by the reader, naming the file and the voxel.) Throws InputError naming both
// counts.
void checkDeclaredClasses(const std::string& data_path, index_t classes);

// The read options: the input transform and the class range labels must lie in.
ReadOptions readOptions(const UNetOptions& o);

// The run configuration stored in checkpoints (nothing about the partition).
std::string configJson(const UNetOptions& o, const nn::UNetConfig& c);

// The model's output must be split like the labels: throws InputError naming the grid if the
// network's coarsest level is too small for it (the model then replicates the decoder over the
// spatial group).
void requireSpatialOutput(const nn::ModelPlan& plan, const nn::UNetConfig& c);
void requireSpatialOutput(const nn::Model& model, const GridShape& grid, const nn::UNetConfig& c);

// The loss `kind` of `logits` against `labels`, identical on every rank; fills `dlogits` unless it
// is null.
double segmentationLoss(SegmentationLoss kind, const ProcessGrid& grid,
                        const nn::Activation& logits, const Labels& labels,
                        nn::Activation* dlogits);

// The labels block of a model output: (N, 1, D, H, W) over the same samples and owned cells.
Labels labelsLike(const nn::Activation& logits, const std::string& label);

}  // namespace halo3d::apps
