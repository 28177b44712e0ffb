#pragma once
// Counts every Kokkos allocation of this process, per memory space: the bytes live now and the most
// that were live at once (the peak). Kokkos reports each allocation and deallocation to the
// profiling interface (Kokkos Tools), so installing the tracker counts tensors and their ghosts,
// parameters, gradients, optimizer state, saved activations, workspaces, halo and allreduce buffers
// and the data loader's batches alike, whoever allocates them. A Kokkos Tools library loaded
// through KOKKOS_TOOLS_LIBS keeps receiving the events: the tracker forwards them.
//
// Not counted: memory that does not come from a Kokkos View (std::vector scratch, MPI and HDF5
// internals), which the process's resident set (peakResidentBytes) includes, except what its owner
// notes with noteAllocation (the halo exchange's MPI shared-memory segments).

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace halo3d {

struct MemoryUsage {
  std::string space;            // Kokkos memory space name: "Host", "Cuda", "CudaUVM", ...
  std::size_t current = 0;      // bytes allocated now
  std::size_t peak = 0;         // most bytes allocated at once since the last resetPeak()
  std::size_t allocations = 0;  // allocations so far
};

class MemoryTracker {
 public:
  // Starts counting (after Kokkos::initialize; idempotent). Allocations made before are not
  // counted, and their deallocations are ignored.
  static void install();
  static bool installed();
  // Every memory space seen so far.
  static std::vector<MemoryUsage> usage();
  // One space ("Host" for host memory); zeros if nothing was allocated there.
  static MemoryUsage usage(const std::string& space);
  // The largest peak of any space: a rank's figure of merit on a single-space build (host or
  // device).
  static std::size_t peakBytes();
  // Counts (and uncounts) a buffer that is not a Kokkos allocation, as if it were one in `space`.
  // Ignored unless the tracker is installed.
  static void noteAllocation(const char* space, const char* label, const void* ptr,
                             std::size_t bytes);
  static void noteDeallocation(const void* ptr);
  // Sets every space's peak to its current bytes (to measure the peak of one phase).
  static void resetPeak();
  // What was live at the largest peak, summed by allocation label, largest first: what a peak is
  // made of. Recorded when a peak grows by 1% or more, so it may trail the exact peak by that much.
  static std::vector<std::pair<std::string, std::size_t>> peakBreakdown();
};

// The process's peak resident set (getrusage ru_maxrss), in bytes.
std::size_t peakResidentBytes();

}  // namespace halo3d
