// Checkpoint files on one process: round trip, identical bytes for identical states, keep-last-K,
// names HDF5 cannot hold, torn and corrupt files detected and skipped, and a writer killed with
// SIGKILL in the middle of a save (fork) leaving the previous checkpoint loadable and nothing
// half-written taken for good.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "CheckpointTestState.hpp"
#include "halo3d/io/CheckpointFile.hpp"
#include "halo3d/io/Checkpointer.hpp"
#include "halo3d/io/Hdf5.hpp"

namespace halo3d {
namespace {

namespace fs = std::filesystem;

// A directory of its own under $TMPDIR, removed at the end.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/halo3d_ckpt_XXXXXX";
    if (::mkdtemp(templ.data()) != nullptr) _path = templ;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(_path, ec);
  }
  const std::string& path() const { return _path; }

 private:
  std::string _path;
};

// A state whose every value depends on `step`; `scale` multiplies the size of the conv weight.
CheckpointState stateFor(index_t step, index_t scale = 1) {
  const index_t o = 4 * scale;
  CheckpointState s = testing::stateWithConvWeight({o, 3, 3, 3, 3}, float(step), 0.001f);
  s.model["conv1.bias"] = HostArray({o}, std::vector<float>(std::size_t(o), 0.5f * float(step)));
  s.model["bn1.running_var"] = HostArray({2}, std::vector<double>{1.0 + double(step), 2.0});
  s.model["bn1.num_batches_tracked"] = HostArray({}, std::vector<std::int64_t>{step * 10});
  s.optimizer["exp_avg_sq.conv1.bias"] = HostArray({o}, std::vector<float>(std::size_t(o), 1e-3f));
  s.counters = {
      {"epoch", step / 3}, {"step", step}, {"optimizer.steps", step}, {"rng.dropout", 7 * step}};
  s.scalars = {{"lr", 1e-3 / double(step + 1)}, {"loss", 0.25}};
  s.config = R"({"model":"cosmoflow","batch":8,"note":"quotes \" and unicode \u00e9"})";
  return s;
}

std::string bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

TEST(Checkpoint, RoundTripKeepsEveryEntryAndType) {
  TempDir dir;
  const CheckpointState s = stateFor(5);
  const std::string path = dir.path() + "/c.h5";
  writeCheckpointFile(path, s);
  const CheckpointState back = readCheckpointFile(path);
  EXPECT_TRUE(back == s);
  EXPECT_EQ(back.model.at("bn1.num_batches_tracked").type(), ElementType::Int64);
  EXPECT_TRUE(back.model.at("bn1.num_batches_tracked").shape.empty());
  EXPECT_EQ(back.model.at("bn1.running_var").type(), ElementType::Float64);
  EXPECT_EQ(back.config, s.config);
  // Empty sections and config survive too.
  writeCheckpointFile(path, CheckpointState());
  EXPECT_TRUE(readCheckpointFile(path) == CheckpointState());
}

TEST(Checkpoint, SameStateGivesSameBytesAtAnotherTime) {
  TempDir dir;
  const CheckpointState s = stateFor(3);
  writeCheckpointFile(dir.path() + "/a.h5", s);
  // Object time stamps, if any were written, would differ after a second.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  writeCheckpointFile(dir.path() + "/b.h5", s);
  const std::string a = bytesOf(dir.path() + "/a.h5"), b = bytesOf(dir.path() + "/b.h5");
  EXPECT_FALSE(a.empty());
  EXPECT_TRUE(a == b) << "files differ";
}

TEST(Checkpoint, KeepsTheLastKAndLeavesNoTemporaries) {
  TempDir dir;
  const CheckpointPolicy policy{dir.path() + "/ckpt", "run", 3};
  for (index_t step : {10, 20, 30, 40, 50, 60}) {
    const std::string path = saveCheckpointLocal(stateFor(step), step, policy);
    EXPECT_EQ(fs::path(path).filename().string(), "run-0000000000" + std::to_string(step) + ".h5");
  }
  const auto files = listCheckpoints(policy.dir, policy.prefix);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].first, 40);
  EXPECT_EQ(files[2].first, 60);
  EXPECT_EQ(std::distance(fs::directory_iterator(policy.dir), fs::directory_iterator()), 3);
  const auto latest = loadLatestLocal(policy.dir, policy.prefix);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->step, 60);
  EXPECT_TRUE(latest->state == stateFor(60));
  EXPECT_FALSE(loadLatestLocal(dir.path() + "/empty").has_value());
}

