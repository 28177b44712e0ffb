#pragma once
// The id of one run, in every metrics record and in the checkpoint directory's lock: UTC start
// time, rank 0's process id and random bits, e.g. "20261201T110203Z-12345-9f3a1c". Runs that share
// a metrics file are told apart by it.

#include <mpi.h>

#include <string>

namespace halo3d::apps {

// A fresh id (one process).
std::string makeRunId();
// Collective over `comm`: rank 0's fresh id on every rank.
std::string makeRunId(MPI_Comm comm);

}  // namespace halo3d::apps
