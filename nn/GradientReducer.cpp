#include "halo3d/nn/GradientReducer.hpp"

#include "halo3d/comm/Bf16Sum.hpp"
#include "halo3d/comm/Communicator.hpp"
#include "halo3d/comm/MpiTraits.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/core/NarrowInPlace.hpp"

namespace halo3d::nn {

namespace {
int communicatorSize(MPI_Comm comm) {
  int size = 0;
  checkMpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return size;
}
}  // namespace

GradientReducer::GradientReducer(MPI_Comm comm, ParameterStore& store, std::size_t bucket_bytes,
                                 KernelPath path, Precision wire)
    : _comm(comm),
      _store(store),
      _wire(wire),
      // The bf16 sum runs on the host, inside MPI: a GPU-aware MPI would hand it device memory.
      _staged(!kMpiCanAccess<Memory> || path == KernelPath::Device ||
              (wire == Precision::bf16 &&
               !Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible)),
      _alone(wire == Precision::fp32 && communicatorSize(comm) == 1) {
  require(store.finalized(), "GradientReducer needs a finalized ParameterStore");
  const std::vector<Parameter*> params = store.trainable();
  _bucket_of.assign(params.size(), -1);
  // Backward visits parameters in reverse registration order; fill buckets that way.
  for (std::size_t k = params.size(); k-- > 0;) {
    const Parameter& p = *params[k];
    if (_buckets.empty() ||
        (_buckets.back().hi - _buckets.back().lo) * sizeof(real) >= bucket_bytes) {
      Bucket b;
      b.lo = b.hi = p.offset() + p.size();
      _buckets.push_back(b);
    }
    Bucket& b = _buckets.back();
    b.lo = p.offset();
    ++b.params;
    _bucket_of[k] = int(_buckets.size() - 1);
  }
  for (Bucket& b : _buckets) {
    const std::size_t n = b.hi - b.lo;
    if (_alone) continue;
    if (_staged) {
      b.send = Kokkos::View<real*, Kokkos::HostSpace>(
          Kokkos::view_alloc("halo3d::gradient_send", Kokkos::WithoutInitializing), n);
      if (_wire == Precision::bf16) continue;  // reduced in place in `send`
      b.result_host = Kokkos::View<real*, Kokkos::HostSpace>(
          Kokkos::view_alloc("halo3d::gradient_result", Kokkos::WithoutInitializing), n);
    } else if (_wire == Precision::fp32) {
      b.result = Kokkos::View<real*, Memory>(
          Kokkos::view_alloc("halo3d::gradient_result", Kokkos::WithoutInitializing), n);
    }
  }
}

GradientReducer::~GradientReducer() {
  for (Bucket& b : _buckets)
    if (b.request != MPI_REQUEST_NULL) MPI_Wait(&b.request, MPI_STATUS_IGNORE);
}

void GradientReducer::begin() {
  require(!_armed, "GradientReducer::begin() while a step is in flight");
  for (Bucket& b : _buckets) {
    b.pending = b.params;
    b.started = false;
  }
  _next = 0;
  _armed = true;
}

void GradientReducer::markReady(const Parameter& p) {
  require(_armed, "GradientReducer::markReady('", p.name(), "') outside begin()/finish()");
  const std::vector<Parameter*> params = _store.trainable();
  for (std::size_t k = 0; k < params.size(); ++k)
    if (params[k] == &p) {
      Bucket& b = _buckets[std::size_t(_bucket_of[k])];
      require(b.pending > 0, "gradient of '", p.name(), "' marked ready twice in one step");
      --b.pending;
      startReady();
      return;
    }
  throw Error(concat("GradientReducer::markReady: '", p.name(),
                     "' is not a trainable parameter of this store"));
}

void GradientReducer::startReady() {
  // Gradients are written by kernels on the default execution space: they must be complete before
  // MPI reads.
  bool fenced = false;
  while (_next < _buckets.size() && _buckets[_next].pending == 0) {
    Bucket& b = _buckets[_next];
    if (_alone) {
      b.started = true;
      ++_next;
      continue;
    }
    if (!fenced) {
      fence("gradients final before their bucket allreduce");
      fenced = true;
    }
    auto range = Kokkos::subview(_store.grads(), Kokkos::make_pair(b.lo, b.hi));
    const int n = int(b.hi - b.lo);
    if (_wire == Precision::bf16) {
      real* data = range.data();
      if (_staged) {
        Kokkos::deep_copy(b.send, range);
        data = b.send.data();
        narrowToBf16InPlace(Kokkos::DefaultHostExecutionSpace(), data, std::size_t(n));
        Kokkos::DefaultHostExecutionSpace().fence();
      } else {
        narrowToBf16InPlace(Kokkos::DefaultExecutionSpace(), data, std::size_t(n));
        fence("bucket rounded to bf16 before its allreduce");
      }
      checkMpi(
          MPI_Iallreduce(MPI_IN_PLACE, data, n, mpiType<bf16>(), bf16SumOp(), _comm, &b.request),
          "gradient MPI_Iallreduce (bf16)");
    } else {
      const real* send = range.data();
      real* result = b.result.data();
      if (_staged) {
        Kokkos::deep_copy(b.send, range);
        send = b.send.data();
        result = b.result_host.data();
      }
      checkMpi(MPI_Iallreduce(send, result, n, mpiType<real>(), MPI_SUM, _comm, &b.request),
               "gradient MPI_Iallreduce");
    }
    b.started = true;
    ++_next;
  }
  // Nudge progress of what is in flight.
  for (std::size_t k = 0; k < _next; ++k) {
    int done = 0;
    if (_buckets[k].request != MPI_REQUEST_NULL)
      MPI_Test(&_buckets[k].request, &done, MPI_STATUS_IGNORE);
  }
}

void GradientReducer::finish() {
  require(_armed, "GradientReducer::finish() without begin()");
  for (Bucket& b : _buckets)
    b.pending = 0;
  startReady();
  const double t0 = MPI_Wtime();
  for (Bucket& b : _buckets) {
    if (_alone) continue;
    if (b.request != MPI_REQUEST_NULL) MPI_Wait(&b.request, MPI_STATUS_IGNORE);
    const auto range = Kokkos::subview(_store.grads(), Kokkos::make_pair(b.lo, b.hi));
    const std::size_t n = b.hi - b.lo;
    if (_wire == Precision::bf16 && _staged) {
      widenFromBf16InPlace(Kokkos::DefaultHostExecutionSpace(), b.send.data(), n);
      Kokkos::DefaultHostExecutionSpace().fence();
      Kokkos::deep_copy(range, b.send);
    } else if (_wire == Precision::bf16) {
      widenFromBf16InPlace(Kokkos::DefaultExecutionSpace(), range.data(), n);
    } else if (_staged) {
      Kokkos::deep_copy(range, b.result_host);
    } else {
      Kokkos::deep_copy(range, b.result);
    }
  }
  if (_wire == Precision::bf16 && !_staged) fence("gradients widened from bf16");
  _wait_seconds = MPI_Wtime() - t0;
  _armed = false;
}

}  // namespace halo3d::nn
