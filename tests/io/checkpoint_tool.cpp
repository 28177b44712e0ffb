// A small driver for the checkpoint_to_torch.py round-trip test:
//   checkpoint_tool write PATH      writes a checkpoint with every kind of entry
//   checkpoint_tool compare A B     exit 0 if both are valid and hold the same state
#include <cstdio>
#include <string>

#include "CheckpointTestState.hpp"
#include "halo3d/io/CheckpointFile.hpp"

namespace {

using namespace halo3d;

CheckpointState sampleState() {
  CheckpointState s = testing::stateWithConvWeight({4, 2, 3, 3, 3}, -3.0f, 0.125f);
  s.model["conv1.bias"] = HostArray({4}, std::vector<float>{1, -2, 3.5f, 0});
  s.model["bn1.running_mean"] = HostArray({2}, std::vector<double>{0.25, -0.75});
  s.model["bn1.num_batches_tracked"] = HostArray({}, std::vector<std::int64_t>{42});
  s.counters = {{"epoch", 3}, {"step", 99}, {"rng.dropout", 123456789012LL}};
  s.scalars = {{"lr", 3e-4}};
  s.config = R"({"model":"cosmoflow","note":"é"})";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "write" && argc == 3) {
      writeCheckpointFile(argv[2], sampleState());
      return 0;
    }
    if (cmd == "compare" && argc == 4) {
      const bool same = readCheckpointFile(argv[2]) == readCheckpointFile(argv[3]);
      std::printf("%s\n", same ? "same state" : "states differ");
      return same ? 0 : 1;
    }
    std::fprintf(stderr, "usage: checkpoint_tool write PATH | compare A B\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checkpoint_tool: %s\n", e.what());
  }
  return 1;
}
