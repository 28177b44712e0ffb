#include "halo3d/io/impl/BatchProducer.hpp"

#include <algorithm>
#include <cstdio>

#include "halo3d/core/BlockDecomposition.hpp"
#include "halo3d/io/Collective.hpp"
#include "halo3d/io/impl/IoExecutor.hpp"
#include "halo3d/io/impl/TileCopy.hpp"

namespace halo3d::impl {

struct BatchProducer::Pending {
  HostBatch batch;
  std::vector<index_t> ids;  // the global batch
  std::vector<int> groups;   // the sample group of each position
  std::vector<StorePlan::Source> sources;
  index_t k0 = 0, k1 = 0;  // this group's positions
  std::future<void> done;
  std::exception_ptr failure;  // this rank's, set by fill(); the ranks agree on it in next()
};

namespace {

// Largest owned block of any rank: the first block of every split dimension (BlockDecomposition
// gives the first parts the extra cell). `input_bytes`: bytes of an input element in the store.
std::size_t largestTileBytes(const SampleCatalog& c, const GridShape& shape, bool labels,
                             std::size_t input_bytes) {
  const Extents3 e = c.extents();
  const auto parts = shape.spatial();
  index_t cells = 1;
  for (int d = 0; d < 3; ++d)
    cells *= blockExtent(e[d], parts[d], 0);
  return std::size_t(cells) *
             (std::size_t(c.channels()) * input_bytes + (labels ? sizeof(std::int32_t) : 0)) +
         std::size_t(c.targetWidth()) * sizeof(float);
}

// A tensor of `block` from `pool` that nobody else holds (every fill rewrites its owned cells and
// zeroes its ghosts: zeroInputGhosts), or a new one added to the pool. Entries of other blocks (a
// final partial batch) are dropped once free; a few entries cover the batch in use, the one in
// flight and a spare.
template <class T>
HaloTensor<T, Kokkos::HostSpace> acquire(std::vector<HaloTensor<T, Kokkos::HostSpace>>& pool,
                                         const char* label, const TensorBlock& block) {
  for (auto it = pool.begin(); it != pool.end();) {
    const bool free = it->view().use_count() == 1;
    if (free && it->block() == block) return *it;
    it = (free || pool.size() > 4) ? pool.erase(it) : it + 1;
  }
  pool.emplace_back(label, block);
  return pool.back();
}

template <class T, class M>
HostTile<T> tileOf(const HaloTensor<T, M>& t, index_t slot) {
  return {t.view().data(), t.block().allocationExtents(), slot, t.localOwned()};
}

const TensorBlock& inputBlock(const HostBatch& b) {
  return b.input_bf16.isAllocated() ? b.input_bf16.block() : b.input.block();
}

// Zeroes the ghosts of the batch's input: a reused tensor may hold neighbour values there from a
// halo exchange (the model takes the batch as its input). Runs on the I/O thread, where it overlaps
// the step: on the main thread it took 5.3 ms of a 350 ms CosmoFlow 128^3 batch-4 step at one rank,
// since the W ghosts put two cache lines at the ends of every row.
void zeroInputGhosts(const HostBatch& b) {
  const TensorBlock& block = inputBlock(b);
  if (block.halo().isZero()) return;
  if (b.input_bf16.isAllocated())
    zeroGhosts(b.input_bf16.view().data(), block.allocationExtents(), block.localOwned());
  else
    zeroGhosts(b.input.view().data(), block.allocationExtents(), block.localOwned());
}

}  // namespace

BatchProducer::BatchProducer(const ProcessGrid& grid, const SampleCatalog& catalog,
                             const DataLoaderOptions& options)
    : _shape(grid.shape()),
      _coords(grid.coords()),
      _catalog(catalog),
      _options(options),
      _schedule(catalog.size(), options.batch_size, grid.shape().n(), options.seed, options.shuffle,
                options.drop_last),
      _plan(catalog.size(), grid.shape().n(),
            StorePlan::capacityFor(
                options.store_budget_bytes,
                largestTileBytes(
                    catalog, grid.shape(), catalog.kind() == SampleKind::UNet,
                    options.input == BatchInput::BFloat16 ? sizeof(bf16) : sizeof(float)))),
      _world(Communicator::duplicate(grid.comm())),
      _spatial(Communicator::duplicate(grid.spatialComm())),
      _data(Communicator::duplicate(grid.dataComm())),
      _epoch(options.first_epoch),
      _step(options.first_step) {
  require<InputError>(options.kind == catalog.kind(), "data loader for ",
                      sampleKindName(options.kind), " samples given a catalog of ",
                      sampleKindName(catalog.kind()), " samples");
  require<InputError>(_epoch >= 0 && _step >= 0 && _step < _schedule.stepsPerEpoch(),
                      "start position epoch ", _epoch, " step ", _step, " outside the ",
                      _schedule.stepsPerEpoch(), " steps of an epoch");
  // The block must suit the grid (a volume too small to split, a halo wider than a block): checked
  // here, the same on every rank, rather than at the first step.
  TensorBlock::forGrid(_catalog.batchShape(_schedule.batchSize()), _shape, _coords, _options.halo);
  _reader = HyperslabReader::open(_catalog, _spatial.get(), _options.read);
  _prefetch = options.prefetch && IoExecutor::instance().threaded();
  openFirstFiles();
  if (options.prefetch && !_prefetch && grid.isRoot())
    std::fprintf(stderr,
                 "halo3d: warning: MPI does not provide MPI_THREAD_MULTIPLE; the data loader reads "
                 "synchronously (no prefetch)\n");
}

// The files of this rank's first samples are opened on the I/O thread while the caller sets up,
// so that their first opens' cost (HyperslabReader::openAhead) is not paid by the first steps:
// with 16 files kept open, a 64^3 CosmoFlow step at two ranks took 2.5 ms longer for its first 16
// steps. The reader outlives the work: it is deleted on the same thread, after it.
void BatchProducer::openFirstFiles() {
  // A sample of each file in the order the rank will first read them, until there are as many files
  // as the reader keeps open (several epochs, if one epoch's share of this group spans fewer), or
  // eight epochs.
  const std::size_t open_files = std::size_t(_options.read.open_files);
  std::vector<index_t> ids;
  std::vector<int> files;
  index_t epoch = _epoch, step = _step;
  std::vector<index_t> perm = _schedule.permutation(epoch);
  for (index_t s = 0; s < 8 * _schedule.stepsPerEpoch() && files.size() < open_files; ++s) {
    const std::vector<index_t> batch = _schedule.batch(perm, step);
    const auto [k0, k1] = _schedule.groupRange(index_t(batch.size()), _coords.n);
    for (index_t k = k0; k < k1; ++k) {
      const index_t id = batch[std::size_t(k)];
      const int file = _catalog.locate(id).file;
      if (std::find(files.begin(), files.end(), file) != files.end()) continue;
      files.push_back(file);
      ids.push_back(id);
    }
    if (++step == _schedule.stepsPerEpoch()) {
      step = 0;
      perm = _schedule.permutation(++epoch);
    }
  }
  HyperslabReader* reader = _reader.get();
  _opening =
      IoExecutor::instance().submit([reader, ids = std::move(ids)] { reader->openAhead(ids); });
}

BatchProducer::~BatchProducer() {
  if (_inflight) {
    try {
      _inflight->done.get();
    } catch (...) {
      // Every rank saw the same failure; a destructor cannot report it.
    }
  }
}

std::unique_ptr<BatchProducer::Pending> BatchProducer::prepare(index_t epoch, index_t step) {
  if (_perm_epoch != epoch) {
    _perm = _schedule.permutation(epoch);
    _perm_epoch = epoch;
  }
  auto p = std::make_unique<Pending>();
  p->ids = _schedule.batch(_perm, step);
  const index_t b = index_t(p->ids.size());
  for (index_t k = 0; k < b; ++k)
    p->groups.push_back(blockOwner(b, _shape.n(), k));
  p->sources = _plan.plan(p->ids, p->groups);
  std::tie(p->k0, p->k1) = _schedule.groupRange(b, _coords.n);

  HostBatch& hb = p->batch;
  hb.epoch = epoch;
  hb.step = step;
  hb.global_step = epoch * _schedule.stepsPerEpoch() + step;
  hb.global_batch = b;
  hb.sample_ids.assign(p->ids.begin() + std::ptrdiff_t(p->k0),
                       p->ids.begin() + std::ptrdiff_t(p->k1));
  const Shape5 shape = _catalog.batchShape(b);
  const TensorBlock input = TensorBlock::forGrid(shape, _shape, _coords, _options.halo);
  if (_options.input == BatchInput::BFloat16)
    hb.input_bf16 = acquire(_input_bf16_pool, "halo3d::batch_input_bf16", input);
  else
    hb.input = acquire(_input_pool, "halo3d::batch_input", input);
  if (_catalog.kind() == SampleKind::UNet)
    hb.labels =
        acquire(_label_pool, "halo3d::batch_labels",
                TensorBlock::forGrid({b, 1, shape[2], shape[3], shape[4]}, _shape, _coords, {}));
  hb.targets.assign(std::size_t((p->k1 - p->k0) * _catalog.targetWidth()), 0.0f);
  return p;
}

// No collective here: the ranks agree on failures on the calling thread, in next(). A collective on
// the I/O thread makes each rank's I/O thread wait for its peers' at a moment unrelated to the
// compute; on a machine with a core per rank the waiting thread polls MPI on the core its own rank
// computes on, and a spatial split, whose ranks meet at every halo exchange, loses that time
// twice (docs/scaling.md, "The I/O thread's collectives").
void BatchProducer::fill(Pending& p) {
  try {
    fillLocal(p);
  } catch (...) {
    p.failure = std::current_exception();
  }
  if (!p.failure) p.failure = _reader->takeProblem();
}

void BatchProducer::fillLocal(Pending& p) {
  HostBatch& hb = p.batch;
  zeroInputGhosts(hb);
  const bool unet = _catalog.kind() == SampleKind::UNet;
  const index_t width = _catalog.targetWidth();
  const int me = _coords.n;
  const bool rounded = hb.input_bf16.isAllocated();
  const Box owned = inputBlock(hb).owned();
  // Store traffic first (non-blocking), so that it overlaps the file reads below.
  // Tags 3k, 3k + 1, 3k + 2 carry input, labels and targets of batch position k.
  std::vector<MPI_Request> requests;
  // `start` takes MPI_Isend's or MPI_Irecv's arguments; `what` names it in errors.
  auto transfer = [&](auto& t, int peer, index_t k, const char* what, auto start) {
    auto post = [&](auto* data, std::size_t count, MPI_Datatype type, index_t tag) {
      if (count == 0) return;
      requests.emplace_back();
      checkMpi(start(data, int(count), type, peer, int(tag), _data, &requests.back()), what);
    };
    post(t.input.data(), t.input.size(), MPI_FLOAT, 3 * k);
    static_assert(sizeof(bf16) == sizeof(std::uint16_t), "bf16 travels as its 16 bits");
    post(t.input_bf16.data(), t.input_bf16.size(), MPI_UINT16_T, 3 * k);
    post(t.labels.data(), t.labels.size(), MPI_INT32_T, 3 * k + 1);
    post(t.targets.data(), t.targets.size(), MPI_FLOAT, 3 * k + 2);
  };
  auto send = [&](const StoredTile& t, int peer, index_t k) {
    transfer(t, peer, k, "data store MPI_Isend", [](auto&&... args) { return MPI_Isend(args...); });
  };
  auto receive = [&](StoredTile& t, int peer, index_t k) {
    transfer(t, peer, k, "data store MPI_Irecv", [](auto&&... args) { return MPI_Irecv(args...); });
  };
  for (std::size_t k = 0; k < p.ids.size(); ++k) {
    const StorePlan::Source& s = p.sources[k];
    if (s.holder != me || p.groups[k] == me) continue;
    const StoredTile* t = _store.find(p.ids[k]);
    require(t != nullptr, "data store: sample ", p.ids[k], " planned here but not stored");
    send(*t, p.groups[k], index_t(k));
  }
  std::vector<std::pair<index_t, StoredTile>> incoming;
  incoming.reserve(std::size_t(p.k1 - p.k0));
  const std::size_t cells = std::size_t(owned.size());
  for (index_t k = p.k0; k < p.k1; ++k) {
    const StorePlan::Source& s = p.sources[std::size_t(k)];
    if (s.holder < 0 || s.holder == me) continue;
    StoredTile t;
    const std::size_t elements = cells * std::size_t(_catalog.channels());
    if (rounded)
      t.input_bf16.resize(elements);
    else
      t.input.resize(elements);
    if (unet) t.labels.resize(cells);
    t.targets.resize(std::size_t(width));
    incoming.emplace_back(k - p.k0, std::move(t));
    receive(incoming.back().second, s.holder, k);
  }

  // The posted messages must complete even if a read fails: their buffers die with this frame.
  std::exception_ptr failure;
  try {
    if (rounded)
      readOwnSamples(p, hb.input_bf16);
    else
      readOwnSamples(p, hb.input);
  } catch (...) {
    failure = std::current_exception();
  }
  checkMpi(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
           "data store MPI_Waitall");
  if (failure) std::rethrow_exception(failure);
  for (auto& [slot, t] : incoming) {
    if (rounded)
      copyOwnedIn(t.input_bf16.data(), tileOf(hb.input_bf16, slot));
    else
      copyOwnedIn(t.input.data(), tileOf(hb.input, slot));
    if (unet) copyOwnedIn(t.labels.data(), tileOf(hb.labels, slot));
    std::copy(t.targets.begin(), t.targets.end(), hb.targets.data() + slot * width);
  }
}

// The samples of this group that come from this rank's store or from file.
template <class T>
void BatchProducer::readOwnSamples(Pending& p, const HaloTensor<T, Kokkos::HostSpace>& input) {
  HostBatch& hb = p.batch;
  const bool unet = _catalog.kind() == SampleKind::UNet;
  const index_t width = _catalog.targetWidth();
  const int me = _coords.n;
  const Box owned = input.block().owned();
  for (index_t k = p.k0; k < p.k1; ++k) {
    const StorePlan::Source& s = p.sources[std::size_t(k)];
    const index_t slot = k - p.k0, id = p.ids[std::size_t(k)];
    const HostTile<T> in = tileOf(input, slot);
    float* targets = hb.targets.data() + slot * width;
    if (s.holder == me) {
      const StoredTile* t = _store.find(id);
      require(t != nullptr, "data store: sample ", id, " planned here but not stored");
      copyOwnedIn(t->inputAs<T>().data(), in);
      if (unet) copyOwnedIn(t->labels.data(), tileOf(hb.labels, slot));
      std::copy(t->targets.begin(), t->targets.end(), targets);
      continue;
    }
    if (s.holder >= 0) continue;
    _reader->readInput(id, owned, in);
    if (unet) _reader->readLabels(id, owned, tileOf(hb.labels, slot));
    if (width > 0) _reader->readTargets(id, targets);
    if (!s.insert) continue;
    StoredTile t;
    t.inputAs<T>().resize(ownedElements(in));
    copyOwnedOut(in, t.inputAs<T>().data());
    if (unet) {
      t.labels.resize(std::size_t(owned.size()));
      copyOwnedOut(tileOf(hb.labels, slot), t.labels.data());
    }
    t.targets.assign(targets, targets + width);
    _store.insert(id, std::move(t));
  }
}

void BatchProducer::launch() {
  _inflight = prepare(_epoch, _step);
  Pending* p = _inflight.get();
  p->done = IoExecutor::instance().submit([this, p] { fill(*p); });
}

void BatchProducer::advance() {
  if (++_step == _schedule.stepsPerEpoch()) {
    _step = 0;
    ++_epoch;
  }
}

void BatchProducer::finishInflight() {
  try {
    _inflight->done.get();
    agreeOnError(_inflight->failure, _world);
  } catch (...) {
    _inflight.reset();
    _failed = true;
    throw;
  }
}

HostBatch BatchProducer::next() {
  require(!_failed, "data loader: an earlier read failed; the loader cannot continue");
  if (!_inflight) launch();
  finishInflight();
  HostBatch out = std::move(_inflight->batch);
  _inflight.reset();
  advance();
  if (_prefetch) launch();
  return out;
}

void BatchProducer::finishPrefetch() {
  if (_opening.valid()) _opening.wait();
  if (_inflight) _inflight->done.wait();
}

void BatchProducer::seek(index_t epoch, index_t step) {
  require<InputError>(epoch >= 0 && step >= 0 && step < _schedule.stepsPerEpoch(), "seek to epoch ",
                      epoch, " step ", step, ": outside the ", _schedule.stepsPerEpoch(),
                      " steps of an epoch");
  if (_inflight) {
    finishInflight();
    _inflight.reset();
  }
  _epoch = epoch;
  _step = step;
}

ReadStats BatchProducer::readStats() {
  finishPrefetch();
  return _reader->stats();
}

void BatchProducer::resetReadStats() {
  finishPrefetch();
  _reader->resetStats();
}

std::size_t BatchProducer::storeBytes() {
  finishPrefetch();
  return _store.bytes();
}

std::size_t BatchProducer::storeSize() {
  finishPrefetch();
  return _store.size();
}

}  // namespace halo3d::impl
