#pragma once
// The engine behind DataLoader: plans each step (schedule, data store), allocates the host batch on
// the calling thread (Kokkos allocations stay on the main thread), and fills it through the
// hyperslab reader and the data store on the process's I/O thread (IoExecutor): ahead of time when
// prefetching, waited for at once otherwise. Not a template: DataLoader<MemorySpace> only moves the
// finished host batch to its memory space.
//
// Communicators: the filling side uses its own duplicates of the grid's spatial and data
// communicators (the reader's collective opens and reads in IoMode::Collective, the data store's
// messages), so that they never match the main thread's. The ranks agree on a failed fill on the
// calling thread, in next() and seek(), over the producer's own duplicate of the world.

#include <Kokkos_Core.hpp>

#include <future>
#include <memory>
#include <vector>

#include "halo3d/comm/Communicator.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/io/DataLoaderOptions.hpp"
#include "halo3d/io/DataStore.hpp"
#include "halo3d/io/EpochSchedule.hpp"
#include "halo3d/io/StorePlan.hpp"

namespace halo3d::impl {

struct HostBatch {
  // Exactly one of the two is allocated, as DataLoaderOptions::input asks.
  HaloTensor<float, Kokkos::HostSpace> input;
  HaloTensor<bf16, Kokkos::HostSpace> input_bf16;
  HaloTensor<std::int32_t, Kokkos::HostSpace> labels;
  std::vector<float> targets;
  std::vector<index_t> sample_ids;
  index_t epoch = 0, step = 0, global_step = 0, global_batch = 0;
};

class BatchProducer {
 public:
  // Collective over grid.comm(). Keeps no reference to `grid`.
  BatchProducer(const ProcessGrid& grid, const SampleCatalog& catalog,
                const DataLoaderOptions& options);
  // Waits for the batch in flight; closes files (collective over the spatial group).
  ~BatchProducer();

  // Collective over grid.comm(): the next step's batch. Throws on every rank if any rank failed.
  HostBatch next();
  // Collective over grid.comm(): makes the next call of next() return (epoch, step); a batch in
  // flight is finished (its failure, if any, thrown on every rank) and discarded.
  void seek(index_t epoch, index_t step);
  // Waits until no read is in flight (the prefetched batch is kept), nor the first files' opens.
  void finishPrefetch();

  const SampleCatalog& catalog() const { return _catalog; }
  const EpochSchedule& schedule() const { return _schedule; }
  bool prefetching() const { return _prefetch; }
  ReadStats readStats();
  void resetReadStats();
  std::size_t storeBytes();
  std::size_t storeSize();
  index_t storeCapacity() const { return _plan.capacity(); }

 private:
  struct Pending;
  std::unique_ptr<Pending> prepare(index_t epoch, index_t step);
  void fill(Pending& p);
  // Waits for the batch in flight and agrees on failures (collective over the world); throws on
  // every rank if any rank failed, and the producer is then failed.
  void finishInflight();
  void fillLocal(Pending& p);
  template <class T>
  void readOwnSamples(Pending& p, const HaloTensor<T, Kokkos::HostSpace>& input);
  void launch();
  void advance();
  void openFirstFiles();

  GridShape _shape;
  GridCoords _coords;
  SampleCatalog _catalog;
  DataLoaderOptions _options;
  EpochSchedule _schedule;
  StorePlan _plan;
  Communicator _world, _spatial, _data;
  HyperslabReaderPtr _reader;  // closed after the destructor waited for the in-flight read
  DataStore _store;
  bool _prefetch = false;
  index_t _epoch = 0, _step = 0;
  index_t _perm_epoch = -1;
  std::vector<index_t> _perm;
  std::unique_ptr<Pending> _inflight;
  std::future<void> _opening;  // openFirstFiles' work on the I/O thread
  bool _failed = false;
  // Host batch tensors for reuse: fresh allocations would page-fault and zero the whole batch every
  // step.
  std::vector<HaloTensor<float, Kokkos::HostSpace>> _input_pool;
  std::vector<HaloTensor<bf16, Kokkos::HostSpace>> _input_bf16_pool;
  std::vector<HaloTensor<std::int32_t, Kokkos::HostSpace>> _label_pool;
};

}  // namespace halo3d::impl
