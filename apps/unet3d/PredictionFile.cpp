#include "halo3d/apps/unet3d/PredictionFile.hpp"

#include <algorithm>

#include "halo3d/io/Hdf5.hpp"

namespace halo3d::apps {

namespace {

void writeStringAttribute(hid_t object, const std::string& path, const char* name,
                          const std::string& text) {
  h5::Id type = h5::check(H5Tcopy(H5T_C_S1), "H5Tcopy");
  h5::checkStatus(H5Tset_size(type, std::max<std::size_t>(1, text.size())), "H5Tset_size");
  h5::Id space = h5::check(H5Screate(H5S_SCALAR), "H5Screate");
  h5::Id attr = h5::check(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT),
                          "cannot create attribute '", name, "' in '", path, "'");
  h5::checkStatus(H5Awrite(attr, type, text.c_str()), "cannot write attribute '", name, "' of '",
                  path, "'");
}

}  // namespace

void writePrediction(const std::string& path, const Prediction& p) {
  const Extents3& e = p.extents;
  const std::size_t cells = std::size_t(e[0] * e[1] * e[2]);
  require<InputError>(p.labels.size() == cells, "prediction for '", path, "': ", p.labels.size(),
                      " labels for a volume of ", cells, " voxels");
  require<InputError>(
      p.probabilities.empty() || p.probabilities.size() == cells * std::size_t(p.classes),
      "prediction for '", path, "': ", p.probabilities.size(), " probabilities for ", p.classes,
      " classes of ", cells, " voxels");
  std::vector<std::uint8_t> labels(cells);
  for (std::size_t i = 0; i < cells; ++i) {
    require<InputError>(p.labels[i] >= 0 && p.labels[i] <= 255, "prediction for '", path,
                        "': label ", p.labels[i], " does not fit uint8");
    labels[i] = std::uint8_t(p.labels[i]);
  }
  const auto guard = h5::lock();
  h5::QuietErrors quiet;
  h5::writeFileAtomically(path, [&](hid_t file, const std::string& tmp) {
    h5::writeDataset(file, tmp, "labels", {e[0], e[1], e[2]}, ElementType::UInt8, labels.data());
    if (!p.probabilities.empty())
      h5::writeDataset(file, tmp, "probabilities", {p.classes, e[0], e[1], e[2]},
                       ElementType::Float32, p.probabilities.data());
    writeStringAttribute(file, tmp, "prediction", p.info_json);
  });
}

std::vector<std::int32_t> readPredictionLabels(const std::string& path, Extents3& extents) {
  const auto guard = h5::lock();
  h5::QuietErrors quiet;
  h5::Id file = h5::openFileSerial(path);
  h5::Id dset = h5::openDataset(file, path, "labels");
  const std::vector<index_t> s = h5::shapeOf(dset);
  require<IoError>(s.size() == 3, "dataset 'labels' of '", path, "' has shape ", s,
                   "; expected (D, H, W)");
  extents = {s[0], s[1], s[2]};
  std::vector<std::int32_t> labels(std::size_t(s[0] * s[1] * s[2]));
  h5::checkStatus(H5Dread(dset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, labels.data()),
                  "cannot read dataset 'labels' of '", path, "'");
  return labels;
}

}  // namespace halo3d::apps
