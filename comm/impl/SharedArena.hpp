#pragma once
// SharedArena: MPI-3 shared-memory windows (MPI_Win_allocate_shared) over the ranks of a
// communicator that share a node, one arena per communicator (cached on it as an attribute), from
// which each halo exchange takes a slice of this rank's segment. Every rank of the node reads
// every segment through plain pointers.
//
// The halo exchange packs a message straight into its slice and the neighbour unpacks straight out
// of it: two copies per byte, both at memory speed, where a contiguous message through Open MPI's
// shared-memory transport adds a third, its single-copy (CMA) transfer at a fraction of memory
// speed (docs/PERFORMANCE.md, issue 12). Messages still say when a slice holds data and where, and
// when it may be reused; the arena only holds the bytes.
//
// One arena, not one window per exchange: a window costs collectives (a communicator duplicate, a
// segment created and attached, barriers), about 20 ms at 8 ranks on 2 busy cores, where reserving
// a slice from a chunk with room costs one MPI_Allreduce. A chunk is added (collectively) when some
// rank's slice does not fit; slices are given back when their exchange goes, and a rank's chunks
// are reused from their start once it holds no slice. The chunks are freed with the communicator
// (MPI_Comm_free, collective, like every window's MPI_Win_free); a slice that outlives its
// communicator only lets go of the arena. Every chunk stays open for
// passive-target access (MPI_Win_lock_all), so sync() is the memory barrier that orders a slice's
// bytes with the messages about it.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "halo3d/comm/Communicator.hpp"

namespace halo3d::impl {

class SharedArena;

// A part of this rank's segment in one chunk of an arena, given back when destroyed.
class SharedSlice {
 public:
  SharedSlice() = default;
  SharedSlice(const SharedSlice&) = delete;
  SharedSlice& operator=(const SharedSlice&) = delete;
  ~SharedSlice();

  // False when no other rank of the communicator shares this node (nothing to share).
  bool active() const { return _arena != nullptr; }
  void* data() const { return _data; }
  int chunk() const { return _chunk; }
  std::size_t offset() const { return _offset; }  // in bytes, from the start of the segment
  // The slice's number among those reserved on the communicator, the same on every rank (slices
  // are reserved collectively): lets their users keep their messages apart.
  std::size_t serial() const { return _serial; }
  const SharedArena& arena() const { return *_arena; }

 private:
  friend class SharedArena;
  std::shared_ptr<SharedArena> _arena;
  int _chunk = -1;
  std::size_t _offset = 0;
  std::size_t _serial = 0;
  void* _data = nullptr;
};

class SharedArena {
 public:
  // Collective over `comm`: a slice of `bytes` of this rank's segment in the arena of `comm` (made
  // at the first call). Inactive when no other rank of `comm` shares this node.
  static std::unique_ptr<SharedSlice> reserve(MPI_Comm comm, std::size_t bytes);

  explicit SharedArena(MPI_Comm comm);
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;

  // Whether `rank` (of the arena's communicator) shares this node; false for MPI_PROC_NULL.
  bool sharesNode(int rank) const;
  // The start of `rank`'s segment in `chunk` (rank must share this node).
  const void* segment(int chunk, int rank) const;
  int chunks() const { return int(_chunks.size()); }
  // Memory barrier for the arena's windows (MPI_Win_sync on each): call it after writing a slice
  // and before saying so, and after hearing so and before reading.
  void sync() const;

 private:
  struct Chunk {
    MPI_Win win = MPI_WIN_NULL;
    std::size_t capacity = 0, used = 0;  // this rank's segment, bytes
    std::vector<const char*> bases;      // per node rank
  };
  static int keyval();
  // The communicator is being freed: so are the windows (collective, as the free is).
  static int deleteAttribute(MPI_Comm, int, void* arena, void*);
  void addChunk(std::size_t bytes);
  void release();

  MPI_Comm _comm;
  Communicator _node;
  std::vector<int> _node_rank;  // per rank of _comm: its rank in _node, or MPI_UNDEFINED
  std::vector<Chunk> _chunks;
  std::size_t _live = 0;      // slices not yet given back
  std::size_t _reserved = 0;  // slices ever reserved

  friend class SharedSlice;
};

}  // namespace halo3d::impl
