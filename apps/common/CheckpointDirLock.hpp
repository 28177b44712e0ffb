#pragma once
// One training run per checkpoint directory. Rank 0 holds an exclusive flock(2) on `DIR/.lock` for
// the run and writes the holder into it (host, pid, start time, run id); a second run on the same
// directory is refused with a message naming the holder. The kernel drops the lock when the holding
// process ends in any way (SIGKILL included), so a killed run never blocks the next one: the file
// that stays behind names its last holder only.
//
// On a file system without flock support (some NFS and Lustre mounts) the lock cannot be taken:
// the run goes on with a warning that concurrent runs are not detected there.

#include <mpi.h>

#include <string>

namespace halo3d::apps {

class CheckpointDirLock {
 public:
  // Collective over `comm`: creates `dir` if needed and locks it. Throws InputError on every rank
  // if another process holds the lock (naming it), IoError if the directory or the lock file cannot
  // be made.
  CheckpointDirLock(const std::string& dir, const std::string& run_id, MPI_Comm comm);
  // Releases the lock (rank 0).
  ~CheckpointDirLock();
  CheckpointDirLock(const CheckpointDirLock&) = delete;
  CheckpointDirLock& operator=(const CheckpointDirLock&) = delete;

 private:
  int _fd = -1;
};

}  // namespace halo3d::apps
