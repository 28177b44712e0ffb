#pragma once
// The training loop's view of the data:
//
//   DataLoaderOptions opt;
//   opt.batch_size = 8;
//   opt.halo = first_layer_halo;
//   opt.store_budget_bytes = 1 << 30;
//   DataLoader<> loader(grid, listSampleFiles("data/train"), opt);
//   for (index_t s = 0; s < steps; ++s) {
//     Batch<> b = loader.next();  // b.input (or b.input_bf16), b.targets or b.labels, b.epoch, ...
//   }
//
// Each next() is collective over the grid and returns this rank's part of the next global
// mini-batch (see EpochSchedule for the order and the final partial batch): the input block
// grid.blockOf({B, C, D, H, W}, halo) with zero ghosts (filled by the first layer's halo exchange),
// read as hyperslabs from the files or served by the data store (StorePlan); the targets or labels
// of its samples. With prefetch on, the next batch is read on a background thread while the caller
// computes.
//
// Threads: reads run on the process's I/O thread (impl::IoExecutor) with the loader's own
// communicators, in submission order with every other loader's and SampleReader's, so several
// loaders (training, validation) can share the ranks. Writing a checkpoint meanwhile is fine.

#include <Kokkos_Core.hpp>

#include <memory>
#include <string>
#include <vector>

#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/io/DataLoaderOptions.hpp"
#include "halo3d/io/impl/BatchProducer.hpp"
#include "halo3d/io/impl/HostToMemorySpace.hpp"

namespace halo3d {

template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
struct Batch {
  // (B_local, C, D, H, W) block of the global batch with the requested ghosts; ghosts are zero.
  // Float, unless DataLoaderOptions::input asks for bf16: then input_bf16 holds the same cells
  // rounded to nearest even, and input is unallocated. Exactly one of the two is allocated.
  HaloTensor<float, MemorySpace> input;
  HaloTensor<bf16, MemorySpace> input_bf16;
  // U-Net: (B_local, 1, D, H, W) class ids over the same owned block, without ghosts. Unallocated
  // otherwise.
  HaloTensor<std::int32_t, MemorySpace> labels;
  // CosmoFlow: B_local x T regression targets, row-major (T = 4). Empty otherwise.
  std::vector<float> targets;
  // The global sample ids of the local samples, in batch order.
  std::vector<index_t> sample_ids;
  index_t epoch = 0, step = 0;  // step within the epoch
  index_t global_step = 0;      // epoch * stepsPerEpoch() + step
  index_t global_batch = 0;     // B of this step (smaller for a final partial batch)
};

template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class DataLoader {
 public:
  // Collective over grid.comm(): opens and checks the files (SampleCatalog::open) with
  // options.kind.
  DataLoader(const ProcessGrid& grid, const std::vector<std::string>& files,
             const DataLoaderOptions& options)
      : DataLoader(grid, SampleCatalog::open(files, options.kind, grid.comm()), options) {}
  // Collective over grid.comm(). Throws InputError (every rank) for a batch smaller than Pn, a
  // volume the grid cannot split, or a halo wider than a block.
  DataLoader(const ProcessGrid& grid, const SampleCatalog& catalog,
             const DataLoaderOptions& options)
      : _producer(std::make_unique<impl::BatchProducer>(grid, catalog, options)) {}

  // Collective over grid.comm(): the next step's batch. A bad sample (labels out of range, a read
  // error) throws IoError on every rank, naming the file and dataset; the loader cannot continue
  // after that.
  Batch<MemorySpace> next() {
    impl::HostBatch h = _producer->next();
    Batch<MemorySpace> b;
    b.input = impl::toMemorySpace<MemorySpace>(std::move(h.input));
    b.input_bf16 = impl::toMemorySpace<MemorySpace>(std::move(h.input_bf16));
    b.labels = impl::toMemorySpace<MemorySpace>(std::move(h.labels));
    b.targets = std::move(h.targets);
    b.sample_ids = std::move(h.sample_ids);
    b.epoch = h.epoch;
    b.step = h.step;
    b.global_step = h.global_step;
    b.global_batch = h.global_batch;
    return b;
  }

  // Collective: the next next() returns step `step` of epoch `epoch` (resuming from a checkpoint).
  void seek(index_t epoch, index_t step) { _producer->seek(epoch, step); }
  // Waits for a prefetch in flight (the batch is kept for the next next()).
  void finishPrefetch() { _producer->finishPrefetch(); }

  index_t stepsPerEpoch() const { return _producer->schedule().stepsPerEpoch(); }
  const EpochSchedule& schedule() const { return _producer->schedule(); }
  const SampleCatalog& catalog() const { return _producer->catalog(); }
  bool prefetching() const { return _producer->prefetching(); }
  // This rank's file reads so far (waits for a prefetch in flight).
  ReadStats readStats() { return _producer->readStats(); }
  void resetReadStats() { _producer->resetReadStats(); }
  // This rank's data store: samples kept, bytes, and the capacity in samples (the same on every
  // rank).
  std::size_t storeSize() { return _producer->storeSize(); }
  std::size_t storeBytes() { return _producer->storeBytes(); }
  index_t storeCapacity() const { return _producer->storeCapacity(); }

 private:
  std::unique_ptr<impl::BatchProducer> _producer;
};

}  // namespace halo3d
