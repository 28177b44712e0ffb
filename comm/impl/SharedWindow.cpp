#include "halo3d/comm/impl/SharedWindow.hpp"

#include <algorithm>

namespace halo3d::impl {

namespace {
constexpr std::size_t kPage = 4096;
}

SharedWindow::SharedWindow(MPI_Comm comm, std::size_t bytes) : _comm(comm) {
  MPI_Comm node = MPI_COMM_NULL;
  checkMpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
           "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  _node = Communicator(node);
  if (_node.size() < 2) return;
  // Whole pages per rank: no two ranks write the same cache line or page, and each segment is
  // placed by the rank that writes it (non-contiguous allocation).
  // At least one page, so that every rank's segment has an address (peer() is never null for a
  // rank of the node).
  const std::size_t rounded = std::max<std::size_t>(1, (bytes + kPage - 1) / kPage) * kPage;
  MPI_Info info = MPI_INFO_NULL;
  checkMpi(MPI_Info_create(&info), "MPI_Info_create");
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  const int code = MPI_Win_allocate_shared(MPI_Aint(rounded), 1, info, _node.get(), &_local, &_win);
  MPI_Info_free(&info);
  checkMpi(code, "MPI_Win_allocate_shared");
  checkMpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, _win), "MPI_Win_lock_all");
}

SharedWindow::~SharedWindow() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (_win != MPI_WIN_NULL && !finalized) {
    MPI_Win_unlock_all(_win);
    MPI_Win_free(&_win);
  }
}

void* SharedWindow::peer(int rank) const {
  if (!active() || rank == MPI_PROC_NULL) return nullptr;
  MPI_Group from = MPI_GROUP_NULL, to = MPI_GROUP_NULL;
  MPI_Comm_group(_comm, &from);
  MPI_Comm_group(_node.get(), &to);
  int node_rank = MPI_UNDEFINED;
  MPI_Group_translate_ranks(from, 1, &rank, to, &node_rank);
  MPI_Group_free(&from);
  MPI_Group_free(&to);
  if (node_rank == MPI_UNDEFINED) return nullptr;
  MPI_Aint size = 0;
  int disp_unit = 0;
  void* base = nullptr;
  checkMpi(MPI_Win_shared_query(_win, node_rank, &size, &disp_unit, &base), "MPI_Win_shared_query");
  return base;
}

void SharedWindow::sync() const {
  if (active()) MPI_Win_sync(_win);
}

}  // namespace halo3d::impl
