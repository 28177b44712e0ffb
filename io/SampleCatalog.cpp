#include "halo3d/io/SampleCatalog.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <exception>
#include <filesystem>

#include "halo3d/io/Collective.hpp"
#include "halo3d/io/Hdf5.hpp"

namespace halo3d {

namespace {

nlohmann::json toJson(const SampleFileLayout& l) {
  return {{"path", l.path},
          {"samples", l.samples},
          {"batched", l.batched},
          {"channels", l.channels},
          {"extents", l.extents},
          {"input_type", int(l.input_type)},
          {"target_type", int(l.target_type)},
          {"target_width", l.target_width}};
}

SampleFileLayout fromJson(const nlohmann::json& j, SampleKind kind) {
  SampleFileLayout l;
  l.path = j.at("path").get<std::string>();
  l.kind = kind;
  l.samples = j.at("samples").get<index_t>();
  l.batched = j.at("batched").get<bool>();
  l.channels = j.at("channels").get<index_t>();
  l.extents = j.at("extents").get<Extents3>();
  l.input_type = ElementType(j.at("input_type").get<int>());
  l.target_type = ElementType(j.at("target_type").get<int>());
  l.target_width = j.at("target_width").get<index_t>();
  return l;
}

}  // namespace

SampleCatalog SampleCatalog::fromLayouts(std::vector<SampleFileLayout> layouts, SampleKind kind) {
  require<IoError>(!layouts.empty(), "no sample files given");
  SampleCatalog c;
  c._kind = kind;
  c._files = std::move(layouts);
  const SampleFileLayout& ref = c._files.front();
  const char* input = datasetsOf(kind).input;
  for (const SampleFileLayout& f : c._files) {
    require<IoError>(f.channels == ref.channels && f.extents == ref.extents, "dataset '", input,
                     "' of file '", f.path, "' holds samples of (C, D, H, W) = (", f.channels, ", ",
                     f.extents[0], ", ", f.extents[1], ", ", f.extents[2], ") but '", ref.path,
                     "' holds (", ref.channels, ", ", ref.extents[0], ", ", ref.extents[1], ", ",
                     ref.extents[2], "): all samples must have the same size");
    require<IoError>(f.target_width == ref.target_width, "dataset '", datasetsOf(kind).target,
                     "' of file '", f.path, "' holds ", f.target_width, " targets per sample but '",
                     ref.path, "' holds ", ref.target_width);
    c._first.push_back(c._total);
    c._total += f.samples;
  }
  return c;
}

SampleCatalog SampleCatalog::openLocal(const std::vector<std::string>& files, SampleKind kind) {
  std::vector<SampleFileLayout> layouts;
  for (const std::string& f : files)
    layouts.push_back(inspectSampleFile(f, kind));
  return fromLayouts(std::move(layouts), kind);
}

SampleCatalog SampleCatalog::open(const std::vector<std::string>& files, SampleKind kind,
                                  MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // Each rank inspects its share; a failure is recorded per file so that every rank reports the
  // same (first) file whatever the rank count.
  nlohmann::json mine = nlohmann::json::array();
  for (std::size_t i = std::size_t(rank); i < files.size(); i += std::size_t(size)) {
    try {
      mine.push_back({{"file", i}, {"layout", toJson(inspectSampleFile(files[i], kind))}});
    } catch (const std::exception& e) {
      mine.push_back({{"file", i}, {"error", e.what()}});
    }
  }
  std::vector<nlohmann::json> by_file(files.size());
  for (const std::string& part : allgatherStrings(mine.dump(), comm))
    for (const auto& entry : nlohmann::json::parse(part))
      by_file[entry.at("file").get<std::size_t>()] = entry;
  std::vector<SampleFileLayout> layouts;
  for (const auto& entry : by_file) {
    if (entry.contains("error")) throw IoError(entry.at("error").get<std::string>());
    layouts.push_back(fromJson(entry.at("layout"), kind));
  }
  // Every rank holds the same layouts, so every rank reaches the same verdict.
  return fromLayouts(std::move(layouts), kind);
}

Shape5 SampleCatalog::batchShape(index_t n) const {
  const Extents3 e = extents();
  return {n, channels(), e[0], e[1], e[2]};
}

index_t SampleCatalog::sampleElements() const {
  const Extents3 e = extents();
  return channels() * e[0] * e[1] * e[2];
}

SampleLocation SampleCatalog::locate(index_t id) const {
  require<InputError>(id >= 0 && id < _total, "sample id ", id, " outside the ", _total,
                      " samples of the data set");
  const auto it = std::upper_bound(_first.begin(), _first.end(), id);
  const int file = int(it - _first.begin()) - 1;
  return {file, id - _first[std::size_t(file)]};
}

std::vector<std::string> listSampleFiles(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return {path};
  require<IoError>(fs::is_directory(path, ec), "data path '", path,
                   "' is neither a file nor a directory");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".h5" || ext == ".hdf5"))
      files.push_back(entry.path().string());
  }
  require<IoError>(!ec, "cannot list directory '", path, "': ", ec.message());
  require<IoError>(!files.empty(), "directory '", path, "' holds no .h5 or .hdf5 sample files");
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace halo3d
