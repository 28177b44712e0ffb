#pragma once
// Options of io/DataLoader.hpp, kept apart from the templates so that the non-template engine sees
// them.

#include <cstddef>
#include <cstdint>

#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/io/HyperslabReader.hpp"
#include "halo3d/io/SampleFormat.hpp"

namespace halo3d {

// The element type of a batch's input tensor. Bf16: each value goes through the input transform in
// float and is rounded once (to nearest even) into the batch, which is all the loader ever holds of
// it: a bf16 run's batches take half the memory, and no float batch exists (Batch::input_bf16).
enum class BatchInput { Float32, BFloat16 };

struct DataLoaderOptions {
  SampleKind kind = SampleKind::CosmoFlow;
  index_t batch_size = 1;  // the global mini-batch B, split over the Pn sample groups
  std::uint64_t seed = 0;  // shuffle seed: the same order on every grid
  bool shuffle = true;
  bool drop_last =
      false;         // also drop a final partial batch that has >= Pn samples (see EpochSchedule)
  HaloWidths halo;   // ghost widths of the input tensor: what the first layer needs
  ReadOptions read;  // MPI-IO mode, read method, input transform, classes
  std::size_t store_budget_bytes = 0;  // in-memory data store per rank (StorePlan); 0: off
  bool prefetch = true;  // read the next batch on a background thread (needs MPI_THREAD_MULTIPLE)
  index_t first_epoch = 0;  // where the first next() starts (resuming from a checkpoint)
  index_t first_step = 0;
  BatchInput input = BatchInput::Float32;
};

}  // namespace halo3d
