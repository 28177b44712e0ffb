// halo3d-datagen: writes synthetic sample files (real HDF5, in halo3d's layouts), converts original
// channels-last CosmoFlow files, and checks sample files.
//
//   halo3d-datagen cosmoflow --size 64 --count 64 --seed 1 --samples-per-file 8 --out data/cosmo
//   halo3d-datagen segmentation --size 64 --count 32 --seed 1 --out data/unet
//   mpirun -np 4 halo3d-datagen cosmoflow --size 128 --count 256 --out data/big   (files split)
//   halo3d-datagen convert-cosmoflow original.hdf5 converted.h5
//   halo3d-datagen inspect --kind cosmoflow data/cosmo
#include <mpi.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "halo3d/io/Collective.hpp"
#include "halo3d/io/SampleCatalog.hpp"
#include "halo3d/io/SampleWriter.hpp"
#include "halo3d/io/synthetic/SyntheticDataset.hpp"

namespace {

using namespace halo3d;

int rankOf(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

// Progress on rank 0: every file for short runs, every ~5% otherwise.
DatagenProgress progressPrinter() {
  if (rankOf(MPI_COMM_WORLD) != 0) return {};
  auto start = std::chrono::steady_clock::now();
  return [start](index_t done, index_t total) {
    const index_t every = std::max<index_t>(1, total / 20);
    if (done % every != 0 && done != total) return;
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("[datagen] rank 0: %lld/%lld files (%.1f s)\n", static_cast<long long>(done),
                static_cast<long long>(total), s);
    std::fflush(stdout);
  };
}

void addGeneratorOptions(CLI::App* cmd, SyntheticDatasetSpec& spec, std::string& dtype) {
  cmd->add_option("--size", spec.size, "edge of the cubic volume (samples are C x N x N x N)")
      ->capture_default_str();
  cmd->add_option("--count", spec.count, "number of samples")->capture_default_str();
  cmd->add_option("--seed", spec.seed, "seed: the same seed gives the same files on any rank count")
      ->capture_default_str();
  cmd->add_option("--samples-per-file", spec.per_file,
                  "samples per file (> 1 adds the leading N axis)")
      ->capture_default_str();
  cmd->add_option("--channels", spec.channels, "channels per sample")->capture_default_str();
  cmd->add_option("--out", spec.out, "output directory (created if missing)")->required();
  cmd->add_option("--dtype", dtype, "element type of the input dataset")
      ->check(CLI::IsMember({"int16", "float32"}))
      ->capture_default_str();
}

ElementType parseType(const std::string& t) {
  return t == "int16" ? ElementType::Int16 : ElementType::Float32;
}

int generate(SyntheticDatasetSpec spec, const std::string& dtype) {
  spec.input_type = parseType(dtype);
  const auto start = std::chrono::steady_clock::now();
  const auto files = writeSyntheticDataset(spec, MPI_COMM_WORLD, progressPrinter());
  if (rankOf(MPI_COMM_WORLD) == 0) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("[datagen] wrote %lld %s samples of %lld^3 x %lld in %zu files to %s (%.1f s)\n",
                static_cast<long long>(spec.count), sampleKindName(spec.kind),
                static_cast<long long>(spec.size), static_cast<long long>(spec.channels),
                files.size(), spec.out.c_str(), s);
  }
  return 0;
}

int inspect(const std::vector<std::string>& paths, const std::string& kind) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    const auto more = listSampleFiles(p);
    files.insert(files.end(), more.begin(), more.end());
  }
  const SampleCatalog c = SampleCatalog::open(files, parseSampleKind(kind), MPI_COMM_WORLD);
  if (rankOf(MPI_COMM_WORLD) != 0) return 0;
  for (int f = 0; f < c.fileCount(); ++f) {
    const SampleFileLayout& l = c.file(f);
    std::printf("%s: %lld sample(s)%s, input %s (C=%lld, %lld x %lld x %lld), %s %s\n",
                l.path.c_str(), static_cast<long long>(l.samples), l.batched ? " (batched)" : "",
                elementTypeName(l.input_type), static_cast<long long>(l.channels),
                static_cast<long long>(l.extents[0]), static_cast<long long>(l.extents[1]),
                static_cast<long long>(l.extents[2]), datasetsOf(c.kind()).target,
                elementTypeName(l.target_type));
  }
  std::printf("ok: %lld samples in %d files\n", static_cast<long long>(c.size()), c.fileCount());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const bool root = rankOf(MPI_COMM_WORLD) == 0;
  CLI::App app{
      "halo3d-datagen: synthetic CosmoFlow and U-Net HDF5 samples, CosmoFlow conversion, checks"};
  app.require_subcommand(1);

  SyntheticDatasetSpec cosmo;
  cosmo.kind = SampleKind::CosmoFlow;
  std::string cosmo_dtype = "int16";
  auto* cosmo_cmd =
      app.add_subcommand("cosmoflow", "4-channel density cubes with 4 learnable parameters");
  addGeneratorOptions(cosmo_cmd, cosmo, cosmo_dtype);
  cosmo_cmd->add_option("--mean-count", cosmo.mean_count, "mean Poisson count per voxel")
      ->capture_default_str();

  SyntheticDatasetSpec seg;
  seg.kind = SampleKind::UNet;
  seg.channels = 1;
  std::string seg_dtype = "float32";
  auto* seg_cmd =
      app.add_subcommand("segmentation", "CT-like volumes of organs and lesions, 3 classes");
  addGeneratorOptions(seg_cmd, seg, seg_dtype);

  std::string in, out;
  auto* convert_cmd = app.add_subcommand("convert-cosmoflow",
                                         "convert channels-last CosmoFlow (D,H,W,C) to (C,D,H,W)");
  convert_cmd->add_option("IN", in, "original CosmoFlow file")->required();
  convert_cmd->add_option("OUT", out, "converted file")->required();

  std::vector<std::string> paths;
  std::string kind = "cosmoflow";
  auto* inspect_cmd = app.add_subcommand(
      "inspect", "check sample files (or directories of them) and print their layout");
  inspect_cmd->add_option("PATHS", paths, "files or directories")->required();
  inspect_cmd->add_option("--kind", kind, "sample layout")
      ->check(CLI::IsMember({"cosmoflow", "unet"}));

  int status = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    status = root ? app.exit(e) : (e.get_exit_code() != 0 ? 1 : 0);
    MPI_Finalize();
    return status;
  }
  try {
    if (*cosmo_cmd) status = generate(cosmo, cosmo_dtype);
    if (*seg_cmd) status = generate(seg, seg_dtype);
    if (*convert_cmd)
      runCollectively(MPI_COMM_WORLD, [&] {
        if (root) convertCosmoFlowFile(in, out);
      });
    if (*inspect_cmd) status = inspect(paths, kind);
  } catch (const std::exception& e) {
    // Every rank holds the same error (agreed collectively); one report is enough.
    if (root) std::fprintf(stderr, "halo3d-datagen: error: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
