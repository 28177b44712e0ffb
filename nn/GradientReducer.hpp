#pragma once
// Sums the gradients of all ranks with non-blocking, bucketed allreduces overlapped with backward.
//
// Buckets are contiguous ranges of the store's flat gradient, filled in backward order (the last
// registered parameters first). A layer calls markReady() for each parameter whose gradient is
// final; a bucket's allreduce starts as soon as all its parameters are ready, and buckets always
// start in the same order on every rank, as MPI requires of collectives. finish() waits for all of
// them.
//
// Wire precision: fp32 (the default) reduces the gradients as they are. bf16 (--allreduce-precision
// bf16) halves the bytes on the wire and needs no buffer at all: each bucket is rounded to bf16 in
// the first half of its own memory (core/NarrowInPlace.hpp), summed in place with a float-adding
// operation (comm/Bf16Sum.hpp), and widened back; the summed gradient is a bf16 value, rounded
// about log2(P) times on its way (once per level of MPI's reduction tree). Memory MPI cannot
// access, or that the host cannot reach for the operation, is staged through a host float copy.
//
// Scaling: layers seed backward with the gradient of the *global* mean loss, so the plain sum over
// ranks is the single-process gradient. Parameters of replicated layers (identical on every rank of
// a spatial group) must be contributed by one rank of the group only (see Layer docs), otherwise
// they would be counted S times.

#include <mpi.h>

#include <vector>

#include "halo3d/core/KernelPath.hpp"
#include "halo3d/nn/Parameter.hpp"
#include "halo3d/nn/Precision.hpp"

namespace halo3d::nn {

class GradientReducer {
 public:
  // Collective-free setup. `comm` is the communicator of all ranks holding replicas of the
  // parameters. Buckets are staged through host copies where MPI cannot access the gradients'
  // memory (comm/MpiTraits.hpp), and with KernelPath::Device (the tests run that device code on the
  // host).
  GradientReducer(MPI_Comm comm, ParameterStore& store,
                  std::size_t bucket_bytes = std::size_t(4) << 20,
                  KernelPath path = KernelPath::Fastest, Precision wire = Precision::fp32);
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;
  ~GradientReducer();

  // Arms the buckets for one backward pass.
  void begin();
  // The gradient of `p` is final for this step.
  void markReady(const Parameter& p);
  // Starts what is left, waits for every bucket, and leaves the summed gradients in the store.
  void finish();

  std::size_t buckets() const { return _buckets.size(); }
  Precision wire() const { return _wire; }
  // Seconds spent blocked in finish() during the last step (the part of the allreduce backward did
  // not hide).
  double lastWaitSeconds() const { return _wait_seconds; }

 private:
  struct Bucket {
    std::size_t lo = 0, hi = 0;  // range in the flat gradient
    int params = 0, pending = 0;
    bool started = false;
    MPI_Request request = MPI_REQUEST_NULL;
    // Not in place: Open MPI's libnbc takes its binomial algorithm for an in-place MPI_Iallreduce
    // at any size (nbc_iallreduce.c), which moves the whole bucket 2 log2(P) times; with a separate
    // receive buffer it takes reduce-scatter + allgather (Rabenseifner) for buckets of 64 KiB or
    // more on 4 ranks or more. `send` is where MPI reads (the gradients, or their host copy),
    // `result` where it writes; finish() copies the result back into the gradients. A bf16 wire
    // reduces in place, in the gradients' own memory or in `send`: no result buffer.
    Kokkos::View<real*, Kokkos::HostSpace> send, result_host;  // staged: MPI reads host copies
    Kokkos::View<real*, Memory> result;                        // not staged, fp32 wire
  };
  void startReady();

  MPI_Comm _comm;
  ParameterStore& _store;
  Precision _wire;
  bool _staged;  // buckets go through host copies
  // One rank and an fp32 wire: the gradients are already the sum, so no bucket is sent and no
  // buffer allocated (the memory model counts none at P = 1).
  bool _alone;
  std::vector<Bucket> _buckets;
  std::vector<int> _bucket_of;  // per trainable parameter (registration order)
  std::size_t _next = 0;
  bool _armed = false;
  double _wait_seconds = 0;
};

}  // namespace halo3d::nn
