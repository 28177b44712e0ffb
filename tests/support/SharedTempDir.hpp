#pragma once
// A scratch directory that every rank of the MPI tests sees, for the files a test writes and reads.
#include <mpi.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace halo3d::testing {

// A fresh directory <prefix>_XXXXXX under $TMPDIR (or /tmp), the same on every rank of `comm`;
// removed (by rank 0, after a barrier) when the object dies. Collective over `comm` at construction
// and destruction.
class SharedTempDir {
 public:
  explicit SharedTempDir(MPI_Comm comm = MPI_COMM_WORLD, const std::string& prefix = "halo3d_io")
      : _comm(comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    char buf[4096] = {0};
    if (rank == 0) {
      const char* base = std::getenv("TMPDIR");
      std::string templ = std::string(base && *base ? base : "/tmp") + "/" + prefix + "_XXXXXX";
      if (::mkdtemp(templ.data()) == nullptr) templ.clear();
      templ.copy(buf, sizeof(buf) - 1);
    }
    MPI_Bcast(buf, sizeof(buf), MPI_CHAR, 0, comm);
    _path = buf;
  }
  ~SharedTempDir() {
    MPI_Barrier(_comm);
    int rank = 0;
    MPI_Comm_rank(_comm, &rank);
    std::error_code ec;
    if (rank == 0) std::filesystem::remove_all(_path, ec);
  }
  SharedTempDir(const SharedTempDir&) = delete;
  SharedTempDir& operator=(const SharedTempDir&) = delete;
  const std::string& path() const { return _path; }
  std::string file(const std::string& name) const { return _path + "/" + name; }

 private:
  MPI_Comm _comm;
  std::string _path;
};

}  // namespace halo3d::testing
