#include "halo3d/comm/impl/SharedArena.hpp"

#include <algorithm>
#include <numeric>

#include "halo3d/core/MemoryTracker.hpp"

namespace halo3d::impl {

namespace {
constexpr std::size_t kPage = 4096;
// The first chunk's size floor: later chunks at least double, so that a model's exchanges need few.
constexpr std::size_t kMinChunk = 1 << 20;

std::size_t pages(std::size_t bytes) {
  return (bytes + kPage - 1) / kPage * kPage;
}
}  // namespace

SharedSlice::~SharedSlice() {
  if (_arena) _arena->release();
}

int SharedArena::keyval() {
  static int key = [] {
    int k = MPI_KEYVAL_INVALID;
    checkMpi(
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &SharedArena::deleteAttribute, &k, nullptr),
        "MPI_Comm_create_keyval");
    return k;
  }();
  return key;
}

int SharedArena::deleteAttribute(MPI_Comm, int, void* attr, void*) {
  auto* held = static_cast<std::shared_ptr<SharedArena>*>(attr);
  SharedArena& arena = **held;
  int finalized = 0;
  MPI_Finalized(&finalized);
  for (Chunk& c : arena._chunks) {
    MemoryTracker::noteDeallocation(c.bases[std::size_t(arena._node.rank())]);
    if (!finalized) {
      MPI_Win_unlock_all(c.win);
      MPI_Win_free(&c.win);
    }
  }
  arena._chunks.clear();
  delete held;
  return MPI_SUCCESS;
}

SharedArena::SharedArena(MPI_Comm comm) : _comm(comm) {
  MPI_Comm node = MPI_COMM_NULL;
  checkMpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
           "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  _node = Communicator(node);
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<int> ranks(std::size_t(size), 0);
  std::iota(ranks.begin(), ranks.end(), 0);
  _node_rank.assign(std::size_t(size), MPI_UNDEFINED);
  MPI_Group from = MPI_GROUP_NULL, to = MPI_GROUP_NULL;
  MPI_Comm_group(comm, &from);
  MPI_Comm_group(_node.get(), &to);
  MPI_Group_translate_ranks(from, size, ranks.data(), to, _node_rank.data());
  MPI_Group_free(&from);
  MPI_Group_free(&to);
}

std::unique_ptr<SharedSlice> SharedArena::reserve(MPI_Comm comm, std::size_t bytes) {
  void* attr = nullptr;
  int found = 0;
  checkMpi(MPI_Comm_get_attr(comm, keyval(), &attr, &found), "MPI_Comm_get_attr");
  std::shared_ptr<SharedArena> arena;
  if (found) {
    arena = *static_cast<std::shared_ptr<SharedArena>*>(attr);
  } else {
    arena = std::make_shared<SharedArena>(comm);
    checkMpi(MPI_Comm_set_attr(comm, keyval(), new std::shared_ptr<SharedArena>(arena)),
             "MPI_Comm_set_attr");
  }
  auto slice = std::make_unique<SharedSlice>();
  const bool shared = arena->_node.size() > 1;
  // Whole pages: no two slices share a cache line or a page.
  const std::size_t need = pages(std::max<std::size_t>(bytes, 1));
  int fits = !shared || (!arena->_chunks.empty() &&
                         arena->_chunks.back().capacity - arena->_chunks.back().used >= need);
  int all_fit = 0;
  // Over all of `comm`, nodes with one rank included: a chunk is added on every node at once.
  checkMpi(MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, comm), "shared arena");
  if (!shared) return slice;
  if (!all_fit) {
    const std::size_t last = arena->_chunks.empty() ? 0 : arena->_chunks.back().capacity;
    arena->addChunk(std::max({need, 2 * last, kMinChunk}));
  }
  Chunk& c = arena->_chunks.back();
  slice->_arena = arena;
  slice->_chunk = int(arena->_chunks.size()) - 1;
  slice->_offset = c.used;
  slice->_serial = arena->_reserved++;
  slice->_data = const_cast<char*>(c.bases[std::size_t(arena->_node.rank())]) + c.used;
  c.used += need;
  ++arena->_live;
  return slice;
}

void SharedArena::addChunk(std::size_t bytes) {
  Chunk c;
  c.capacity = pages(bytes);
  MPI_Info info = MPI_INFO_NULL;
  checkMpi(MPI_Info_create(&info), "MPI_Info_create");
  // Each rank's segment on its own pages, placed where that rank first writes it.
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void* mine = nullptr;
  const int code =
      MPI_Win_allocate_shared(MPI_Aint(c.capacity), 1, info, _node.get(), &mine, &c.win);
  MPI_Info_free(&info);
  checkMpi(code, "MPI_Win_allocate_shared");
  checkMpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, c.win), "MPI_Win_lock_all");
  c.bases.resize(std::size_t(_node.size()));
  for (int r = 0; r < _node.size(); ++r) {
    MPI_Aint size = 0;
    int disp_unit = 0;
    void* base = nullptr;
    checkMpi(MPI_Win_shared_query(c.win, r, &size, &disp_unit, &base), "MPI_Win_shared_query");
    c.bases[std::size_t(r)] = static_cast<const char*>(base);
  }
  MemoryTracker::noteAllocation("Host", "halo3d::halo_shared_segment",
                                c.bases[std::size_t(_node.rank())], c.capacity);
  _chunks.push_back(std::move(c));
}

void SharedArena::release() {
  // With no slice left, no neighbour reads this rank's segments: start them afresh.
  if (--_live == 0)
    for (Chunk& c : _chunks)
      c.used = 0;
}

bool SharedArena::sharesNode(int rank) const {
  return rank >= 0 && std::size_t(rank) < _node_rank.size() &&
         _node_rank[std::size_t(rank)] != MPI_UNDEFINED;
}

const void* SharedArena::segment(int chunk, int rank) const {
  return _chunks.at(std::size_t(chunk)).bases.at(std::size_t(_node_rank.at(std::size_t(rank))));
}

void SharedArena::sync() const {
  for (const Chunk& c : _chunks)
    MPI_Win_sync(c.win);
}

}  // namespace halo3d::impl
