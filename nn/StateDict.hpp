#pragma once
// The model's state as a PyTorch-style state_dict: named host arrays in global layout. Used to load
// --init-weights files (e.g. the `initial` group of the reference files), and to fill and restore
// checkpoints.

#include <map>
#include <string>

#include "halo3d/io/CheckpointState.hpp"
#include "halo3d/nn/Parameter.hpp"

namespace halo3d::nn {

using StateDict = std::map<std::string, HostArray>;

// Every parameter and buffer (float32) and counter (int64 scalar, e.g.
// "features.1.num_batches_tracked").
StateDict exportStateDict(const ParameterStore& store);

// Copies `dict` into the store. Every parameter and buffer must be present with its exact shape
// (float32 or float64, converted); counters are taken when present. Throws InputError listing every
// missing key and every shape mismatch, naming `source` (a file and group). Keys of `dict` the
// model does not know are ignored.
void importStateDict(ParameterStore& store, const StateDict& dict, const std::string& source);

// Reads every dataset of group `group` ("/" for the file root) of HDF5 file `path`. Throws IoError
// naming the file and group if either is missing or unreadable. Serial: any rank may call it.
StateDict readStateDictFile(const std::string& path, const std::string& group);

// "FILE.h5[:/group]" -> {file, group}; the group defaults to "/".
std::pair<std::string, std::string> splitWeightsSpec(const std::string& spec);

}  // namespace halo3d::nn
