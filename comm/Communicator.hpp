#pragma once
// RAII ownership of an MPI communicator: the communicator is freed with its owner, never leaked and
// never freed twice. Move-only.

#include <mpi.h>

#include <string>

namespace halo3d {

class Communicator {
 public:
  Communicator() = default;
  // Takes ownership of `comm` (which must not be a predefined communicator such as MPI_COMM_WORLD).
  explicit Communicator(MPI_Comm comm) : _comm(comm) {}
  // A duplicate of `comm`, owned: halo3d's messages never mix with the caller's.
  static Communicator duplicate(MPI_Comm comm);
  // MPI_Comm_split of `comm`, owned.
  static Communicator split(MPI_Comm comm, int color, int key);

  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  Communicator(Communicator&& other) noexcept : _comm(other._comm) { other._comm = MPI_COMM_NULL; }
  Communicator& operator=(Communicator&& other) noexcept;
  ~Communicator() { release(); }

  MPI_Comm get() const { return _comm; }
  operator MPI_Comm() const { return _comm; }
  int rank() const;
  int size() const;

 private:
  void release() noexcept;
  MPI_Comm _comm = MPI_COMM_NULL;
};

// Collective over `comm`: how many of its ranks run on this rank's node (share its memory).
int ranksOnNode(MPI_Comm comm);

// Throws halo3d::Error naming `what` and MPI's error string unless `code` is MPI_SUCCESS.
void checkMpi(int code, const char* what);

}  // namespace halo3d
