#include "halo3d/comm/Communicator.hpp"

#include "halo3d/core/Error.hpp"

namespace halo3d {

void checkMpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw Error(concat(what, " failed: ", std::string(text, len)));
}

Communicator Communicator::duplicate(MPI_Comm comm) {
  MPI_Comm dup = MPI_COMM_NULL;
  checkMpi(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
  return Communicator(dup);
}

Communicator Communicator::split(MPI_Comm comm, int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  checkMpi(MPI_Comm_split(comm, color, key, &out), "MPI_Comm_split");
  return Communicator(out);
}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    release();
    _comm = other._comm;
    other._comm = MPI_COMM_NULL;
  }
  return *this;
}

int Communicator::rank() const {
  int r = 0;
  MPI_Comm_rank(_comm, &r);
  return r;
}

int Communicator::size() const {
  int s = 0;
  MPI_Comm_size(_comm, &s);
  return s;
}

int ranksOnNode(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  checkMpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
           "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  return Communicator(node).size();
}

void Communicator::release() noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (_comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&_comm);
  _comm = MPI_COMM_NULL;
}

}  // namespace halo3d
