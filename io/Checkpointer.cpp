#include "halo3d/io/Checkpointer.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "halo3d/io/CheckpointFile.hpp"
#include "halo3d/io/Collective.hpp"
#include "halo3d/io/Hdf5.hpp"

namespace halo3d {

namespace fs = std::filesystem;

namespace {

std::string finalName(const std::string& prefix, index_t step) {
  char digits[32];
  std::snprintf(digits, sizeof(digits), "%012lld", static_cast<long long>(step));
  return prefix + "-" + digits + ".h5";
}

// fsync of a file or directory; throws IoError naming it.
void syncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  require<IoError>(fd >= 0, "cannot open '", path, "' to flush it: ", std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  require<IoError>(rc == 0, "cannot flush '", path, "' to disk: ", std::strerror(err));
}

// Step of a final checkpoint name "<prefix>-<digits>.h5", or -1.
index_t stepOf(const std::string& file, const std::string& prefix) {
  const std::string head = prefix + "-", tail = ".h5";
  if (file.size() <= head.size() + tail.size() || file.compare(0, head.size(), head) != 0 ||
      file.compare(file.size() - tail.size(), tail.size(), tail) != 0)
    return -1;
  const std::string digits = file.substr(head.size(), file.size() - head.size() - tail.size());
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(digits);
}

// Temporaries of dead writers: ".<prefix>-*.h5.tmp-<pid>" whose pid is not a live process here.
void removeStaleTemporaries(const std::string& dir, const std::string& prefix) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const auto mark = name.rfind(".tmp-");
    if (name.rfind("." + prefix + "-", 0) != 0 || mark == std::string::npos) continue;
    const pid_t pid = pid_t(std::atoll(name.c_str() + mark + 5));
    const bool alive = pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
    if (!alive) fs::remove(entry.path(), ec);
  }
}

void prune(const std::string& dir, const std::string& prefix, int keep_last) {
  auto files = listCheckpoints(dir, prefix);
  std::error_code ec;
  for (std::size_t i = 0; i + std::size_t(keep_last) < files.size(); ++i)
    fs::remove(files[i].second, ec);
  removeStaleTemporaries(dir, prefix);
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  require<IoError>(bool(in), "cannot open '", path, "'");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

std::vector<std::pair<index_t, std::string>> listCheckpoints(const std::string& dir,
                                                             const std::string& prefix) {
  std::vector<std::pair<index_t, std::string>> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const index_t step = stepOf(entry.path().filename().string(), prefix);
    if (step >= 0 && entry.is_regular_file(ec)) out.emplace_back(step, entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string saveCheckpointLocal(const CheckpointState& state, index_t step,
                                const CheckpointPolicy& policy) {
  require<InputError>(policy.keep_last >= 1, "checkpoint keep_last ", policy.keep_last,
                      " must be >= 1");
  require<InputError>(step >= 0, "checkpoint step ", step, " must be >= 0");
  require<InputError>(!policy.dir.empty(), "checkpoint directory is empty");
  std::error_code ec;
  fs::create_directories(policy.dir, ec);
  require<IoError>(fs::is_directory(policy.dir), "cannot create checkpoint directory '", policy.dir,
                   "': ", ec.message());
  const std::string name = finalName(policy.prefix, step);
  const std::string path = (fs::path(policy.dir) / name).string();
  const std::string tmp =
      (fs::path(policy.dir) / ("." + name + ".tmp-" + std::to_string(::getpid()))).string();
  try {
    writeCheckpointFile(tmp, state);
    syncPath(tmp, false);
    fs::rename(tmp, path);
    syncPath(policy.dir, true);
  } catch (const fs::filesystem_error& e) {
    fs::remove(tmp, ec);
    throw IoError(
        concat("cannot rename checkpoint '", tmp, "' to '", path, "': ", e.code().message()));
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  prune(policy.dir, policy.prefix, policy.keep_last);
  return path;
}

std::string saveCheckpoint(const CheckpointState& state, index_t step,
                           const CheckpointPolicy& policy, MPI_Comm comm, int root) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string path;
  runCollectively(comm, [&] {
    if (rank == root) path = saveCheckpointLocal(state, step, policy);
  });
  broadcastBytes(path, root, comm);
  return path;
}

std::optional<LoadedCheckpoint> loadLatestLocal(const std::string& dir, const std::string& prefix) {
  auto files = listCheckpoints(dir, prefix);
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    try {
      return LoadedCheckpoint{it->second, it->first, readCheckpointFile(it->second)};
    } catch (const std::exception& e) {
      std::fprintf(stderr, "halo3d: warning: skipping invalid checkpoint: %s\n", e.what());
    }
  }
  return std::nullopt;
}

std::optional<LoadedCheckpoint> loadLatest(const std::string& dir, MPI_Comm comm, int root,
                                           const std::string& prefix,
                                           std::vector<std::string>* invalid) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // Root picks the newest file that validates and ships its bytes; every rank then parses the same
  // bytes.
  std::string bytes, path, skipped;  // skipped: the invalid files' paths, one per line
  index_t step = -1;
  if (rank == root) {
    auto files = listCheckpoints(dir, prefix);
    for (auto it = files.rbegin(); it != files.rend() && step < 0; ++it) {
      try {
        std::string candidate = readBytes(it->second);
        readCheckpointImage(candidate, it->second);
        bytes = std::move(candidate);
        path = it->second;
        step = it->first;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "halo3d: warning: skipping invalid checkpoint: %s\n", e.what());
        skipped += it->second + "\n";
      }
    }
  }
  if (invalid) {
    broadcastBytes(skipped, root, comm);
    std::istringstream lines(skipped);
    for (std::string line; std::getline(lines, line);)
      invalid->push_back(line);
  }
  broadcastBytes(path, root, comm);
  if (path.empty()) return std::nullopt;
  broadcastBytes(bytes, root, comm);
  MPI_Bcast(&step, 1, MPI_INT64_T, root, comm);
  LoadedCheckpoint out{path, step, CheckpointState()};
  runCollectively(comm, [&] { out.state = readCheckpointImage(bytes, path); });
  return out;
}

std::string setAsideCheckpoint(const std::string& path) {
  std::string target = path + ".invalid";
  for (int n = 1; fs::exists(target); ++n)
    target = path + ".invalid-" + std::to_string(n);
  std::error_code ec;
  fs::rename(path, target, ec);
  require<IoError>(!ec, "cannot set aside the invalid checkpoint '", path, "' as '", target,
                   "': ", ec.message());
  return target;
}

}  // namespace halo3d
