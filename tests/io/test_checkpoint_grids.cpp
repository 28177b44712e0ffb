// Checkpoints under MPI: saved from every grid of the communicator's size into byte-identical
// files, loaded on every rank and on fewer ranks (sub-communicators of half the size, and single
// ranks), and errors of the writing rank thrown on every rank.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "CheckpointTestState.hpp"
#include "IoTestSupport.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/io/Checkpointer.hpp"
#include "support/GridFactorisations.hpp"

namespace halo3d {
namespace {

using testing::allGrids;
using testing::worldRank;
using testing::worldSize;

CheckpointState replicatedState() {
  CheckpointState s = testing::stateWithConvWeight({2, 3, 3, 3, 3}, -1.0f, 0.01f);
  s.model["fc.bias"] = HostArray({4}, std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f});
  s.counters = {{"epoch", 2}, {"step", 17}};
  s.scalars = {{"lr", 5e-4}};
  s.config = R"({"model":"cosmoflow","batch_size":4})";
  return s;
}

std::string bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(CheckpointGrids, FilesAreByteIdenticalAcrossGridsAndLoadEverywhere) {
  testing::SharedTempDir dir;
  const CheckpointState s = replicatedState();
  std::string reference;
  int g = 0;
  for (const GridShape& shape : allGrids(worldSize())) {
    SCOPED_TRACE("grid " + shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    const CheckpointPolicy policy{dir.file("grid" + std::to_string(g++)), "checkpoint", 2};
    const std::string path = saveCheckpoint(s, 17, policy, grid.comm());
    EXPECT_EQ(path, policy.dir + "/checkpoint-000000000017.h5");
    if (worldRank() == 0) {
      const std::string bytes = bytesOf(path);
      if (reference.empty()) reference = bytes;
      EXPECT_TRUE(bytes == reference) << "file of grid " << shape.str() << " differs";
    }
    const auto loaded = loadLatest(policy.dir, grid.comm());
    ASSERT_TRUE(loaded.has_value());
    EXPECT_EQ(loaded->step, 17);
    EXPECT_TRUE(loaded->state == s);
  }
}

TEST(CheckpointGrids, WrittenOnAllRanksLoadsOnFewer) {
  testing::SharedTempDir dir;
  const CheckpointState s = replicatedState();
  const CheckpointPolicy policy{dir.file("run"), "checkpoint", 3};
  {
    ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, 1, 1, worldSize()));
    saveCheckpoint(s, 5, policy, grid.comm());
  }
  // Sub-communicators of P/2, P/4, ..., 1 ranks each load it on their own grid.
  for (int size = std::max(1, worldSize() / 2); size >= 1; size /= 2) {
    SCOPED_TRACE("sub-communicators of " + std::to_string(size) + " ranks");
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, worldRank() / size, worldRank(), &sub);
    {
      ProcessGrid grid(sub, GridShape(1, size, 1, 1));
      const auto loaded = loadLatest(policy.dir, grid.comm());
      ASSERT_TRUE(loaded.has_value());
      EXPECT_TRUE(loaded->state == s);
    }
    MPI_Comm_free(&sub);
    if (size == 1) break;
  }
}

TEST(CheckpointGrids, ErrorsOfTheWritingRankReachEveryRank) {
  testing::SharedTempDir dir;
  if (worldRank() == 0) std::ofstream(dir.file("not_a_dir")) << "x";
  MPI_Barrier(MPI_COMM_WORLD);
  const CheckpointPolicy policy{dir.file("not_a_dir"), "checkpoint", 2};
  try {
    saveCheckpoint(replicatedState(), 1, policy, MPI_COMM_WORLD);
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("not_a_dir"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(loadLatest(dir.file("missing"), MPI_COMM_WORLD).has_value());
}

// A corrupt newest checkpoint: every rank learns its path, resumes from the one before, and once
// it is set aside, pruning (keep 1) never deletes it.
TEST(CheckpointGrids, InvalidFilesAreReportedAndSetAsideNotDeleted) {
  testing::SharedTempDir dir;
  const CheckpointState s = replicatedState();
  const CheckpointPolicy policy{dir.file("run"), "checkpoint", 3};
  saveCheckpoint(s, 3, policy, MPI_COMM_WORLD);
  const std::string corrupt = saveCheckpoint(s, 4, policy, MPI_COMM_WORLD);
  if (worldRank() == 0) std::ofstream(corrupt, std::ios::trunc) << "not a checkpoint";
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<std::string> invalid;
  const auto loaded = loadLatest(policy.dir, MPI_COMM_WORLD, 0, "checkpoint", &invalid);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->step, 3);
  ASSERT_EQ(invalid, std::vector<std::string>{corrupt});
  std::string aside;
  if (worldRank() == 0) aside = setAsideCheckpoint(corrupt);
  MPI_Barrier(MPI_COMM_WORLD);
  const CheckpointPolicy keep_one{policy.dir, "checkpoint", 1};
  for (index_t step : {5, 6})
    saveCheckpoint(s, step, keep_one, MPI_COMM_WORLD);
  if (worldRank() == 0) {
    EXPECT_EQ(aside, corrupt + ".invalid");
    EXPECT_EQ(bytesOf(aside), "not a checkpoint");
    const auto files = listCheckpoints(policy.dir);
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(files[0].first, 6);
  }
  invalid.clear();
  EXPECT_EQ(loadLatest(policy.dir, MPI_COMM_WORLD, 0, "checkpoint", &invalid)->step, 6);
  EXPECT_TRUE(invalid.empty());
}

}  // namespace
}  // namespace halo3d
