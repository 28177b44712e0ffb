#pragma once
// A machine file: what the performance model knows about a machine, as JSON in the repository
// (machines/*.json), every value with its source in a "source" field beside it (measured here by
// which benchmark, or taken from which published specification, or assumed).
//
//   {
//     "name": "...", "source": "...",
//     "cores_per_node": 2,            // hardware threads the ranks of a node share
//     "devices_per_node": 0,          // GPUs per node (0: ranks compute on the host cores)
//     "links": {                      // one message of b bytes costs alpha + b * beta
//       "shared_memory": {"alpha_s": 2e-6, "beta_s_per_byte": 1e-10, "source": "..."},
//       "network":       {"alpha_s": 2e-6, "beta_s_per_byte": 1e-10, "source": "..."}
//     },
//     "reduction": {"gamma_s_per_byte": 2e-10, "source": "..."},  // summing b bytes: b * gamma
//     "io": {"read_bytes_per_s": 2e9, "source": "..."},  // where no batch read is calibrated
//     "compute": {                    // how a layer's time is found
//       "kind": "calibrated",         // from "layers" (measured on this machine), or
//       "kind": "roofline",           // FLOPs / (peak * efficiency) and bytes / (bandwidth * eff.)
//       "peak_flops": 1.57e13, "memory_bytes_per_s": 9e11,
//       "conv_efficiency": [0.35, 0.6], "memory_efficiency": [0.6, 0.85],   // [low, high] band
//       "launch_s": 5e-6, "source": "..."
//     },
//     "scheduler": {"slice_s": 0.004, "source": "..."},  // optional: how long a rank runs before
//                                     // another rank time-sharing its core gets it (calibrated)
//     "core_pacing": {"fraction": 0.05, "source": "..."},  // optional: how much longer a step's
//                                     // compute takes when its ranks run on separate host cores
//                                     // and meet than on one rank alone (measured apart from
//                                     // sweeps: scripts/measure_core_pacing.py)
//     "layers": [ {"layer": "Conv3d(...)", "input": [n, c, d, h, w], "output": [...],
//                  "threads": 1, "forward_s": 0.01, "backward_s": 0.02,
//                  "neighbours": [d, h, w]} ... ]   // calibration; "neighbours" optional
//   }
//
// Besides layers, the "layers" table holds the "input store", "optimizer <kind>" and "batch read
// <data>" timings (Calibration.hpp).
//
// Machine::load refuses a malformed file with an InputError naming the file and the key.

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "halo3d/core/Types.hpp"

namespace halo3d::nn {

struct Link {
  double alpha_s = 0;          // per message
  double beta_s_per_byte = 0;  // per byte
  double time(double bytes, double messages) const {
    return messages * alpha_s + bytes * beta_s_per_byte;
  }
};

// One calibrated layer time: a layer (its kind() text, which names its operator and geometry) on
// one rank's input and output blocks (local samples, channels, D, H, W; owned cells).
//
// `neighbours` tells apart the same blocks of a layer that exchanges halos: per spatial dimension
// D, H, W, which sides of the rank have a neighbour (1: below, 2: above, 3: both). Such a rank runs
// the layer in overlap pieces (interior, then shell slabs: nn/layers/WindowLayer), which cost more
// than the whole block, most with a W neighbour (rows of 16 cells). All zero (the key's absence in
// a file, as in every file written before it existed): the layer in one piece.
struct LayerTiming {
  std::string layer;
  Shape5 input{0, 0, 0, 0, 0}, output{0, 0, 0, 0, 0};
  int threads = 1;
  std::array<int, 3> neighbours{0, 0, 0};
  double forward_s = 0, backward_s = 0;
};

struct RooflineCompute {
  double peak_flops = 0, memory_bytes_per_s = 0;
  std::array<double, 2> conv_efficiency{1, 1}, memory_efficiency{1, 1};  // low, high
  double launch_s = 0;
};

struct Machine {
  std::string name, path;
  int cores_per_node = 1;
  int devices_per_node = 0;
  Link shared_memory, network;
  double reduction_gamma_s_per_byte = 0;
  double io_read_bytes_per_s = 0;
  bool calibrated = true;  // compute.kind: "calibrated" or "roofline"
  std::optional<RooflineCompute> roofline;
  std::vector<LayerTiming> layers;
  std::string document;     // the file as read: save() keeps every other key and its source
  std::string link_source;  // set by calibrateLinks: save() writes the links it measured
  // The scheduler's time slice on a core that several runnable ranks share (0: unknown, and the
  // step model prices no time-sharing lateness). Set from "scheduler.slice_s", or measured by
  // calibrate(), which then sets scheduler_source and save() writes both.
  double scheduler_slice_s = 0;
  std::string scheduler_source;
  // Ranks on separate host cores, none time-sharing one, run the same work slower than the
  // calibration's one rank with the other cores idle: each core has its own speed, which moves
  // from run to run, and wherever the ranks meet the earlier waits for the later. The step model
  // adds this fraction of the step's compute as lateness. From "core_pacing.fraction" (0: absent,
  // nothing added).
  double core_pacing = 0;

  // Reads and checks a machine file. Throws InputError naming the file and the key on a missing,
  // mistyped or out-of-range value, and on JSON that does not parse (with its line).
  static Machine load(const std::string& path);
  // Writes the file back: the "layers" table (how --calibrate stores its measurements) and, when
  // calibrateLinks measured them, the shared-memory link and the reduction rate with their source.
  void save(const std::string& path) const;
  // The calibrated timing of `layer` on these blocks with `threads` threads and these neighbours,
  // if measured.
  const LayerTiming* find(const std::string& layer, const Shape5& input, const Shape5& output,
                          int threads, const std::array<int, 3>& neighbours = {0, 0, 0}) const;
  const LayerTiming* find(const LayerTiming& key) const {
    return find(key.layer, key.input, key.output, key.threads, key.neighbours);
  }
  // Adds or replaces a timing (the same layer, blocks, threads and neighbours).
  void record(const LayerTiming& t);
};

}  // namespace halo3d::nn