TEST(Checkpoint, RejectsNamesHdf5CannotHold) {
  TempDir dir;
  for (const std::string bad : {"", "a/b", ".", ".."}) {
    CheckpointState s;
    s.model[bad] = HostArray({1}, std::vector<float>{1.0f});
    try {
      writeCheckpointFile(dir.path() + "/x.h5", s);
      ADD_FAILURE() << "no error for name '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(HostArray({2, 3}, std::vector<float>(5)), ShapeError);
}

TEST(Checkpoint, TornAndCorruptFilesAreNeverTakenForGood) {
  TempDir dir;
  const CheckpointPolicy policy{dir.path(), "checkpoint", 5};
  saveCheckpointLocal(stateFor(1), 1, policy);
  const std::string good = saveCheckpointLocal(stateFor(2), 2, policy);
  const std::string bytes = bytesOf(good);

  struct Bad {
    const char* name;
    std::string bytes;
    const char* reason;  // expected in the message
  };
  // Corrupt one value of the conv weight: find its float pattern in the file.
  const CheckpointState s2 = stateFor(2);
  const float probe = std::get<std::vector<float>>(s2.model.at("conv1.weight").values)[17];
  std::string corrupt = bytes;
  const auto at = corrupt.find(std::string(reinterpret_cast<const char*>(&probe), sizeof(float)));
  ASSERT_NE(at, std::string::npos);
  corrupt[at + 3] = char(corrupt[at + 3] ^ 0x40);
  // Remove the marker: a file whose writer stopped before the end.
  const std::string unmarked_path = dir.path() + "/unmarked.h5";
  writeBytes(unmarked_path, bytes);
  {
    hid_t f = H5Fopen(unmarked_path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    ASSERT_GE(H5Adelete(f, "halo3d_crc32"), 0);
    H5Fclose(f);
  }
  const Bad cases[] = {
      {"truncated", bytes.substr(0, bytes.size() / 2), "cannot open"},
      {"corrupt", corrupt, "corrupt"},
      {"unmarked", bytesOf(unmarked_path), "completion marker"},
      {"garbage", std::string(4096, 'x'), "cannot open"},
  };
  index_t step = 3;
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.name);
    const std::string path =
        dir.path() + "/checkpoint-" + std::string(11, '0') + std::to_string(step++) + ".h5";
    writeBytes(path, b.bytes);
    try {
      readCheckpointFile(path);
      ADD_FAILURE() << "accepted";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(b.reason), std::string::npos) << e.what();
    }
    // Newer than the good one, yet skipped.
    const auto latest = loadLatestLocal(dir.path());
    ASSERT_TRUE(latest.has_value());
    EXPECT_EQ(latest->step, 2);
    EXPECT_TRUE(latest->state == s2);
  }
}

// The child writes checkpoints 1, 2, 3, ... as fast as it can; the parent kills it with SIGKILL as
// soon as a save is under way after at least two completed ones.
TEST(Checkpoint, WriterKilledMidSaveLeavesThePreviousCheckpoint) {
  TempDir dir;
  const CheckpointPolicy policy{dir.path(), "checkpoint", 2};
  const index_t scale = 256;  // about 4 MB per tensor, so that a save takes a while
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (index_t step = 1;; ++step)
      saveCheckpointLocal(stateFor(step, scale), step, policy);
  }
  auto temporaries = [&] {
    int n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir.path(), ec))
      n += e.path().filename().string().find(".tmp-") != std::string::npos;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool killed = false;
  while (std::chrono::steady_clock::now() < deadline) {
    if (listCheckpoints(dir.path()).size() >= 2 && temporaries() > 0) {
      ::kill(child, SIGKILL);
      killed = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (!killed) ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(killed) << "the writer never started a third save";
  ASSERT_TRUE(WIFSIGNALED(status));

  // What the kill left: complete checkpoints under final names, and at most one temporary.
  const auto files = listCheckpoints(dir.path());
  ASSERT_FALSE(files.empty());
  const auto latest = loadLatestLocal(dir.path());
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->step, files.back().first);
  EXPECT_TRUE(latest->state == stateFor(latest->step, scale));
  EXPECT_LE(temporaries(), 1);
  // A temporary renamed by hand into the newest final name is still refused unless it is complete.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir.path(), ec)) {
    if (e.path().filename().string().find(".tmp-") == std::string::npos) continue;
    const index_t next = latest->step + 1;
    const std::string renamed =
        dir.path() + "/checkpoint-" + std::string(11, '0') + std::to_string(next) + ".h5";
    fs::copy_file(e.path(), renamed);
    const auto after = loadLatestLocal(dir.path());
    ASSERT_TRUE(after.has_value());
    EXPECT_TRUE(after->step == latest->step || after->state == stateFor(next, scale));
    fs::remove(renamed);
  }
  // The next save removes the dead writer's temporary.
  saveCheckpointLocal(stateFor(100), 100, policy);
  EXPECT_EQ(temporaries(), 0);
}

}  // namespace
}  // namespace halo3d
