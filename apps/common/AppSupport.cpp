#include "halo3d/apps/common/AppSupport.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "halo3d/core/Activity.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/MemoryTracker.hpp"
#include "halo3d/io/Collective.hpp"

namespace halo3d::apps {

Session::Session(int& argc, char**& argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &_size);
  setenv("OMP_PROC_BIND", "false", 0);
  // Kokkos gets only its namespaced flags (--kokkos-*), and the application the others: Kokkos 3
  // also reads un-namespaced ones (--threads, --numa, --device), and halo3d-plan's --threads would
  // abort it ("--threads 2": it wants "=N") or set its thread count too ("--threads=2").
  std::vector<char*> kokkos{argv[0]};
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--kokkos-", 9) == 0)
      kokkos.push_back(argv[i]);
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  argv[argc] = nullptr;
  int kokkos_argc = int(kokkos.size());
  kokkos.push_back(nullptr);
  char** kokkos_argv = kokkos.data();
  Kokkos::initialize(kokkos_argc, kokkos_argv);
  // Every allocation from here on is counted (peak_bytes in the metrics, --memory-limit checks).
  MemoryTracker::install();
}

Session::~Session() {
  Kokkos::finalize();
  MPI_Finalize();
}

int parseAndRun(CLI::App& app, const Session& session, int argc, char** argv,
                const std::string& program, const std::function<int()>& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (session.rank() != 0) return e.get_exit_code();
    return app.exit(e);
  }
  return runGuarded(program, body);
}

int runGuarded(const std::string& program, const std::function<int()>& body) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string error;
  try {
    return body();
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Every rank that gets here failed. Wait (bounded) for the others to fail too, so that a
  // collective error is reported once and the job ends cleanly; abort if some rank is still inside
  // a collective.
  if (rank == 0) std::fprintf(stderr, "%s: error: %s\n", program.c_str(), error.c_str());
  MPI_Request barrier;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int done = 0;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!done) {
    std::fprintf(stderr, "%s: error on rank %d: %s (other ranks did not stop; aborting the job)\n",
                 program.c_str(), rank, error.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 1;
}

void runOnRootWhileOthersWait(MPI_Comm comm, const std::string& what,
                              const std::function<void()>& work) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::exception_ptr failure;
  if (rank == 0) {
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
  }
  MPI_Request barrier;
  MPI_Ibarrier(comm, &barrier);
  int done = 0;
  const std::string waiting = concat("waiting for rank 0: ", what);
  for (long polls = 0; !done; ++polls) {
    MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    if (done) break;
    if (rank != 0 && polls % 50 == 0) setActivity(waiting);  // about once a second
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  agreeOnError(failure, comm);
}

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--:--";
  const long s = long(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

Progress::Progress(bool enabled, long total_steps, long first_step)
    : _enabled(enabled),
      _total(total_steps),
      _first(first_step),
      _start(std::chrono::steady_clock::now()) {}

void Progress::update(long step, long epoch, long epochs, double loss, double samples_per_s) {
  if (!_enabled) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - _start).count();
  // At most one line every 2 s, plus the first and the last step.
  if (step + 1 != _total && step != _first && elapsed - _last_print < 2.0) return;
  _last_print = elapsed;
  const double per_step = elapsed / double(step + 1 - _first);
  std::printf("epoch %ld/%ld  step %ld/%ld  loss %.6g  %.2f samples/s  ETA %s\n", epoch + 1, epochs,
              step + 1, _total, loss, samples_per_s,
              formatDuration(per_step * double(_total - step - 1)).c_str());
  std::fflush(stdout);
}

void Progress::message(const std::string& text) {
  if (!_enabled) return;
  std::printf("%s\n", text.c_str());
  std::fflush(stdout);
}

void Progress::finish() {
  if (!_enabled) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - _start).count();
  std::printf("done in %s\n", formatDuration(elapsed).c_str());
  std::fflush(stdout);
}

MetricsWriter::MetricsWriter(const std::string& path, bool enabled, std::string run_id,
                             std::string grid, std::string precision,
                             std::string allreduce_precision)
    : _run_id(std::move(run_id)),
      _grid(std::move(grid)),
      _precision(std::move(precision)),
      _allreduce_precision(std::move(allreduce_precision)) {
  if (!enabled || path.empty()) return;
  _file = std::fopen(path.c_str(), "a");
  require<InputError>(_file != nullptr, "cannot open metrics file '", path, "' for writing");
}

MetricsWriter::~MetricsWriter() {
  if (_file) std::fclose(_file);
}

void MetricsWriter::write(nlohmann::json record) {
  if (!_file) return;
  record["run_id"] = _run_id;
  if (!_grid.empty()) record["grid"] = _grid;
  if (!_precision.empty()) record["precision"] = _precision;
  if (!_allreduce_precision.empty()) record["allreduce_precision"] = _allreduce_precision;
  const std::string line = record.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), _file);
  std::fflush(_file);
}

}  // namespace halo3d::apps
