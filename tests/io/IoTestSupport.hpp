#pragma once
// Shared helpers of the io/ tests (with support/SharedTempDir.hpp): sample files whose
// every value encodes its global position, and raw HDF5 writes for malformed files.
#include <hdf5.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "halo3d/io/Hdf5.hpp"
#include "halo3d/io/SampleCatalog.hpp"
#include "halo3d/io/SampleWriter.hpp"
#include "support/MpiWorld.hpp"
#include "support/SharedTempDir.hpp"

namespace halo3d::testing {

// A distinct value for every (sample, c, d, h, w); small enough for int16 (< 32768) in the int16
// variant.
inline float encode(index_t id, index_t c, index_t d, index_t h, index_t w, bool int16) {
  const index_t code = (((id * 7 + c) * 31 + d) * 29 + h) * 23 + w;
  return int16 ? float(code % 32749) : float(code) * 0.5f;
}
inline std::int32_t labelOf(index_t id, index_t d, index_t h, index_t w, int classes = 3) {
  return std::int32_t((id + d * 3 + h * 5 + w) % classes);
}
inline float targetOf(index_t id, index_t t) {
  return float(id) + 0.25f * float(t);
}

inline HostSample encodedSample(SampleKind kind, index_t id, index_t channels, const Extents3& e,
                                bool int16, index_t targets = 4) {
  HostSample s;
  s.channels = channels;
  s.extents = e;
  for (index_t c = 0; c < channels; ++c)
    for (index_t d = 0; d < e[0]; ++d)
      for (index_t h = 0; h < e[1]; ++h)
        for (index_t w = 0; w < e[2]; ++w)
          s.input.push_back(encode(id, c, d, h, w, int16));
  if (kind == SampleKind::CosmoFlow) {
    for (index_t t = 0; t < targets; ++t)
      s.targets.push_back(targetOf(id, t));
  } else {
    for (index_t d = 0; d < e[0]; ++d)
      for (index_t h = 0; h < e[1]; ++h)
        for (index_t w = 0; w < e[2]; ++w)
          s.labels.push_back(labelOf(id, d, h, w));
  }
  return s;
}

// Which samples a file of the standard test set holds and how.
struct TestFile {
  std::string name;
  index_t first, count;
  bool int16, batched;
};

// The standard set: 7 samples over 4 files mixing float32 and int16, one sample per file and
// several.
inline std::vector<TestFile> standardFiles() {
  return {{"a.h5", 0, 3, false, true},
          {"b.h5", 3, 1, true, false},
          {"c.h5", 4, 2, true, true},
          {"d.h5", 6, 1, false, false}};
}
inline bool isInt16Sample(index_t id) {
  for (const TestFile& f : standardFiles())
    if (id >= f.first && id < f.first + f.count) return f.int16;
  return false;
}

// Rank 0 writes the standard set into `dir`; returns the paths on every rank. Collective over
// `comm`.
inline std::vector<std::string> writeStandardFiles(const SharedTempDir& dir, SampleKind kind,
                                                   index_t channels, const Extents3& e,
                                                   MPI_Comm comm = MPI_COMM_WORLD) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<std::string> paths;
  const std::string prefix = kind == SampleKind::CosmoFlow ? "cosmo_" : "unet_";
  for (const TestFile& f : standardFiles()) {
    paths.push_back(dir.file(prefix + f.name));
    if (rank != 0) continue;
    std::vector<HostSample> samples;
    for (index_t k = 0; k < f.count; ++k)
      samples.push_back(encodedSample(kind, f.first + k, channels, e, f.int16));
    SampleFileOptions opt;
    opt.batched = f.batched;
    opt.input_type = f.int16 ? ElementType::Int16 : ElementType::Float32;
    writeSampleFile(paths.back(), kind, samples, opt);
  }
  MPI_Barrier(comm);
  return paths;
}

// Writes dataset `name` of `shape` and element type `type` (data given as doubles) into `path`,
// creating or extending the file. For malformed-file tests.
inline void writeRawDataset(const std::string& path, const std::string& name,
                            const std::vector<index_t>& shape, hid_t type,
                            const std::vector<double>& values) {
  const bool exists = std::filesystem::exists(path);
  hid_t file = exists ? H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)
                      : H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  hid_t space = dims.empty() ? H5Screate(H5S_SCALAR)
                             : H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t dset = H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Dclose(dset);
  H5Sclose(space);
  H5Fclose(file);
}

// Volumes that split unevenly over every grid of `ranks` ranks: 7 x 6 x 5 up to 5 ranks per
// dimension.
inline Extents3 extentsFor(int ranks) {
  return ranks <= 5 ? Extents3{7, 6, 5} : Extents3{9, 11, 10};
}

// The standard files of `kind` (writeStandardFiles) on the volume extentsFor(world size), in a
// fresh shared directory, and their catalog.
struct StandardCatalog {
  SharedTempDir dir;
  Extents3 extents = extentsFor(worldSize());
  SampleCatalog catalog;
  StandardCatalog(SampleKind kind, index_t channels) {
    catalog =
        SampleCatalog::open(writeStandardFiles(dir, kind, channels, extents), kind, MPI_COMM_WORLD);
  }
};

}  // namespace halo3d::testing
