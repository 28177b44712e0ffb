#pragma once
// One checkpoint as an HDF5 file (docs/data-format.md):
//
//   /model/<name>, /optimizer/<name>   datasets in their element type and global shape
//   /counters/<name>                   int64 scalars;   /scalars/<name>   float64 scalars
//   /config                            fixed-length string: the run configuration (JSON)
//   / attrs  format = "halo3d-checkpoint", version = 1,
//            halo3d_crc32 = CRC-32 of the content, written last: the completion marker
//
// A file is valid only if the marker is present and matches the content, so a torn or corrupted
// file is never taken for a good one. Object time stamps are off: the same state gives the same
// bytes.

#include <cstdint>
#include <string>

#include "halo3d/io/CheckpointState.hpp"

namespace halo3d {

// Writes `state` to `path` (truncating it). Serial HDF5; no MPI. Throws InputError for names HDF5
// cannot hold (empty, containing '/', "." or ".."), IoError naming the file on failure.
void writeCheckpointFile(const std::string& path, const CheckpointState& state);

// Reads and validates a checkpoint file. Throws IoError naming the file and the reason: not HDF5,
// not a checkpoint, no completion marker (torn), checksum mismatch (corrupt), malformed dataset.
CheckpointState readCheckpointFile(const std::string& path);
// The same from the bytes of a checkpoint file held in memory; `name` is used in messages.
CheckpointState readCheckpointImage(const std::string& bytes, const std::string& name);

// The CRC-32 (IEEE, as zlib.crc32) of the checkpoint's canonical byte stream, the value of the
// marker: sections model, optimizer (each name in byte order: "<section>/<name>\0<dtype>\0", int64
// rank, int64 dims, little-endian values), counters ("counters/<name>\0", int64), scalars
// ("scalars/<name>\0", float64), then "config\0" and the config text.
// scripts/checkpoint_to_torch.py computes the same.
std::uint32_t checkpointChecksum(const CheckpointState& state);

}  // namespace halo3d
