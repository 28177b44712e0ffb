#include "halo3d/io/SampleFormat.hpp"

#include <vector>

#include "halo3d/core/EnumNames.hpp"
#include "halo3d/io/Hdf5.hpp"

namespace halo3d {

namespace {
constexpr EnumName<SampleKind> kSampleKindNames[] = {{SampleKind::CosmoFlow, "cosmoflow"},
                                                     {SampleKind::UNet, "unet"}};
}  // namespace

SampleKind parseSampleKind(std::string_view text) {
  return parseName(kSampleKindNames, std::string(text), "sample kind");
}

const char* sampleKindName(SampleKind kind) {
  return nameOf(kSampleKindNames, kind);
}

SampleDatasets datasetsOf(SampleKind kind) {
  if (kind == SampleKind::CosmoFlow) return {"full", "unitPar"};
  return {"volume", "segmentation"};
}

namespace {

// "(2, 4)": shapes print as tuples, like numpy's and h5py's.
std::string tuple(const std::vector<index_t>& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// CosmoFlow's original files hold full as (D, H, W, C): a cube followed by a few channels.
bool looksChannelsLast(const std::vector<index_t>& s) {
  const std::size_t r = s.size();
  return s[r - 1] <= 16 && s[r - 4] > 16 && s[r - 4] == s[r - 3] && s[r - 3] == s[r - 2];
}

void inspectInput(hid_t file, SampleFileLayout& out, const char* name) {
  h5::Id dset = h5::openDataset(file, out.path, name);
  const std::vector<index_t> s = h5::shapeOf(dset);
  out.input_type = h5::elementTypeOf(dset, out.path, name);
  const std::string where = concat("dataset '", name, "' of file '", out.path, "'");
  require<IoError>(s.size() == 4 || s.size() == 5, where, " has shape ", tuple(s), " (rank ",
                   s.size(), "); expected (C, D, H, W) or (N, C, D, H, W)");
  for (index_t e : s)
    require<IoError>(e > 0, where, " has an empty extent in shape ", tuple(s));
  require<IoError>(out.kind != SampleKind::CosmoFlow || !looksChannelsLast(s), where, " has shape ",
                   tuple(s),
                   ", which looks channels-last (D, H, W, C); convert it with "
                   "`halo3d-datagen convert-cosmoflow IN OUT`");
  require<IoError>(out.input_type == ElementType::Float32 || out.input_type == ElementType::Int16,
                   where, " holds ", elementTypeName(out.input_type),
                   "; expected float32 or int16");
  out.batched = s.size() == 5;
  const std::size_t o = out.batched ? 1 : 0;
  out.samples = out.batched ? s[0] : 1;
  out.channels = s[o];
  out.extents = {s[o + 1], s[o + 2], s[o + 3]};
}

void inspectTargets(hid_t file, SampleFileLayout& out, const char* name) {
  h5::Id dset = h5::openDataset(file, out.path, name);
  const std::vector<index_t> s = h5::shapeOf(dset);
  out.target_type = h5::elementTypeOf(dset, out.path, name);
  const std::string where = concat("dataset '", name, "' of file '", out.path, "'");
  require<IoError>(
      out.target_type == ElementType::Float32 || out.target_type == ElementType::Float64, where,
      " holds ", elementTypeName(out.target_type), "; expected float32 or float64");
  if (out.batched) {
    require<IoError>(s.size() == 2 && s[0] == out.samples && s[1] > 0, where, " has shape ",
                     tuple(s), "; expected (", out.samples, ", T) to match the ", out.samples,
                     " samples of '", datasetsOf(out.kind).input, "'");
    out.target_width = s[1];
  } else {
    require<IoError>(s.size() == 1 && s[0] > 0, where, " has shape ", tuple(s),
                     "; expected (T,) for a file of one sample");
    out.target_width = s[0];
  }
}

void inspectLabels(hid_t file, SampleFileLayout& out, const char* name) {
  h5::Id dset = h5::openDataset(file, out.path, name);
  const std::vector<index_t> s = h5::shapeOf(dset);
  out.target_type = h5::elementTypeOf(dset, out.path, name);
  const std::string where = concat("dataset '", name, "' of file '", out.path, "'");
  require<IoError>(isInteger(out.target_type), where, " holds ", elementTypeName(out.target_type),
                   "; expected integer class ids");
  std::vector<index_t> expected;
  if (out.batched) expected.push_back(out.samples);
  expected.insert(expected.end(), out.extents.begin(), out.extents.end());
  require<IoError>(s == expected, where, " has shape ", tuple(s), "; expected ", tuple(expected),
                   " to match '", datasetsOf(out.kind).input, "'");
}

}  // namespace

SampleFileLayout inspectSampleFile(const std::string& path, SampleKind kind) {
  SampleFileLayout out;
  out.path = path;
  out.kind = kind;
  const auto guard = h5::lock();
  h5::Id file = h5::openFileSerial(path);
  const SampleDatasets names = datasetsOf(kind);
  inspectInput(file, out, names.input);
  if (kind == SampleKind::CosmoFlow)
    inspectTargets(file, out, names.target);
  else
    inspectLabels(file, out, names.target);
  return out;
}

}  // namespace halo3d
