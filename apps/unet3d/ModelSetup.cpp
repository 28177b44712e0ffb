#include "halo3d/apps/unet3d/ModelSetup.hpp"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "halo3d/apps/common/RunSupport.hpp"
#include "halo3d/core/EnumNames.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/nn/Loss.hpp"

namespace halo3d::apps {

nn::UNetConfig modelConfig(const UNetOptions& o, const SampleCatalog& catalog, bool whole_samples) {
  require<InputError>(o.in_channels == 0 || o.in_channels == catalog.channels(), "--in-channels ",
                      o.in_channels, " does not match the data's ", catalog.channels(),
                      " input channels");
  nn::UNetConfig c;
  c.in_channels = catalog.channels();
  c.base = o.base;
  c.depth = o.depth;
  c.classes = o.classes;
  c.bn_group = statsGroupOf(o.bn_stats);
  const Extents3 e = catalog.extents();
  if (whole_samples) {
    require<InputError>(e[0] == e[1] && e[1] == e[2],
                        "training and evaluation need cubic samples; the data holds ", e[0], "x",
                        e[1], "x", e[2]);
    require<InputError>(o.input_size == 0 || o.input_size == e[0], "--input-size ", o.input_size,
                        " does not match the data's samples of ", e[0], "^3");
    c.input_size = e[0];
  }
  require<InputError>(c.depth >= 1 && c.depth <= 8, "--depth must be in [1, 8], got ", c.depth);
  if (!whole_samples)
    c.input_size = index_t(1) << c.depth;  // a placeholder: predict sets the volume
  c.validate();
  return c;
}

void checkDeclaredClasses(const std::string& data_path, index_t classes) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::is_directory(data_path) ? fs::path(data_path) : fs::path(data_path).parent_path();
  const fs::path manifest = dir / "datagen.json";
  if (!fs::exists(manifest)) return;
  nlohmann::json j;
  try {
    std::ifstream(manifest) >> j;
  } catch (const std::exception& e) {
    throw InputError(concat("cannot parse '", manifest.string(), "': ", e.what()));
  }
  if (!j.contains("classes") || !j["classes"].is_array()) return;
  const index_t declared = index_t(j["classes"].size());
  require<InputError>(declared == classes, "the data set '", data_path, "' declares ", declared,
                      " classes (", j["classes"].dump(), " in ", manifest.string(),
                      ") but --classes is ", classes);
}

ReadOptions readOptions(const UNetOptions& o) {
  ReadOptions r = sharedReadOptions(o);
  require<InputError>(o.classes >= 2 && o.classes <= 255, "--classes must be in [2, 255], got ",
                      o.classes);
  r.num_classes = int(o.classes);
  return r;
}

std::string configJson(const UNetOptions& o, const nn::UNetConfig& c) {
  nlohmann::json j;
  j["model"] = "unet3d";
  j["input_size"] = c.input_size;
  j["in_channels"] = c.in_channels;
  j["base"] = c.base;
  j["depth"] = c.depth;
  j["classes"] = c.classes;
  j["bn_stats"] = o.bn_stats;
  j["loss"] = segmentationLossName(o.loss);
  addOptimisationConfig(j, o);
  j["transform"] = o.transform;
  return j.dump();
}

void requireSpatialOutput(const nn::ModelPlan& plan, const nn::UNetConfig& c) {
  if (plan.node(plan.order().back()).spec.dist == nn::Distribution::Spatial) return;
  const GridShape& grid = plan.grid();
  const Extents3 e = c.extents();
  throw InputError(
      concat("grid ", grid.str(), " splits the volume too finely for a U-Net of depth ", c.depth,
             ": its coarsest level (", e[0] >> c.depth, "x", e[1] >> c.depth, "x", e[2] >> c.depth,
             ") cannot be split that way; use fewer spatial ranks, a smaller "
             "--depth or a larger volume"));
}

void requireSpatialOutput(const nn::Model& model, const GridShape& grid, const nn::UNetConfig& c) {
  require<InputError>(model.builtPlan().grid() == grid,
                      "requireSpatialOutput: the model was built for grid ",
                      model.builtPlan().grid().str(), ", not ", grid.str());
  requireSpatialOutput(model.builtPlan(), c);
}

namespace {
constexpr EnumName<SegmentationLoss> kSegmentationLossNames[] = {
    {SegmentationLoss::CrossEntropy, "ce"}, {SegmentationLoss::Dice, "dice"}};
}  // namespace

const char* segmentationLossName(SegmentationLoss loss) {
  return nameOf(kSegmentationLossNames, loss);
}

double segmentationLoss(SegmentationLoss kind, const ProcessGrid& grid,
                        const nn::Activation& logits, const Labels& labels,
                        nn::Activation* dlogits) {
  if (kind == SegmentationLoss::Dice) return nn::DiceLoss().compute(grid, logits, labels, dlogits);
  return nn::CrossEntropyLoss().compute(grid, logits, labels, dlogits);
}

Labels labelsLike(const nn::Activation& logits, const std::string& label) {
  const TensorBlock& b = logits.block();
  Shape5 s = b.globalShape();
  s[1] = 1;
  return Labels(label, TensorBlock(s, b.sampleBegin(), b.sampleEnd(), b.owned(), {}));
}

}  // namespace halo3d::apps
