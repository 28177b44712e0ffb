// The host kernels' shared scratch buffer; see HostScratchpad.hpp.
#include "halo3d/kernels/HostScratchpad.hpp"

#include <atomic>
#include <mutex>
#include <utility>

namespace halo3d::kernels {

namespace {

constexpr std::size_t kAlign = 64;

std::size_t roundUp(std::size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// busy: a lease holds `buffer`. The mutex only orders the finalize hook's registration and a
// release against a lease's growth; leases themselves take `busy` without it.
struct Shared {
  std::atomic<bool> busy{false};
  std::mutex mutex;
  Kokkos::View<char*, Kokkos::HostSpace> buffer;
  bool hook = false;  // the finalize hook is registered
};

Shared& state() {
  static Shared s;
  return s;
}

// Kokkos allocations must be freed before Kokkos::finalize.
void registerFinalizeHook(Shared& s) {
  if (s.hook) return;
  s.hook = true;
  Kokkos::push_finalize_hook([] {
    Shared& sh = state();
    const std::lock_guard<std::mutex> lock(sh.mutex);
    sh.buffer = Kokkos::View<char*, Kokkos::HostSpace>();
    sh.hook = false;
  });
}

}  // namespace

ScratchpadLease::ScratchpadLease(Fence fence) : _fence(std::move(fence)) {
  _shared = !state().busy.exchange(true, std::memory_order_acquire);
}

ScratchpadLease::~ScratchpadLease() {
  _fence.run();
  // The pieces of its own go first, so that growing the buffer never holds both at once.
  _own.clear();
  if (!_shared) return;
  Shared& s = state();
  if (_used > s.buffer.extent(0)) {
    // Grown to this call's total: the next call of the same shape fits, with no fresh pages.
    const std::lock_guard<std::mutex> lock(s.mutex);
    s.buffer = Kokkos::View<char*, Kokkos::HostSpace>();
    s.buffer = Kokkos::View<char*, Kokkos::HostSpace>(
        Kokkos::view_alloc("halo3d::host scratchpad", Kokkos::WithoutInitializing), _used);
    registerFinalizeHook(s);
  }
  s.busy.store(false, std::memory_order_release);
}

void* ScratchpadLease::takeBytes(std::size_t bytes) {
  const std::size_t size = roundUp(bytes == 0 ? 1 : bytes);
  const std::size_t at = _used;
  _used += size;
  if (_shared && _used <= state().buffer.extent(0)) return state().buffer.data() + at;
  // Did not fit (or another lease holds the buffer): a piece of its own, 64-byte aligned as Kokkos
  // aligns every allocation.
  _own.emplace_back(Kokkos::view_alloc("halo3d::host scratch piece", Kokkos::WithoutInitializing),
                    size);
  return _own.back().data();
}

std::size_t hostScratchpadBytes() {
  Shared& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return s.buffer.extent(0);
}

void releaseHostScratchpad() {
  Shared& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.buffer = Kokkos::View<char*, Kokkos::HostSpace>();
}

}  // namespace halo3d::kernels
