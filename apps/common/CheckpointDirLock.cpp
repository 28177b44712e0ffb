#include "halo3d/apps/common/CheckpointDirLock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "halo3d/core/Error.hpp"
#include "halo3d/io/Collective.hpp"
#include "halo3d/io/IoError.hpp"

namespace halo3d::apps {

namespace {

std::string holderLine(const std::string& run_id) {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char time[32];
  std::strftime(time, sizeof time, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return concat("host ", host, ", pid ", long(::getpid()), ", started ", time, ", run ", run_id,
                "\n");
}

std::string contentOf(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  return s.empty() ? std::string("(holder not recorded yet)") : s;
}

}  // namespace

CheckpointDirLock::CheckpointDirLock(const std::string& dir, const std::string& run_id,
                                     MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  runCollectively(comm, [&] {
    if (rank != 0) return;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    require<IoError>(std::filesystem::is_directory(dir), "cannot create --checkpoint-dir '", dir,
                     "'", ec ? ": " + ec.message() : std::string());
    const std::string path = dir + "/.lock";
    _fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    require<IoError>(_fd >= 0, "cannot open the lock file '", path, "': ", std::strerror(errno));
    if (::flock(_fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err == EWOULDBLOCK) {
        ::close(_fd);
        _fd = -1;
        throw InputError(concat("--checkpoint-dir '", dir, "' is in use by another run (",
                                contentOf(path), "; lock file ", path,
                                "): wait for it to end, or use another directory"));
      }
      std::fprintf(stderr,
                   "halo3d: warning: cannot lock '%s' (%s): concurrent runs on this checkpoint "
                   "directory are not detected\n",
                   path.c_str(), std::strerror(err));
    }
    const std::string line = holderLine(run_id);
    const bool written = ::ftruncate(_fd, 0) == 0 &&
                         ::pwrite(_fd, line.data(), line.size(), 0) == ssize_t(line.size());
    if (!written) {
      const int err = errno;
      ::close(_fd);
      _fd = -1;
      throw IoError(concat("cannot write the lock file '", path, "': ", std::strerror(err)));
    }
  });
}

CheckpointDirLock::~CheckpointDirLock() {
  if (_fd >= 0) ::close(_fd);
}

}  // namespace halo3d::apps
