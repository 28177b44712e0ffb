#pragma once
// Agreeing on errors and sharing small strings over a communicator, so that a problem seen by one
// rank makes every rank throw together instead of leaving the others waiting in a collective.

#include <mpi.h>

#include <exception>
#include <string>
#include <vector>

namespace halo3d {

// Collective over `comm`. If any rank passes a failure, every rank throws the failure of the lowest
// such rank: its message, and its type where it is a halo3d ShapeError, InputError or IoError
// (halo3d::Error otherwise). Returns normally on every rank if none failed.
void agreeOnError(std::exception_ptr local_failure, MPI_Comm comm);

// Collective over `comm`: runs f() on every rank and agrees on its failure (see agreeOnError).
template <class F>
void runCollectively(MPI_Comm comm, F&& f) {
  std::exception_ptr failure;
  try {
    f();
  } catch (...) {
    failure = std::current_exception();
  }
  agreeOnError(failure, comm);
}

// Collective over `comm`: every rank's string, in rank order.
std::vector<std::string> allgatherStrings(const std::string& mine, MPI_Comm comm);
// Collective over `comm`: `bytes` on `root` is copied to every rank.
void broadcastBytes(std::string& bytes, int root, MPI_Comm comm);

}  // namespace halo3d
