#pragma once
// HaloExchange: fills the ghost cells of a HaloTensor from their owners (gather), or sums ghost
// cells into their owners (scatter), over the faces, edges and corners of all 26 neighbours in one
// round of non-blocking messages. start()/finish() split the round so that compute on the interior
// can overlap it.
//
// Both directions run through one routine: a direction tag swaps which side sends and whether the
// receiver assigns or adds. Regions come from impl::HaloPlan. A message travels either
//   - packed: a Kokkos kernel copies the region into a contiguous buffer (staged through
//     host memory unless MPI can access the tensor's memory: kMpiCanAccess), or
//   - direct (gather only): when the region, stretched over the physical-boundary ghosts of unsplit
//     dimensions, is a few long contiguous runs and MPI can read the memory, the runs go straight
//     from tensor to tensor with no copy of ours. The runs of one neighbour travel as one message,
//     described by an MPI datatype committed once per plan: per-run messages cost a latency each
//     (16 messages of 16 KiB took 2.5x the time of one of 256 KiB at halo width 1).
// A packed message to a neighbour on the same node goes through MPI shared-memory windows
// (impl::SharedArena) instead of MPI's transport: the sender packs (or, staged, copies from the
// device) into its slice and the receiver unpacks straight out of it, and two small messages
// say "ready" (with the data's place) and "consumed". Through MPI, the packed bytes took a third
// copy, Open MPI's single-copy (CMA) transfer, slower than the two copies at memory speed together
// (docs/PERFORMANCE.md, issue 12). The host code packs with streaming stores: the core that reads
// the packed bytes (the neighbour's, by either route) still holds their lines from the last round,
// and plain stores had to take each line back first (2.5 times the streaming pack's time).
//
// Invariant: ghosts at a physical boundary are zero, and they are the zero padding of the layer
// reading the tensor. Tensors are allocated zeroed and no exchange writes those ghosts; kernels
// that write ghost cells (backward-data before a scatter) write only ghosts that have a neighbour.
// Scatter consumes what it sends: afterwards every ghost that has a neighbour is zero.
// zeroBoundaryGhosts() restores the invariant for code that breaks it.

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "halo3d/comm/Communicator.hpp"
#include "halo3d/comm/MpiTraits.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/comm/impl/HaloPack.hpp"
#include "halo3d/comm/impl/HaloPlan.hpp"
#include "halo3d/comm/impl/SharedArena.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/KernelPath.hpp"
#include "halo3d/core/KokkosCompat.hpp"

