#pragma once
// The host convolutions' scratch memory (Conv3d's engines, float and bf16, and ConvTranspose3d's
// host code), kept between calls: one buffer per process that grows to the largest amount any one
// call has asked for and is then reused, as oneDNN's default ("library") scratchpad is. A call
// leases it, takes its pieces (packed weights, partial sums, offset tables, de-interleaved inputs,
// bf16 plane rings) in order, and gives it back when the lease ends.
//
// Why not allocate per call: a fresh allocation costs a page fault per 4 KiB page on first touch,
// and whether glibc hands back recycled pages or fresh ones depends on the heap's history (its
// dynamic mmap and trim thresholds). On this VM a fault costs about 10 us: (d)'s 442 KB of packed
// weights, faulted on every call, took the 64 -> 64 16^3 forward from 3.9 to 4.9-5.9 ms while
// oneDNN's stayed at 4.0 (docs/PERFORMANCE.md, "Scratch kept between calls").
//
// The buffer is a Kokkos allocation ("halo3d::host scratchpad"), so MemoryTracker counts it; it
// stays allocated until releaseHostScratchpad() or Kokkos::finalize. A lease taken while another is
// live (another host thread, or a nested call) is served by allocations of its own, so concurrent
// callers stay correct, only without the reuse.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <functional>
#include <vector>

namespace halo3d::kernels {

class ScratchpadLease {
 public:
  // `exec` is fenced when the lease ends, so no kernel of the call still reads the pieces when the
  // next lease reuses them (the host backends run parallel_for to completion; the fence keeps
  // that an explicit guarantee).
  template <class ExecSpace>
  explicit ScratchpadLease(const ExecSpace& exec)
      : ScratchpadLease(Fence{[exec] { exec.fence(); }}) {}
  ~ScratchpadLease();
  ScratchpadLease(const ScratchpadLease&) = delete;
  ScratchpadLease& operator=(const ScratchpadLease&) = delete;

  // `count` values of T, uninitialised and 64-byte aligned, valid until the lease ends.
  template <class T>
  T* take(std::size_t count) {
    return static_cast<T*>(takeBytes(count * sizeof(T)));
  }
  // The same as an (unmanaged) View.
  template <class T>
  Kokkos::View<T*, Kokkos::HostSpace> view(std::size_t count) {
    return Kokkos::View<T*, Kokkos::HostSpace>(take<T>(count), count);
  }

  // Whether this lease holds the shared buffer (false: another lease was live when it began).
  bool shared() const { return _shared; }

 private:
  struct Fence {
    std::function<void()> run;
  };
  explicit ScratchpadLease(Fence fence);
  void* takeBytes(std::size_t bytes);

  Fence _fence;
  bool _shared = false;
  std::size_t _used = 0;  // bytes taken so far, each piece rounded up to 64
  std::vector<Kokkos::View<char*, Kokkos::HostSpace>> _own;  // pieces that did not fit
};

// Bytes the shared buffer holds now (0 before the first lease or after a release).
std::size_t hostScratchpadBytes();

// Frees the shared buffer (it grows again on the next lease). Not while a lease is live.
void releaseHostScratchpad();

}  // namespace halo3d::kernels
