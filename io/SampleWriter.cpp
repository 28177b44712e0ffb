#include "halo3d/io/SampleWriter.hpp"

#include <algorithm>
#include <cmath>

#include "halo3d/io/Hdf5.hpp"

namespace halo3d {

namespace {

std::vector<index_t> withN(bool batched, index_t n, std::vector<index_t> shape) {
  if (batched) shape.insert(shape.begin(), n);
  return shape;
}

}  // namespace

void writeSampleFile(const std::string& path, SampleKind kind,
                     const std::vector<HostSample>& samples, const SampleFileOptions& options) {
  require<InputError>(!samples.empty(), "writeSampleFile '", path, "': no samples");
  require<InputError>(options.batched || samples.size() == 1, "writeSampleFile '", path,
                      "': ", samples.size(), " samples need the batched layout");
  require<InputError>(
      options.input_type == ElementType::Float32 || options.input_type == ElementType::Int16,
      "writeSampleFile '", path, "': input type ", elementTypeName(options.input_type),
      " (expected float32 or int16)");
  const HostSample& first = samples.front();
  const Extents3 e = first.extents;
  const index_t cells = e[0] * e[1] * e[2];
  const index_t n = index_t(samples.size());
  const bool cosmo = kind == SampleKind::CosmoFlow;
  const std::size_t width = first.targets.size();
  for (const HostSample& s : samples) {
    require<InputError>(s.channels == first.channels && s.extents == e &&
                            index_t(s.input.size()) == s.channels * cells,
                        "writeSampleFile '", path,
                        "': samples differ in shape or hold the wrong element count");
    require<InputError>(!cosmo || (s.targets.size() == width && width > 0), "writeSampleFile '",
                        path, "': CosmoFlow samples need the same number (> 0) of targets");
    require<InputError>(cosmo || index_t(s.labels.size()) == cells, "writeSampleFile '", path,
                        "': U-Net samples need one label per voxel");
  }
  std::vector<float> input;
  std::vector<float> targets;
  std::vector<std::uint8_t> labels;
  for (const HostSample& s : samples) {
    input.insert(input.end(), s.input.begin(), s.input.end());
    targets.insert(targets.end(), s.targets.begin(), s.targets.end());
    for (std::int32_t l : s.labels) {
      require<InputError>(l >= 0 && l <= 255, "writeSampleFile '", path, "': label ", l,
                          " does not fit uint8");
      labels.push_back(std::uint8_t(l));
    }
  }
  std::vector<std::int16_t> input16;
  if (options.input_type == ElementType::Int16)
    for (float v : input)
      input16.push_back(std::int16_t(std::clamp(std::lround(v), -32768L, 32767L)));

  const auto guard = h5::lock();
  h5::QuietErrors quiet;
  const SampleDatasets names = datasetsOf(kind);
  h5::writeFileAtomically(path, [&](hid_t file, const std::string& where) {
    const void* in = input16.empty() ? static_cast<const void*>(input.data()) : input16.data();
    h5::writeDataset(file, where, names.input,
                     withN(options.batched, n, {first.channels, e[0], e[1], e[2]}),
                     options.input_type, in);
    if (cosmo)
      h5::writeDataset(file, where, names.target,
                       withN(options.batched, n, {static_cast<index_t>(width)}),
                       ElementType::Float32, targets.data());
    else
      h5::writeDataset(file, where, names.target, withN(options.batched, n, {e[0], e[1], e[2]}),
                       ElementType::UInt8, labels.data());
  });
}

void convertCosmoFlowFile(const std::string& in, const std::string& out) {
  const auto guard = h5::lock();
  h5::QuietErrors quiet;
  h5::Id file = h5::openFileSerial(in);
  h5::Id full = h5::openDataset(file, in, "full");
  const std::vector<index_t> s = h5::shapeOf(full);
  const ElementType type = h5::elementTypeOf(full, in, "full");
  require<IoError>((s.size() == 4 || s.size() == 5) && s.back() <= 64, "dataset 'full' of file '",
                   in, "' has shape ", s,
                   "; expected channels-last (D, H, W, C) or (N, D, H, W, C)");
  const bool batched = s.size() == 5;
  const std::size_t o = batched ? 1 : 0;
  const index_t n = batched ? s[0] : 1, d = s[o], h = s[o + 1], w = s[o + 2], c = s[o + 3];
  const std::size_t esize = elementSize(type);
  const std::size_t cells = std::size_t(d * h * w);
  std::vector<unsigned char> src(std::size_t(n) * cells * std::size_t(c) * esize), dst(src.size());
  h5::checkStatus(H5Dread(full, h5::nativeType(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, src.data()),
                  "cannot read dataset 'full' of file '", in, "'");
  // (.., cell, channel) -> (.., channel, cell), element by element of any size.
  for (index_t k = 0; k < n; ++k)
    for (std::size_t x = 0; x < cells; ++x)
      for (index_t ch = 0; ch < c; ++ch) {
        const std::size_t from =
            ((std::size_t(k) * cells + x) * std::size_t(c) + std::size_t(ch)) * esize;
        const std::size_t to =
            ((std::size_t(k) * std::size_t(c) + std::size_t(ch)) * cells + x) * esize;
        std::copy(src.begin() + std::ptrdiff_t(from), src.begin() + std::ptrdiff_t(from + esize),
                  dst.begin() + std::ptrdiff_t(to));
      }
  h5::Id par = h5::openDataset(file, in, "unitPar");
  const std::vector<index_t> ps = h5::shapeOf(par);
  index_t target_count = 1;
  for (index_t x : ps)
    target_count *= x;
  std::vector<float> targets(static_cast<std::size_t>(target_count));
  h5::checkStatus(H5Dread(par, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, targets.data()),
                  "cannot read dataset 'unitPar' of file '", in, "'");
  h5::writeFileAtomically(out, [&](hid_t f, const std::string& where) {
    h5::writeDataset(f, where, "full", withN(batched, n, {c, d, h, w}), type, dst.data());
    h5::writeDataset(f, where, "unitPar", ps, ElementType::Float32, targets.data());
  });
}

}  // namespace halo3d
