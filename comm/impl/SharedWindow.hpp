#pragma once
// SharedWindow: one MPI-3 shared-memory window (MPI_Win_allocate_shared) over the ranks of a
// communicator that share this rank's node, each rank owning one segment that every other rank of
// the node can read through a plain pointer.
//
// The halo exchange packs a message straight into its own segment and the neighbour unpacks
// straight out of it: two copies per byte, both at memory speed, where a contiguous message
// through Open MPI's shared-memory transport adds a third, its single-copy (CMA) transfer at a
// fraction of memory speed (docs/PERFORMANCE.md, issue 12). Messages still say when a segment
// holds data and when it may be reused; the window only moves the bytes.
//
// Construction and destruction are collective over the node's ranks of `comm` (the destructor
// frees the window: every rank of a node must destroy its windows in the same order, as with
// communicators). A window is kept open for passive-target access (MPI_Win_lock_all) for its whole
// life, so sync() is the memory barrier that orders the segment's bytes with the messages about it.

#include <mpi.h>

#include <cstddef>

#include "halo3d/comm/Communicator.hpp"

namespace halo3d::impl {

class SharedWindow {
 public:
  SharedWindow() = default;
  // Collective over `comm`: every rank gets a segment of `bytes` (page-aligned). When no other
  // rank of `comm` shares this node, no window is made and active() is false.
  SharedWindow(MPI_Comm comm, std::size_t bytes);
  SharedWindow(const SharedWindow&) = delete;
  SharedWindow& operator=(const SharedWindow&) = delete;
  ~SharedWindow();

  bool active() const { return _win != MPI_WIN_NULL; }
  // This rank's segment (null when inactive).
  void* local() const { return _local; }
  // The segment of `rank` (a rank of the constructor's `comm`) when it shares this node and a
  // window is active; null otherwise (MPI_PROC_NULL included).
  void* peer(int rank) const;
  // Memory barrier for the window (MPI_Win_sync): call it after writing a segment and before
  // saying so, and after hearing so and before reading.
  void sync() const;

 private:
  MPI_Comm _comm = MPI_COMM_NULL;  // the constructor's communicator, for rank translation
  Communicator _node;
  MPI_Win _win = MPI_WIN_NULL;
  void* _local = nullptr;
};

}  // namespace halo3d::impl
