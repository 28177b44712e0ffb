// With MPI initialised below MPI_THREAD_MULTIPLE, the loader reads synchronously (no I/O thread, no
// prefetch), warns once, and delivers the same batches. This executable has its own main, which
// asks for MPI_THREAD_SERIALIZED only.
#include <gtest/gtest.h>
#include <mpi.h>

#include "IoTestSupport.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/io/DataLoader.hpp"
#include "halo3d/io/impl/IoExecutor.hpp"

namespace halo3d {
namespace {

using Memory = Kokkos::DefaultExecutionSpace::memory_space;

TEST(WithoutThreadMultiple, LoaderReadsSynchronously) {
  int provided = 0;
  MPI_Query_thread(&provided);
  ASSERT_LT(provided, MPI_THREAD_MULTIPLE);
  EXPECT_FALSE(impl::IoExecutor::instance().threaded());
  testing::SharedTempDir dir;
  const Extents3 e{5, 4, 3};
  const auto files = testing::writeStandardFiles(dir, SampleKind::CosmoFlow, 1, e);
  ProcessGrid grid(MPI_COMM_WORLD,
                   GridShape(1, testing::worldSize() > 1 ? 2 : 1, 1,
                             testing::worldSize() > 1 ? testing::worldSize() / 2 : 1));
  DataLoaderOptions opt;
  opt.batch_size = 2;
  opt.prefetch = true;
  DataLoader<Memory> loader(grid, files, opt);
  EXPECT_FALSE(loader.prefetching());
  for (int s = 0; s < 5; ++s) {
    const Batch<Memory> b = loader.next();
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.input.view());
    const Box& o = b.input.block().owned();
    int wrong = 0;
    for (std::size_t n = 0; n < b.sample_ids.size(); ++n)
      for (index_t d = o.min(0); d < o.max(0); ++d)
        for (index_t hh = o.min(1); hh < o.max(1); ++hh)
          for (index_t w = o.min(2); w < o.max(2); ++w)
            wrong += h(index_t(n), 0, d - o.min(0), hh - o.min(1), w - o.min(2)) !=
                     testing::encode(b.sample_ids[n], 0, d, hh, w,
                                     testing::isInt16Sample(b.sample_ids[n]));
    EXPECT_EQ(wrong, 0) << "step " << s;
  }
}

}  // namespace
}  // namespace halo3d

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, status = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  {
    ::testing::InitGoogleTest(&argc, argv);
    setenv("OMP_PROC_BIND", "false", 0);
    Kokkos::ScopeGuard kokkos(argc, argv);
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    if (rank != 0) delete listeners.Release(listeners.default_result_printer());
    const int mine = RUN_ALL_TESTS() != 0 ? 1 : 0;
    MPI_Allreduce(&mine, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return status;
}
