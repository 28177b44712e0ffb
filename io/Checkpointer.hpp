#pragma once
// Saving checkpoints so that a crash never leaves a torn one, keeping the last K, and finding the
// newest good one.
//
// Save: the file is written to a hidden temporary name in the same directory
// (".<prefix>-<step>.h5.tmp-<pid>"), flushed to disk (fsync), renamed to "<prefix>-<step, 12
// digits>.h5" (atomic on POSIX file systems), and the directory is fsync'ed. Then all but the
// newest `keep_last` checkpoints are removed, with temporaries left by writers that died. A crash
// at any moment leaves the previous checkpoints intact; the completion marker inside each file
// (CheckpointFile.hpp) guards against torn files that reach a final name some other way. One writer
// per directory (the training apps lock it: apps/common/CheckpointDirLock.hpp). Pruning removes
// only files with final names: a file that failed validation is set aside (setAsideCheckpoint) by
// whoever found it, never deleted.

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "halo3d/io/CheckpointState.hpp"

namespace halo3d {

struct CheckpointPolicy {
  std::string dir;  // created if missing
  std::string prefix = "checkpoint";
  int keep_last = 3;  // >= 1
};

struct LoadedCheckpoint {
  std::string path;
  index_t step = 0;
  CheckpointState state;
};

// One process, no MPI: saves `state` as the checkpoint of `step` and prunes. Returns the final
// path. Throws IoError (naming the file) or InputError; a failed save leaves no temporary behind.
std::string saveCheckpointLocal(const CheckpointState& state, index_t step,
                                const CheckpointPolicy& policy);
// Collective over `comm`: `root` saves its `state` (parameters are replicated, any rank's copy is
// the state); every rank returns the path, or every rank throws the root's error.
std::string saveCheckpoint(const CheckpointState& state, index_t step,
                           const CheckpointPolicy& policy, MPI_Comm comm, int root = 0);

// The checkpoint files of `policy` in `dir` (final names only), oldest first, with their steps.
std::vector<std::pair<index_t, std::string>> listCheckpoints(
    const std::string& dir, const std::string& prefix = "checkpoint");

// One process: the newest valid checkpoint in `dir`, or nullopt if none. Invalid files (torn,
// corrupt, not HDF5) are skipped with a warning on stderr naming the file and the reason.
std::optional<LoadedCheckpoint> loadLatestLocal(const std::string& dir,
                                                const std::string& prefix = "checkpoint");
// Collective over `comm`: `root` finds the newest valid checkpoint and broadcasts its bytes; every
// rank returns the same state (or nullopt). Loads on any grid and rank count: nothing in it is
// partitioned. With `invalid`, every rank also gets the paths of the newer files that failed
// validation (newest first), so that a caller can refuse to go on or set them aside.
std::optional<LoadedCheckpoint> loadLatest(const std::string& dir, MPI_Comm comm, int root = 0,
                                           const std::string& prefix = "checkpoint",
                                           std::vector<std::string>* invalid = nullptr);

// One process: renames a checkpoint file that failed validation to "<path>.invalid" (or
// "<path>.invalid-<n>" if that exists), out of the rotation that prunes old checkpoints, so that it
// is never deleted and never mistaken for a checkpoint. Returns the new path; throws IoError naming
// both paths.
std::string setAsideCheckpoint(const std::string& path);

}  // namespace halo3d
