#include "halo3d/io/synthetic/SyntheticDataset.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "halo3d/io/Collective.hpp"
#include "halo3d/io/IoError.hpp"
#include "halo3d/io/SampleWriter.hpp"
#include "halo3d/io/synthetic/SegmentationGenerator.hpp"

namespace halo3d {

namespace {

void validate(const SyntheticDatasetSpec& s) {
  require<InputError>(s.count >= 1, "--count ", s.count, " must be >= 1");
  require<InputError>(s.per_file >= 1, "--samples-per-file ", s.per_file, " must be >= 1");
  require<InputError>(s.channels >= 1, "--channels ", s.channels, " must be >= 1");
  require<InputError>(s.size >= (s.kind == SampleKind::CosmoFlow ? 2 : 4), "--size ", s.size,
                      " is too small");
  require<InputError>(s.kind != SampleKind::CosmoFlow || s.mean_count > 0, "--mean-count ",
                      s.mean_count, " must be > 0");
  require<InputError>(!s.out.empty(), "--out: no output directory given");
  require<InputError>(s.input_type == ElementType::Int16 || s.input_type == ElementType::Float32,
                      "--dtype ", elementTypeName(s.input_type), ": expected int16 or float32");
}

std::string fileName(const SyntheticDatasetSpec& s, index_t f) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s_%06lld.h5", sampleKindName(s.kind),
                static_cast<long long>(f));
  return (std::filesystem::path(s.out) / name).string();
}

void writeManifest(const SyntheticDatasetSpec& s, index_t files) {
  nlohmann::json j = {{"generator", "halo3d-datagen"},
                      {"kind", sampleKindName(s.kind)},
                      {"size", s.size},
                      {"count", s.count},
                      {"samples_per_file", s.per_file},
                      {"files", files},
                      {"channels", s.channels},
                      {"seed", s.seed},
                      {"dtype", elementTypeName(s.input_type)}};
  if (s.kind == SampleKind::CosmoFlow) {
    const CosmoFlowRanges r;
    j["mean_count"] = s.mean_count;
    j["unitPar"] = {{"names", {"amplitude", "slope", "turnover", "nonlinearity"}},
                    {"lo", r.lo.asArray()},
                    {"hi", r.hi.asArray()}};
  } else {
    j["classes"] = {"background", "organ", "lesion"};
  }
  const std::string path = (std::filesystem::path(s.out) / "datagen.json").string();
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  require<IoError>(bool(out), "cannot write '", path, "'");
}

}  // namespace

HostSample syntheticSample(const SyntheticDatasetSpec& spec, index_t index) {
  HostSample s;
  s.channels = spec.channels;
  s.extents = {spec.size, spec.size, spec.size};
  if (spec.kind == SampleKind::CosmoFlow) {
    CosmoFlowSpec cs;
    cs.size = spec.size;
    cs.channels = spec.channels;
    cs.mean_count = spec.mean_count;
    const CosmoFlowParams p = drawCosmoFlowParams(spec.seed, index, cs.ranges);
    s.input = generateCosmoFlowCounts(p, cs, spec.seed, index);
    const auto unit = cs.ranges.normalise(p);
    s.targets.assign(unit.begin(), unit.end());
  } else {
    SegmentationSample g = generateSegmentationSample({spec.size, spec.channels}, spec.seed, index);
    s.input = std::move(g.volume);
    s.labels = std::move(g.labels);
  }
  return s;
}

std::vector<std::string> writeSyntheticDataset(const SyntheticDatasetSpec& spec, MPI_Comm comm,
                                               const DatagenProgress& progress) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  runCollectively(comm, [&] { validate(spec); });  // before dividing by per_file
  const index_t files = (spec.count + spec.per_file - 1) / spec.per_file;
  runCollectively(comm, [&] {
    if (rank == 0) {
      std::error_code ec;
      std::filesystem::create_directories(spec.out, ec);
      require<IoError>(std::filesystem::is_directory(spec.out), "cannot create output directory '",
                       spec.out, "'", ec ? ": " + ec.message() : std::string());
      writeManifest(spec, files);
    }
  });
  const index_t mine = files / size + (rank < files % size ? 1 : 0);
  index_t done = 0;
  runCollectively(comm, [&] {
    for (index_t f = rank; f < files; f += size) {
      std::vector<HostSample> samples;
      for (index_t i = f * spec.per_file; i < std::min(spec.count, (f + 1) * spec.per_file); ++i)
        samples.push_back(syntheticSample(spec, i));
      writeSampleFile(fileName(spec, f), spec.kind, samples, {spec.input_type, spec.per_file > 1});
      if (progress) progress(++done, mine);
    }
  });
  std::vector<std::string> paths;
  for (index_t f = 0; f < files; ++f)
    paths.push_back(fileName(spec, f));
  return paths;
}

}  // namespace halo3d
