#pragma once
// A calibrated machine with no timings yet, for the calibration and step-model tests: one node of
// 64 cores (no time-sharing), links of 1 us and 1 ns per byte, a read rate that costs nothing.
#include "halo3d/nn/plan/Machine.hpp"

namespace halo3d::nn::testing {

inline Machine calibratedMachine() {
  Machine m;
  m.name = "test";
  m.cores_per_node = 64;
  m.shared_memory = m.network = Link{1e-6, 1e-9};
  m.io_read_bytes_per_s = 1e12;
  return m;
}

}  // namespace halo3d::nn::testing
