#pragma once
// Writing a whole synthetic data set as real HDF5 sample files, optionally under MPI with the files
// split over the ranks. File f holds samples [f * per_file, ...) and is written by rank f mod P; a
// sample depends only on (seed, its index), so the data set is the same for any rank count and any
// per_file grouping.
//
// Files: <out>/<kind>_<6-digit file index>.h5 (cosmoflow_000000.h5, ...), in the layouts of
// SampleFormat.hpp, plus <out>/datagen.json describing how they were made.

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "halo3d/io/ElementType.hpp"
#include "halo3d/io/SampleFormat.hpp"
#include "halo3d/io/SampleWriter.hpp"
#include "halo3d/io/synthetic/CosmoFlowGenerator.hpp"

namespace halo3d {

struct SyntheticDatasetSpec {
  SampleKind kind = SampleKind::CosmoFlow;
  index_t size = 64;     // samples are (channels, size, size, size)
  index_t count = 16;    // samples
  index_t per_file = 1;  // samples per file (> 1: the batched layout)
  index_t channels = 4;  // CosmoFlow 4, U-Net 1 by convention
  std::uint64_t seed = 0;
  std::string out;                              // output directory, created if missing
  ElementType input_type = ElementType::Int16;  // int16 or float32
  double mean_count = 16.0;                     // CosmoFlow Poisson mean per voxel
};

// Called on each rank after each of its files: (files done here, files this rank writes).
using DatagenProgress = std::function<void(index_t done, index_t total)>;

// The host sample `index` of `spec` (input, and targets or labels).
HostSample syntheticSample(const SyntheticDatasetSpec& spec, index_t index);

// Collective over `comm`: writes the data set; returns the paths of all files (on every rank).
// Throws InputError for a bad spec, IoError naming the file that could not be written, on every
// rank.
std::vector<std::string> writeSyntheticDataset(const SyntheticDatasetSpec& spec, MPI_Comm comm,
                                               const DatagenProgress& progress = {});

}  // namespace halo3d
