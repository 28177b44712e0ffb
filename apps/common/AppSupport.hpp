#pragma once
// What both application binaries need around their training loops: MPI + Kokkos start-up, error
// handling that never hangs a rank, a progress line and JSON-lines metrics on rank 0.

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace halo3d::apps {

// Initialises MPI (THREAD_MULTIPLE, for the prefetching data loader) and Kokkos, and finalises
// both. Kokkos is given the --kokkos-* arguments (e.g. --kokkos-threads=4), which are removed from
// argc/argv; the application parses the rest.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  int rank() const { return _rank; }
  int size() const { return _size; }

 private:
  int _rank = 0, _size = 1;
};

// Runs `body`; returns its exit code, or 1 after printing the error. Errors of halo3d are thrown on
// every rank together, so rank 0 prints the message once. If the ranks do not all fail within a few
// seconds (an error seen by some ranks only), the job is aborted rather than left hanging.
int runGuarded(const std::string& program, const std::function<int()>& body);

// The end of an application's main: parses the command line into `app` (every rank parses the
// same arguments; only rank 0 prints a parse error or the help, and every rank returns its exit
// code), then runs `body` under runGuarded(program, ...).
int parseAndRun(CLI::App& app, const Session& session, int argc, char** argv,
                const std::string& program, const std::function<int()>& body);

// Collective over `comm`: rank 0 runs `work` while the other ranks wait without spinning (an
// MPI_Ibarrier polled every few milliseconds, sleeping in between, and marking the activity so that
// a watchdog sees them alive); an error of `work` is then thrown on every rank (agreeOnError). For
// work only one rank should do, like timing kernels on a machine the others would disturb.
void runOnRootWhileOthersWait(MPI_Comm comm, const std::string& what,
                              const std::function<void()>& work);

// Rank-0 progress line: "epoch 1/3  step 12/40  loss 0.1234  18.2 samples/s  ETA 00:01:23".
class Progress {
 public:
  Progress(bool enabled, long total_steps, long first_step);
  void update(long step, long epoch, long epochs, double loss, double samples_per_s);
  void message(const std::string& text);
  void finish();

 private:
  bool _enabled;
  long _total, _first;
  std::chrono::steady_clock::time_point _start;
  double _last_print = -1;
};

// One JSON object per line, written by rank 0 (flushed per record, so a crash keeps what was
// written). Every record gets the run's id as "run_id" (RunId.hpp), so that the records of runs
// that share a file can be told apart, the process grid NxDxHxW as "grid" and the activations'
// precision as "precision" when they are given.
class MetricsWriter {
 public:
  // `precision`, `allreduce_precision`: recorded in every record when not empty.
  MetricsWriter(const std::string& path, bool enabled, std::string run_id, std::string grid = {},
                std::string precision = {}, std::string allreduce_precision = {});
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;
  void write(nlohmann::json record);

 private:
  std::FILE* _file = nullptr;
  std::string _run_id, _grid, _precision, _allreduce_precision;
};

// "hh:mm:ss".
std::string formatDuration(double seconds);

}  // namespace halo3d::apps
