#pragma once
// Writing sample files in the layouts of SampleFormat.hpp (serial HDF5, one process per file). Used
// by the synthetic generators, the CosmoFlow converter, tests and benchmarks.

#include <cstdint>
#include <string>
#include <vector>

#include "halo3d/core/Types.hpp"
#include "halo3d/io/ElementType.hpp"
#include "halo3d/io/SampleFormat.hpp"

namespace halo3d {

// One sample in host memory, C order.
struct HostSample {
  index_t channels = 0;
  Extents3 extents{0, 0, 0};
  std::vector<float> input;          // (C, D, H, W)
  std::vector<float> targets;        // CosmoFlow: (T,)
  std::vector<std::int32_t> labels;  // U-Net: (D, H, W)
};

struct SampleFileOptions {
  ElementType input_type = ElementType::Float32;  // float32, or int16 (values rounded and clamped)
  bool batched = false;  // write the leading N axis; required for more than one sample
};

// Writes `samples` (all of one size) to `path` in the layout of `kind`: the input dataset, and
// unitPar (float32) or segmentation (uint8). Written to a temporary name beside `path` and renamed,
// so that a failure never leaves a partial file. Throws IoError naming the file on failure,
// InputError on inconsistent samples.
void writeSampleFile(const std::string& path, SampleKind kind,
                     const std::vector<HostSample>& samples, const SampleFileOptions& options = {});

// Converts a CosmoFlow file from the original channels-last layout, full (D, H, W, C) or (N, D, H,
// W, C), to halo3d's (C, D, H, W) or (N, C, D, H, W), keeping the element type; unitPar is copied.
// Throws IoError naming the file and dataset if `in` is not channels-last CosmoFlow.
void convertCosmoFlowFile(const std::string& in, const std::string& out);

}  // namespace halo3d
