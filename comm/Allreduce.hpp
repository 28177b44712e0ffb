#pragma once
// Thin wrappers for sum-allreduce over the three groups of a ProcessGrid: the spatial group (the
// blocks of one sample group), the data group (the same block of every sample group) and the whole
// grid. PendingAllreduce is the RAII handle of a non-blocking allreduce: it completes (and, for
// device data staged through host, copies the result back) on wait() or, at the latest, on
// destruction.

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <functional>
#include <utility>

#include "halo3d/comm/Communicator.hpp"
#include "halo3d/comm/MpiTraits.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/KernelPath.hpp"

namespace halo3d {

enum class ReduceGroup { Spatial, Data, World };

inline MPI_Comm commOf(const ProcessGrid& grid, ReduceGroup group) {
  switch (group) {
    case ReduceGroup::Spatial:
      return grid.spatialComm();
    case ReduceGroup::Data:
      return grid.dataComm();
    case ReduceGroup::World:
      break;
  }
  return grid.comm();
}

// In-place sum of host data over `comm`.
template <class T>
void allreduceSum(T* data, std::size_t count, MPI_Comm comm) {
  checkMpi(MPI_Allreduce(MPI_IN_PLACE, data, int(count), mpiType<T>(), MPI_SUM, comm),
           "MPI_Allreduce");
}

// The sum and the maximum of one scalar over `comm`.
template <class T>
T sumOver(T value, MPI_Comm comm) {
  allreduceSum(&value, 1, comm);
  return value;
}

template <class T>
T maxOver(T value, MPI_Comm comm) {
  checkMpi(MPI_Allreduce(MPI_IN_PLACE, &value, 1, mpiType<T>(), MPI_MAX, comm), "MPI_Allreduce");
  return value;
}

class PendingAllreduce {
 public:
  PendingAllreduce() = default;
  PendingAllreduce(MPI_Request request, std::function<void()> on_done)
      : _request(request), _on_done(std::move(on_done)) {}
  PendingAllreduce(const PendingAllreduce&) = delete;
  PendingAllreduce& operator=(const PendingAllreduce&) = delete;
  PendingAllreduce(PendingAllreduce&& o) noexcept
      : _request(o._request), _on_done(std::move(o._on_done)) {
    o._request = MPI_REQUEST_NULL;
    o._on_done = nullptr;
  }
  PendingAllreduce& operator=(PendingAllreduce&& o) noexcept {
    if (this != &o) {
      wait();
      _request = o._request;
      _on_done = std::move(o._on_done);
      o._request = MPI_REQUEST_NULL;
      o._on_done = nullptr;
    }
    return *this;
  }
  ~PendingAllreduce() { wait(); }

  // Blocks until the sum is in place. Idempotent.
  void wait() {
    if (_request != MPI_REQUEST_NULL) MPI_Wait(&_request, MPI_STATUS_IGNORE);
    if (_on_done) {
      auto done = std::move(_on_done);
      _on_done = nullptr;
      done();
    }
  }
  // True once complete (then wait() returns at once). Progresses MPI.
  bool test() {
    int flag = 1;
    if (_request != MPI_REQUEST_NULL) MPI_Test(&_request, &flag, MPI_STATUS_IGNORE);
    return flag != 0;
  }

 private:
  MPI_Request _request = MPI_REQUEST_NULL;
  std::function<void()> _on_done;
};

// Starts an in-place sum of a contiguous View over `comm`. Memory MPI cannot access
// (kMpiCanAccess, comm/MpiTraits.hpp) is staged through a host copy, as is any memory with
// KernelPath::Device (what a device build without GPU-aware MPI runs; the tests run it on the
// host). `v` must stay alive and untouched until the handle completes.
template <class View>
PendingAllreduce startAllreduceSum(const View& v, MPI_Comm comm,
                                   KernelPath path = KernelPath::Fastest) {
  using T = typename View::non_const_value_type;
  static_assert(std::is_same<typename View::value_type, T>::value,
                "allreduce needs a non-const View");
  require(v.span_is_contiguous(), "startAllreduceSum: View '", v.label(), "' is not contiguous");
  Kokkos::fence();
  MPI_Request request = MPI_REQUEST_NULL;
  if constexpr (kMpiCanAccess<typename View::memory_space>) {
    if (path == KernelPath::Fastest) {
      checkMpi(MPI_Iallreduce(MPI_IN_PLACE, v.data(), int(v.span()), mpiType<T>(), MPI_SUM, comm,
                              &request),
               "MPI_Iallreduce");
      return PendingAllreduce(request, nullptr);
    }
  }
  // A separate host copy (create_mirror_view would alias host memory).
  auto host = Kokkos::create_mirror(Kokkos::HostSpace(), v);
  Kokkos::deep_copy(host, v);
  checkMpi(MPI_Iallreduce(MPI_IN_PLACE, host.data(), int(host.span()), mpiType<T>(), MPI_SUM, comm,
                          &request),
           "MPI_Iallreduce");
  return PendingAllreduce(request, [v, host]() { Kokkos::deep_copy(v, host); });
}

// Blocking form of startAllreduceSum.
template <class View>
void allreduceSum(const View& v, MPI_Comm comm, KernelPath path = KernelPath::Fastest) {
  startAllreduceSum(v, comm, path).wait();
}

template <class View>
PendingAllreduce startAllreduceSum(const View& v, const ProcessGrid& grid, ReduceGroup group,
                                   KernelPath path = KernelPath::Fastest) {
  return startAllreduceSum(v, commOf(grid, group), path);
}

}  // namespace halo3d