namespace halo3d {

enum class HaloDirection { Gather, ScatterSum };

struct HaloExchangeOptions {
  // Let long contiguous runs bypass the pack kernels (gather only; see the file comment).
  bool direct_runs = true;
  // Runs shorter than this are packed: below it the per-message cost outweighs the saved copy.
  std::size_t direct_min_run_bytes = 8 * 1024;
  // Regions that would need more runs than this are packed.
  std::size_t direct_max_runs = 1024;
  // A direct route's runs travel as one message with an MPI datatype (committed once per plan);
  // off, one message per run.
  bool derived_datatypes = true;
  // KernelPath::Device: what a device build without GPU-aware MPI runs, on any backend (the tests
  // run it on the host): every message packed by the device pack kernels (one thread per element)
  // and staged through a separate host buffer, no direct runs.
  KernelPath path = KernelPath::Fastest;
  // Packed messages between ranks of one node go through shared memory (see the file
  // comment) wherever the buffers MPI would read are host memory: host tensors, or the host
  // staging of the device path. Off, through MPI messages. Every rank must pass the same value.
  bool shared_memory = true;
  // The host code packs messages with streaming stores (see start()); off, with plain stores, as
  // before (kept to measure the difference in one run).
  bool streaming_stores = true;
};

template <class T, class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class HaloExchange {
 public:
  using tensor_type = HaloTensor<T, MemorySpace>;
  using execution_space = typename MemorySpace::execution_space;
  using buffer_type = Kokkos::View<T*, MemorySpace>;
  using host_buffer_type = typename buffer_type::HostMirror;
  // MPI may touch the memory itself: host memory, or device memory with GPU-aware MPI.
  static constexpr bool kMpiReadsMemory = kMpiCanAccess<MemorySpace>;

  // Plans the exchange of tensors laid out as `block` on `grid`. Collective over
  // grid.spatialComm(): throws (on every rank) if the ranks disagree on the ghost widths or a block
  // is thinner than a halo width it must feed. `grid` must outlive the exchange.
  HaloExchange(const ProcessGrid& grid, const TensorBlock& block, HaloExchangeOptions options = {})
      : _comm(grid.spatialComm()), _options(options) {
    std::string local_error;
    try {
      _plan = impl::planHaloExchange(block, grid.shape(), grid.coords().spatial());
    } catch (const Error& e) {
      local_error = e.what();
    }
    checkCollective(grid, block, local_error);
    for (const auto& m : _plan.messages)
      _peer.push_back(grid.neighbour(m.offset));
    buildSchedule(HaloDirection::Gather);
    buildSchedule(HaloDirection::ScatterSum);
    reserveSharedSlice();
    allocateBuffers(HaloDirection::Gather);
    allocateBuffers(HaloDirection::ScatterSum);
  }

  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;
  ~HaloExchange() {
    // An exchange abandoned in flight must not leave MPI writing into freed buffers, nor a
    // neighbour waiting for the "consumed" of a shared-memory message.
    if (!_requests.empty()) {
      MPI_Waitall(int(_recv_count), _requests.data(), MPI_STATUSES_IGNORE);
      for (const Route& r : _active->recvs)
        if (r.shared) postConsumed(r);
      MPI_Waitall(int(_requests.size() - _recv_count), _requests.data() + _recv_count,
                  MPI_STATUSES_IGNORE);
      MPI_Waitall(int(_token_requests.size()), _token_requests.data(), MPI_STATUSES_IGNORE);
    }
    for (auto& pending : _consumed)
      MPI_Waitall(int(pending.size()), pending.data(), MPI_STATUSES_IGNORE);
    for (Schedule& s : _schedules)
      for (auto* routes : {&s.sends, &s.recvs})
        for (Route& r : *routes)
          if (r.type != MPI_DATATYPE_NULL) MPI_Type_free(&r.type);
  }

  // Owner -> ghost: after it, every ghost with a neighbour holds that neighbour's owned value.
  void gather(const tensor_type& t) {
    start(t, HaloDirection::Gather);
    finish();
  }
  // Ghost -> owner, summed: every owned cell gains the ghost copies its neighbours hold; then all
  // ghosts are zero.
  void scatter(const tensor_type& t) {
    start(t, HaloDirection::ScatterSum);
    finish();
  }

  void start(const tensor_type& t, HaloDirection dir) { start(execution_space(), t, dir); }
  // Posts every receive and send of the round. Until finish(), the caller may read owned cells but
  // must not write cells of any message region.
  void start(const execution_space& exec, const tensor_type& t, HaloDirection dir);
  // Completes the round started last.
  void finish();
  // Lets MPI move the messages of the round in flight, without waiting. Call it between pieces of
  // the computation that overlaps the round: a rendezvous transfer (every message above the eager
  // limit) needs both sides inside MPI, so without an asynchronous progress thread a round would
  // otherwise move only in finish(). A no-op when no round is in flight.
  void progress();

  bool inFlight() const { return _active != nullptr; }
  // Bytes this rank receives per round in direction `dir` (the ghost or owner cells it fills).
  std::size_t receivedBytes(HaloDirection dir) const {
    return schedule(dir).recv_useful * sizeof(T);
  }
  // What this rank puts on the wire per round in `dir`: bytes, and MPI messages (a direct route
  // sends one message per contiguous run).
  std::size_t sentBytes(HaloDirection dir) const {
    std::size_t n = 0;
    for (const auto& r : schedule(dir).sends)
      n += r.elements;
    return n * sizeof(T);
  }
  std::size_t sentMessages(HaloDirection dir) const {
    std::size_t n = 0;
    for (const auto& r : schedule(dir).sends)
      n += messagesOf(r);
    return n;
  }
  // Packed messages this rank sends per round in `dir` through the node's shared memory.
  std::size_t sharedSendRoutes(HaloDirection dir) const {
    std::size_t n = 0;
    for (const auto& r : schedule(dir).sends)
      n += r.shared;
    return n;
  }
  // Messages this rank sends per round in `dir`, and how many of them go direct (no pack).
  std::size_t sendRoutes(HaloDirection dir) const { return schedule(dir).sends.size(); }
  std::size_t directSendRoutes(HaloDirection dir) const {
    std::size_t n = 0;
    for (const auto& r : schedule(dir).sends)
      n += r.direct;
    return n;
  }
  const impl::HaloPlan& plan() const { return _plan; }

 private:
  struct Route {
    int peer = MPI_PROC_NULL;
    int tag = 0;
    Box region;            // cells in local indices
    bool direct = false;   // runs straight from the tensor
    impl::RunLayout runs;  // when direct
    // When direct with derived datatypes: the runs as one datatype, relative to the tensor's data.
    MPI_Datatype type = MPI_DATATYPE_NULL;
    std::size_t offset = 0;  // in the pack buffer, when packed
    std::size_t elements = 0;
    // Packed, to or from a rank of this node: through the shared arena.
    bool shared = false;
  };
  struct Schedule {
    std::vector<Route> sends, recvs;
    std::size_t send_elements = 0, recv_elements = 0, recv_useful = 0;
    std::size_t slice_offset = 0;  // of the send buffer in this rank's slice, in elements
    buffer_type send_buf, recv_buf;
    host_buffer_type send_host, recv_host;
  };

  static std::size_t messagesOf(const Route& r) {
    return r.direct && r.type == MPI_DATATYPE_NULL ? r.runs.starts.size() : 1;
  }
  Schedule& schedule(HaloDirection dir) { return _schedules[dir == HaloDirection::Gather ? 0 : 1]; }
  const Schedule& schedule(HaloDirection dir) const {
    return _schedules[dir == HaloDirection::Gather ? 0 : 1];
  }

  // Buffers go through host copies: MPI cannot access the memory, or the Device path says so.
  bool staged() const { return !kMpiReadsMemory || _options.path == KernelPath::Device; }
  void checkCollective(const ProcessGrid& grid, const TensorBlock& block,
                       const std::string& local_error);
  void buildSchedule(HaloDirection dir);
  // Collective over the grid: the slice of the shared arena for both directions' send buffers,
  // and which packed routes use it.
  void reserveSharedSlice();
  void allocateBuffers(HaloDirection dir);
  // A shared route's messages: "ready" from the sender (the data's chunk and byte offset in its
  // segment, and its size), "consumed" from the receiver (the slice may be written again). The
  // sender waits for "consumed" only when it next writes the slice (the next round in the same
  // direction): finish() returns without waiting for the neighbours to unpack. Its "consumed"
  // may thus still be due when another exchange of the grid runs a round, and rounds may finish
  // in another order than they started, so each exchange (slice) has tags of its own, past the
  // data tags (the slots): 1000 exchanges apart before they repeat, within MPI's least tag bound.
  int consumedTag(const Route& r) const {
    return kNeighbourSlots * int(1 + _slice->serial() % 1000) + r.tag;
  }
  void postShared(const Route& r, bool send, std::size_t index);
  void postConsumed(const Route& r);
  // The start of a shared receive route's data in the sender's segment, checked against the plan.
  const T* sharedData(const Route& r, std::size_t index) const;
  Route makeRoute(int peer, int tag, const Box& exact, const Box& stretched,
                  bool may_go_direct) const;
  // Appends a request per message of `r` to _requests, posted by `post` (MPI_Irecv's or
  // MPI_Isend's arguments): a direct route's runs or datatype in the tensor's `data`, a packed
  // route's part of the buffer at `base`.
  template <class Post>
  void postRoute(const Route& r, T* data, T* base, Post post);

  MPI_Comm _comm = MPI_COMM_NULL;
  HaloExchangeOptions _options;
  impl::HaloPlan _plan;
  std::vector<int> _peer;  // spatial rank of each plan message's neighbour
  Schedule _schedules[2];
  std::unique_ptr<impl::SharedSlice> _slice;
  // The round in flight.
  const Schedule* _active = nullptr;
  HaloDirection _active_dir = HaloDirection::Gather;
  typename tensor_type::view_type _active_view;
  execution_space _active_exec;
  std::vector<MPI_Request> _requests;
  std::size_t _recv_count = 0;   // the first _recv_count requests are receives
  std::vector<int> _recv_route;  // per receive request: its packed route, or -1 (direct)
  // Per route of the round: the "ready" message of a shared send, and of a shared receive.
  std::vector<std::array<std::uint64_t, 3>> _ready_out, _ready_in;
  std::vector<MPI_Request> _token_requests;  // the round's "consumed" sends
  std::vector<MPI_Request> _consumed[2];     // per direction: "consumed" still to come
};

// -------------------------------------------------------------------------------------------
// definitions

template <class T, class M>
void HaloExchange<T, M>::checkCollective(const ProcessGrid& grid, const TensorBlock& block,
                                         const std::string& local_error) {
  // Every rank must hold the same ghost widths: a neighbour sends exactly as many layers as we
  // hold.
  const HaloWidths& h = block.halo();
  int mine[6] = {h.lo[0], h.lo[1], h.lo[2], h.hi[0], h.hi[1], h.hi[2]};
  int lo[6], hi[6];
  MPI_Allreduce(mine, lo, 6, MPI_INT, MPI_MIN, _comm);
  MPI_Allreduce(mine, hi, 6, MPI_INT, MPI_MAX, _comm);
  const bool widths_agree = std::equal(lo, lo + 6, hi);
  int failed_rank = local_error.empty() ? -1 : grid.spatialRank();
  int first_failed = -1;
  MPI_Allreduce(&failed_rank, &first_failed, 1, MPI_INT, MPI_MAX, _comm);
  if (!local_error.empty()) throw ShapeError(local_error);
  if (first_failed >= 0)
    throw ShapeError(concat("halo exchange plan failed on spatial rank ", first_failed,
                            " (see that rank's message)"));
  require<ShapeError>(widths_agree,
                      "halo exchange: ranks of the spatial group hold different ghost widths (",
                      "this rank ", h, "); every rank of a grid must use the same HaloWidths");
}

template <class T, class M>
typename HaloExchange<T, M>::Route HaloExchange<T, M>::makeRoute(int peer, int tag,
                                                                 const Box& exact,
                                                                 const Box& stretched,
                                                                 bool may_go_direct) const {
  Route r;
  r.peer = peer;
  r.tag = tag;
  r.region = exact;
  if (may_go_direct && _options.direct_runs && !staged()) {
    impl::RunLayout runs =
        impl::directRuns(_plan.block.allocationExtents(), stretched, sizeof(T),
                         _options.direct_min_run_bytes, _options.direct_max_runs);
    if (!runs.starts.empty()) {
      r.direct = true;
      r.region = stretched;
      r.runs = std::move(runs);
      if (_options.derived_datatypes && r.runs.starts.size() > 1) {
        std::vector<MPI_Aint> displacements(r.runs.starts.size());
        for (std::size_t i = 0; i < displacements.size(); ++i)
          displacements[i] = MPI_Aint(r.runs.starts[i] * sizeof(T));
        checkMpi(MPI_Type_create_hindexed_block(int(displacements.size()), int(r.runs.length),
                                                displacements.data(), mpiType<T>(), &r.type),
                 "halo route datatype");
        checkMpi(MPI_Type_commit(&r.type), "halo route datatype commit");
      }
    }
  }
  const Shape5 a = _plan.block.allocationExtents();
  r.elements = std::size_t(a[0] * a[1]) * std::size_t(r.region.size());
  return r;
}

template <class T, class M>
void HaloExchange<T, M>::buildSchedule(HaloDirection dir) {
  Schedule& s = schedule(dir);
  const bool gather = dir == HaloDirection::Gather;
  const Shape5 a = _plan.block.allocationExtents();
  for (std::size_t i = 0; i < _plan.messages.size(); ++i) {
    const impl::HaloMessage& m = _plan.messages[i];
    // Tags name the sender's slot, so the receiver expects the slot opposite to where the sender
    // sits.
    const Box& send_exact = gather ? m.owned_side : m.ghost_side;
    const Box& recv_exact = gather ? m.ghost_side : m.owned_side;
    Route send = makeRoute(_peer[i], m.slot, send_exact, m.owned_side_stretched, gather);
    Route recv =
        makeRoute(_peer[i], oppositeSlot(m.slot), recv_exact, m.ghost_side_stretched, gather);
    if (!send_exact.empty()) {
      if (!send.direct) {
        send.offset = s.send_elements;
        s.send_elements += send.elements;
      }
      s.sends.push_back(std::move(send));
    }
    if (!recv_exact.empty()) {
      s.recv_useful += std::size_t(a[0] * a[1]) * std::size_t(recv_exact.size());
      if (!recv.direct) {
        recv.offset = s.recv_elements;
        s.recv_elements += recv.elements;
      }
      s.recvs.push_back(std::move(recv));
    }
  }
}

template <class T, class M>
void HaloExchange<T, M>::reserveSharedSlice() {
  // Host memory on both sides of MPI: a device kernel cannot pack into the arena.
  int wanted = _options.shared_memory && (staged() || kRunsOnHost<execution_space>);
  int all = 0;
  MPI_Allreduce(&wanted, &all, 1, MPI_INT, MPI_MIN, _comm);
  if (!all) return;
  Schedule& g = schedule(HaloDirection::Gather);
  Schedule& sc = schedule(HaloDirection::ScatterSum);
  g.slice_offset = 0;
  sc.slice_offset = g.send_elements;
  _slice = impl::SharedArena::reserve(_comm, (g.send_elements + sc.send_elements) * sizeof(T));
  if (!_slice->active()) {
    _slice.reset();
    return;
  }
  for (Schedule* s : {&g, &sc})
    for (auto* routes : {&s->sends, &s->recvs})
      for (Route& r : *routes)
        r.shared = !r.direct && _slice->arena().sharesNode(r.peer);
}

template <class T, class M>
void HaloExchange<T, M>::allocateBuffers(HaloDirection dir) {
  Schedule& s = schedule(dir);
  const bool gather = dir == HaloDirection::Gather;
  const char* tag = gather ? "halo3d::HaloExchange::gather" : "halo3d::HaloExchange::scatter";
  T* segment = _slice ? static_cast<T*>(_slice->data()) + s.slice_offset : nullptr;
  if (segment && !staged()) {
    // The pack kernels write straight into the slice (host memory: reserveSharedSlice).
    s.send_buf = buffer_type(segment, s.send_elements);
  } else {
    s.send_buf =
        buffer_type(Kokkos::view_alloc(std::string(tag) + "::send", Kokkos::WithoutInitializing),
                    s.send_elements);
  }
  s.recv_buf =
      buffer_type(Kokkos::view_alloc(std::string(tag) + "::recv", Kokkos::WithoutInitializing),
                  s.recv_elements);
  // Separate host copies when staged (create_mirror_view would alias a host buffer).
  if (segment && staged())
    s.send_host = host_buffer_type(segment, s.send_elements);
  else
    s.send_host =
        staged() ? Kokkos::create_mirror(s.send_buf) : Kokkos::create_mirror_view(s.send_buf);
  s.recv_host =
      staged() ? Kokkos::create_mirror(s.recv_buf) : Kokkos::create_mirror_view(s.recv_buf);
}

template <class T, class M>
void HaloExchange<T, M>::start(const execution_space& exec, const tensor_type& t,
                               HaloDirection dir) {
  require(!inFlight(), "HaloExchange::start: the previous round was not finished");
  require<ShapeError>(t.block() == _plan.block, "HaloExchange planned for ", _plan.block,
                      " was given tensor '", t.label(), "' with ", t.block());
  Schedule& s = schedule(dir);
  auto& consumed = _consumed[dir == HaloDirection::Gather ? 0 : 1];
  if (!consumed.empty()) {
    // The neighbours have read the last round's slices: they may be written again (the barrier
    // orders their reads before our writes).
    checkMpi(MPI_Waitall(int(consumed.size()), consumed.data(), MPI_STATUSES_IGNORE),
             "halo consumed");
    consumed.clear();
    _slice->arena().sync();
  }
  _active = &s;
  _active_dir = dir;
  _active_view = t.view();
  _active_exec = exec;
  const auto& v = t.view();
  // Staged buffers go through host memory; otherwise MPI reads the buffers where they are.
  const bool staged = this->staged();
  T* recv_base = staged ? s.recv_host.data() : s.recv_buf.data();
  T* send_base = staged ? s.send_host.data() : s.send_buf.data();

  _requests.clear();
  _recv_route.clear();
  _token_requests.clear();
  _ready_in.resize(s.recvs.size());
  _ready_out.resize(s.sends.size());
  for (std::size_t i = 0; i < s.recvs.size(); ++i) {
    if (s.recvs[i].shared)
      postShared(s.recvs[i], false, i);
    else
      postRoute(s.recvs[i], v.data(), recv_base, [](auto&&... a) { return MPI_Irecv(a...); });
    _recv_route.resize(_requests.size(), s.recvs[i].direct ? -1 : int(i));
  }
  _recv_count = _requests.size();

  const auto send = [&](std::size_t i) {
    const Route& r = s.sends[i];
    if (r.shared) {
      // The packed bytes are in the slice (the caller fenced): publish them before saying so.
      _slice->arena().sync();
      postShared(r, true, i);
    } else {
      postRoute(r, v.data(), send_base, [](auto&&... a) { return MPI_Isend(a...); });
    }
  };
  if (staged) {
    // One copy to the host for all messages: a device-to-host copy per message costs a latency.
    for (const Route& r : s.sends)
      impl::packRegion(exec, v, r.region, s.send_buf, r.offset, _options.path);
    if (s.send_elements > 0) Kokkos::deep_copy(exec, s.send_host, s.send_buf);
    fence(exec, "halo data ready before send");
    for (std::size_t i = 0; i < s.sends.size(); ++i)
      send(i);
    return;
  }
  // Direct messages leave first, straight from the tensor once it is complete; each packed
  // message leaves as soon as it is packed, so that its transfer overlaps the next pack.
  fence(exec, "halo tensor ready before send");
  for (std::size_t i = 0; i < s.sends.size(); ++i)
    if (s.sends[i].direct) send(i);
  for (std::size_t i = 0; i < s.sends.size(); ++i) {
    const Route& r = s.sends[i];
    if (r.direct) continue;
    // The packed bytes are read next by another core (the neighbour's unpack out of the shared
    // arena, or its single-copy MPI transfer), which still holds their lines from the last round:
    // streaming stores spare taking each one back (impl/StreamingStore.hpp).
    if (_options.streaming_stores)
      impl::packRegionStreaming(exec, v, r.region, s.send_buf, r.offset, _options.path);
    else
      impl::packRegion(exec, v, r.region, s.send_buf, r.offset, _options.path);
    fence(exec, "halo message packed");
    send(i);
  }
}

template <class T, class M>
void HaloExchange<T, M>::postShared(const Route& r, bool send, std::size_t index) {
  _requests.emplace_back();
  if (send) {
    const Schedule& s = *_active;
    _ready_out[index] = {std::uint64_t(_slice->chunk()),
                         std::uint64_t(_slice->offset() + (s.slice_offset + r.offset) * sizeof(T)),
                         std::uint64_t(r.elements)};
    checkMpi(MPI_Isend(_ready_out[index].data(), 3, MPI_UINT64_T, r.peer, r.tag, _comm,
                       &_requests.back()),
             "halo ready");
    auto& consumed = _consumed[_active_dir == HaloDirection::Gather ? 0 : 1];
    consumed.emplace_back();
    checkMpi(MPI_Irecv(nullptr, 0, MPI_BYTE, r.peer, consumedTag(r), _comm, &consumed.back()),
             "halo consumed");
  } else {
    checkMpi(MPI_Irecv(_ready_in[index].data(), 3, MPI_UINT64_T, r.peer, r.tag, _comm,
                       &_requests.back()),
             "halo ready");
  }
}

template <class T, class M>
void HaloExchange<T, M>::postConsumed(const Route& r) {
  // Every read of the segment is complete (the caller fenced): order them before saying so.
  _slice->arena().sync();
  _token_requests.emplace_back();
  checkMpi(MPI_Isend(nullptr, 0, MPI_BYTE, r.peer, consumedTag(r), _comm, &_token_requests.back()),
           "halo consumed");
}

template <class T, class M>
const T* HaloExchange<T, M>::sharedData(const Route& r, std::size_t index) const {
  const auto& ready = _ready_in[index];
  require(ready[2] == r.elements && int(ready[0]) < _slice->arena().chunks(),
          "halo exchange: rank ", r.peer, " announced ", ready[2], " elements in shared chunk ",
          ready[0], " where this rank expects ", r.elements, " in one of ",
          _slice->arena().chunks());
  // The sender's bytes are visible once its "ready" has arrived and this barrier is passed.
  _slice->arena().sync();
  const char* segment = static_cast<const char*>(_slice->arena().segment(int(ready[0]), r.peer));
  return reinterpret_cast<const T*>(segment + ready[1]);
}

template <class T, class M>
template <class Post>
void HaloExchange<T, M>::postRoute(const Route& r, T* data, T* base, Post post) {
  const MPI_Datatype type = mpiType<T>();
  if (r.type != MPI_DATATYPE_NULL) {
    _requests.emplace_back();
    post(data, 1, r.type, r.peer, r.tag, _comm, &_requests.back());
  } else if (r.direct) {
    for (std::size_t start : r.runs.starts) {
      _requests.emplace_back();
      post(data + start, int(r.runs.length), type, r.peer, r.tag, _comm, &_requests.back());
    }
  } else {
    _requests.emplace_back();
    post(base + r.offset, int(r.elements), type, r.peer, r.tag, _comm, &_requests.back());
  }
}

template <class T, class M>
void HaloExchange<T, M>::progress() {
  if (!inFlight() || _requests.empty()) return;
  int done = 0;
  checkMpi(MPI_Testall(int(_requests.size()), _requests.data(), &done, MPI_STATUSES_IGNORE),
           "halo progress");
}

template <class T, class M>
void HaloExchange<T, M>::finish() {
  require(inFlight(), "HaloExchange::finish: no round in flight");
  const Schedule& s = *_active;
  const auto& v = _active_view;
  const execution_space& exec = _active_exec;
  const bool staged = this->staged();
  const bool accumulate = _active_dir == HaloDirection::ScatterSum;

  if (staged) {
    checkMpi(MPI_Waitall(int(_recv_count), _requests.data(), MPI_STATUSES_IGNORE), "halo receive");
    // Shared routes: into the host staging buffer like a message, and the segment is free again.
    for (std::size_t i = 0; i < s.recvs.size(); ++i) {
      const Route& r = s.recvs[i];
      if (!r.shared) continue;
      std::memcpy(s.recv_host.data() + r.offset, sharedData(r, i), r.elements * sizeof(T));
      postConsumed(r);
    }
    if (s.recv_elements > 0) Kokkos::deep_copy(exec, s.recv_buf, s.recv_host);
    for (const Route& r : s.recvs)
      impl::unpackRegion(exec, v, r.region, s.recv_buf, r.offset, accumulate, _options.path);
  } else {
    // Gather: unpack each packed message as it lands, while the others are still in flight (the
    // regions are disjoint, so the order cannot matter). Scatter-sum: in route order, so that a
    // cell fed by several neighbours (an edge, a corner) adds them in the same order every run and
    // results are reproducible. progress() may have completed some (or all) receives already:
    // MPI_Waitany then reports them no more, so routes left over are unpacked after the loop.
    std::vector<char> unpacked(s.recvs.size(), 0);
    const auto unpack = [&](std::size_t route) {
      const Route& r = s.recvs[route];
      if (r.shared) {
        // Straight out of the sender's segment (host memory: reserveSharedSlice), which it may
        // write again once the unpack is complete and it is told.
        const buffer_type in(const_cast<T*>(sharedData(r, route)), r.elements);
        impl::unpackRegion(exec, v, r.region, in, 0, accumulate, _options.path);
        fence(exec, "halo shared message unpacked");
        postConsumed(r);
      } else {
        impl::unpackRegion(exec, v, r.region, s.recv_buf, r.offset, accumulate, _options.path);
      }
      unpacked[route] = 1;
    };
    for (std::size_t left = _recv_count; left > 0; --left) {
      int i = MPI_UNDEFINED;
      if (accumulate) {
        i = int(_recv_count - left);
        checkMpi(MPI_Wait(&_requests[std::size_t(i)], MPI_STATUS_IGNORE), "halo receive");
      } else {
        checkMpi(MPI_Waitany(int(_recv_count), _requests.data(), &i, MPI_STATUS_IGNORE),
                 "halo receive");
      }
      if (i == MPI_UNDEFINED) break;
      if (_recv_route[std::size_t(i)] >= 0) unpack(std::size_t(_recv_route[std::size_t(i)]));
    }
    for (std::size_t route = 0; route < s.recvs.size(); ++route)
      if (!s.recvs[route].direct && !unpacked[route]) unpack(route);
  }

  if (accumulate) {
    // The ghost contributions are delivered: zero the ghosts that were sent. Sends were packed in
    // start(), so this cannot race them. Ghosts at a physical boundary are never sent and stay as
    // they were, zero by the invariant.
    for (const Route& r : s.sends)
      impl::zeroRegion(exec, v, r.region, _options.path);
  }
  checkMpi(MPI_Waitall(int(_requests.size() - _recv_count), _requests.data() + _recv_count,
                       MPI_STATUSES_IGNORE),
           "halo send");
  checkMpi(MPI_Waitall(int(_token_requests.size()), _token_requests.data(), MPI_STATUSES_IGNORE),
           "halo consumed");
  _requests.clear();
  _token_requests.clear();
  fence(exec, "halo unpacked");
  _active = nullptr;
  _active_view = typename tensor_type::view_type();
}

extern template class HaloExchange<float>;
extern template class HaloExchange<double>;
extern template class HaloExchange<bf16>;

// Sets every ghost cell of `t` that lies past the global volume to zero (the six boundary slabs).
template <class T, class M>
void zeroBoundaryGhosts(const HaloTensor<T, M>& t) {
  using Exec = typename M::execution_space;
  const TensorBlock& b = t.block();
  const Box all = b.localAll(), own = b.localOwned();
  for (int d = 0; d < 3; ++d) {
    if (b.atBoundary(d, 0))
      impl::zeroRegion(Exec(), t.view(), all.withRange(d, all.min(d), own.min(d)));
    if (b.atBoundary(d, 1))
      impl::zeroRegion(Exec(), t.view(), all.withRange(d, own.max(d), all.max(d)));
  }
  fence(Exec(), "boundary ghosts zeroed");
}

}  // namespace halo3d
