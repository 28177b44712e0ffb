#include "halo3d/core/MemoryTracker.hpp"

#include <sys/resource.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>

namespace halo3d {

namespace {

struct Live {
  std::string space;
  std::string label;
  std::size_t bytes = 0;
};

struct State {
  std::mutex mutex;  // the I/O thread allocates too
  bool installed = false;
  std::map<std::string, MemoryUsage> spaces;
  std::unordered_map<const void*, Live> live;
  std::map<std::string, std::size_t> by_label;  // live bytes per label
  std::size_t recorded_peak = 0;                // the peak the breakdown was taken at
  std::vector<std::pair<std::string, std::size_t>> breakdown;
  Kokkos::Tools::Experimental::EventSet chained{};
};

// Called with the mutex held after the live bytes grew.
void recordPeak(State& s, std::size_t peak) {
  if (peak < s.recorded_peak + s.recorded_peak / 100 + 1) return;
  s.recorded_peak = peak;
  s.breakdown.assign(s.by_label.begin(), s.by_label.end());
}

State& state() {
  static State s;
  return s;
}

// Called with the mutex held.
void add(State& s, const char* space, const char* label, const void* ptr, std::size_t size) {
  MemoryUsage& u = s.spaces[space];
  u.space = space;
  u.current += size;
  u.peak = std::max(u.peak, u.current);
  ++u.allocations;
  s.live[ptr] = Live{space, label, size};
  s.by_label[label] += size;
  if (u.current == u.peak) recordPeak(s, u.peak);
}

// Called with the mutex held.
void remove(State& s, const void* ptr) {
  auto it = s.live.find(ptr);
  if (it == s.live.end()) return;  // allocated before install(): never counted
  s.spaces[it->second.space].current -= it->second.bytes;
  auto l = s.by_label.find(it->second.label);
  if ((l->second -= it->second.bytes) == 0) s.by_label.erase(l);
  s.live.erase(it);
}

void onAllocate(Kokkos_Profiling_SpaceHandle handle, const char* label, const void* ptr,
                std::uint64_t size) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    add(s, handle.name, label, ptr, std::size_t(size));
  }
  if (s.chained.allocate_data) s.chained.allocate_data(handle, label, ptr, size);
}

void onDeallocate(Kokkos_Profiling_SpaceHandle handle, const char* label, const void* ptr,
                  std::uint64_t size) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    remove(s, ptr);
  }
  if (s.chained.deallocate_data) s.chained.deallocate_data(handle, label, ptr, size);
}

}  // namespace

void MemoryTracker::install() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.installed) return;
  s.chained = Kokkos::Tools::Experimental::get_callbacks();
  Kokkos::Tools::Experimental::set_allocate_data_callback(onAllocate);
  Kokkos::Tools::Experimental::set_deallocate_data_callback(onDeallocate);
  s.installed = true;
}

void MemoryTracker::noteAllocation(const char* space, const char* label, const void* ptr,
                                   std::size_t bytes) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.installed) add(s, space, label, ptr, bytes);
}

void MemoryTracker::noteDeallocation(const void* ptr) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  remove(s, ptr);
}

bool MemoryTracker::installed() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().installed;
}

std::vector<MemoryUsage> MemoryTracker::usage() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::vector<MemoryUsage> out;
  for (const auto& [name, u] : s.spaces)
    out.push_back(u);
  return out;
}

MemoryUsage MemoryTracker::usage(const std::string& space) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.spaces.find(space);
  if (it == s.spaces.end()) return MemoryUsage{space, 0, 0, 0};
  return it->second;
}

std::size_t MemoryTracker::peakBytes() {
  std::size_t peak = 0;
  for (const MemoryUsage& u : usage())
    peak = std::max(peak, u.peak);
  return peak;
}

void MemoryTracker::resetPeak() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::size_t largest = 0;
  for (auto& [name, u] : s.spaces) {
    u.peak = u.current;
    largest = std::max(largest, u.current);
  }
  s.recorded_peak = largest;
  s.breakdown.assign(s.by_label.begin(), s.by_label.end());
}

std::vector<std::pair<std::string, std::size_t>> MemoryTracker::peakBreakdown() {
  State& s = state();
  std::vector<std::pair<std::string, std::size_t>> out;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    out = s.breakdown;
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::size_t peakResidentBytes() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return std::size_t(r.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace halo3d
