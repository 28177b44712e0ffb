// GoogleTest main for MPI tests.
//  - Only rank 0 prints GoogleTest's output.
//  - After each test, every rank's failures are gathered to rank 0 and printed with the rank
//    that saw them (a collective in OnTestEnd, which every rank reaches in the same order;
//    never inside an assertion).
//  - The exit code is non-zero on every rank if any rank failed.
//  - An uncaught exception on one rank aborts the whole job instead of leaving the others in
//    a collective.
#include <gtest/gtest.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "support/TestMain.hpp"

namespace {

class RankFailureGatherer : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailureGatherer(int rank) : _rank(rank) {}

  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    _messages += std::string(r.file_name() ? r.file_name() : "?") + ":" +
                 std::to_string(r.line_number()) + ": " + r.message() + "\n";
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int len = int(_messages.size());
    std::vector<int> lens(size), displs(size);
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (_rank == 0) {
      int total = 0;
      for (int r = 0; r < size; ++r) {
        displs[r] = total;
        total += lens[r];
      }
      all.resize(total);
    }
    MPI_Gatherv(_messages.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                0, MPI_COMM_WORLD);
    if (_rank == 0) {
      for (int r = 1; r < size; ++r) {
        if (lens[r] == 0) continue;
        std::fprintf(stdout, "[  RANK %d  ] %s.%s failed on rank %d:\n%s", r,
                     info.test_suite_name(), info.name(), r,
                     all.substr(displs[r], lens[r]).c_str());
        _remote_failures.push_back(std::string(info.test_suite_name()) + "." + info.name() +
                                   " (rank " + std::to_string(r) + ")");
      }
      std::fflush(stdout);
    }
    _any_local_failure |= !_messages.empty();
    _messages.clear();
  }

  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    if (_rank == 0 && !_remote_failures.empty()) {
      std::fprintf(stdout, "[  FAILED  ] %zu test(s) failed on other ranks:\n",
                   _remote_failures.size());
      for (const auto& f : _remote_failures)
        std::fprintf(stdout, "[  FAILED  ] %s\n", f.c_str());
    }
  }

  bool anyLocalFailure() const { return _any_local_failure; }

 private:
  int _rank;
  std::string _messages;
  std::vector<std::string> _remote_failures;
  bool _any_local_failure = false;
};

}  // namespace

int main(int argc, char** argv) {
  // THREAD_MULTIPLE: the data pipeline reads on a background thread while the main thread
  // communicates.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::set_terminate([] {
    std::fprintf(stderr, "halo3d test: uncaught exception on a rank; aborting the MPI job\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
    std::abort();
  });
  const int status = halo3d::testing::runWithKokkos(argc, argv, [rank] {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    if (rank != 0) delete listeners.Release(listeners.default_result_printer());
    auto* gatherer = new RankFailureGatherer(rank);
    listeners.Append(gatherer);
    const int local = RUN_ALL_TESTS();
    const int mine = (local != 0 || gatherer->anyLocalFailure()) ? 1 : 0;
    int any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
  });
  MPI_Finalize();
  return status;
}
