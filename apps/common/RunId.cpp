#include "halo3d/apps/common/RunId.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <random>

#include "halo3d/io/Collective.hpp"

namespace halo3d::apps {

std::string makeRunId() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char time[32];
  std::strftime(time, sizeof time, "%Y%m%dT%H%M%SZ", &utc);
  std::random_device random;
  char id[96];
  std::snprintf(id, sizeof id, "%s-%ld-%06x", time, long(::getpid()),
                unsigned(random() & 0xffffff));
  return id;
}

std::string makeRunId(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string id = rank == 0 ? makeRunId() : std::string();
  broadcastBytes(id, 0, comm);
  return id;
}

}  // namespace halo3d::apps
