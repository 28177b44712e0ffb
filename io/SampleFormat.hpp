#pragma once
// The two sample layouts halo3d reads (docs/data-format.md), and the check every file gets when it
// is opened.
//
//   CosmoFlow: full    (C, D, H, W) or (N, C, D, H, W), float32 or int16
//              unitPar (T,)         or (N, T),          float32 or float64 (T = 4 for CosmoFlow)
//   U-Net:     volume       (C, D, H, W) or (N, C, D, H, W), float32 or int16
//              segmentation (D, H, W)    or (N, D, H, W),    any integer type, class ids
//
// A file without the leading N holds one sample; with it, N samples. Both datasets of a file agree
// on N.

#include <string>
#include <string_view>

#include "halo3d/core/Types.hpp"
#include "halo3d/io/ElementType.hpp"

namespace halo3d {

enum class SampleKind { CosmoFlow, UNet };

// "cosmoflow" or "unet"; throws InputError naming the text otherwise.
SampleKind parseSampleKind(std::string_view text);
const char* sampleKindName(SampleKind kind);

// Dataset names of each layout.
struct SampleDatasets {
  const char* input;   // "full" or "volume"
  const char* target;  // "unitPar" (regression targets) or "segmentation" (voxel labels)
};
SampleDatasets datasetsOf(SampleKind kind);

// What one sample file holds, as checked by inspectSampleFile.
struct SampleFileLayout {
  std::string path;
  SampleKind kind = SampleKind::CosmoFlow;
  index_t samples = 1;        // N: 1 for a file without the leading axis
  bool batched = false;       // true if the datasets carry the leading N axis
  index_t channels = 0;       // C
  Extents3 extents{0, 0, 0};  // (D, H, W)
  ElementType input_type = ElementType::Float32;
  ElementType target_type = ElementType::Float32;  // unitPar's or segmentation's element type
  index_t target_width = 0;                        // T for CosmoFlow, 0 for U-Net
};

// Opens `path` (serial HDF5) and checks it against the layout of `kind`. Throws IoError naming the
// file and the dataset at fault: missing file, not HDF5 (corrupt or truncated), missing dataset,
// wrong rank, extent or element type, datasets that disagree on N or on (D, H, W). A channels-last
// `full` gets a hint to convert it.
SampleFileLayout inspectSampleFile(const std::string& path, SampleKind kind);

}  // namespace halo3d
