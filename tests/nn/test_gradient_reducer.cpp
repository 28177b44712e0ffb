// The bucketed gradient allreduce, on the host code (MPI reads the gradients in place) and on the
// device code (KernelPath::Device: each bucket staged through a host copy and back, what a device
// build without GPU-aware MPI runs).
#include <gtest/gtest.h>
#include <mpi.h>

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/GradientReducer.hpp"

namespace halo3d::nn {
namespace {

TEST(GradientReducer, SumsEveryParameterInBucketsWhicheverOrderBackwardMarksThem) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (KernelPath path : {KernelPath::Fastest, KernelPath::Device})
    for (std::size_t bucket_bytes : {std::size_t(4), std::size_t(64), std::size_t(1) << 20}) {
      SCOPED_TRACE(kernelPathName(path));
      ParameterStore store;
      std::vector<Parameter*> ps;
      for (int k = 0; k < 6; ++k)
        store.add("p" + std::to_string(k), {index_t(3 + k)});
      store.add("buffer", {4}, false);
      store.finalize();
      GradientReducer reducer(MPI_COMM_WORLD, store, bucket_bytes, path);
      for (int step = 0; step < 2; ++step) {
        auto h = Kokkos::create_mirror_view(store.grads());
        for (std::size_t i = 0; i < h.size(); ++i)
          h(i) = float(rank + 1) * float(i + step);
        Kokkos::deep_copy(store.grads(), h);
        reducer.begin();
        auto params = store.trainable();
        for (std::size_t k = params.size(); k-- > 0;)
          reducer.markReady(*params[k]);  // backward order
        reducer.finish();
        Kokkos::deep_copy(h, store.grads());
        const float ranks_sum = float(size * (size + 1) / 2);
        for (std::size_t i = 0; i < h.size(); ++i)
          ASSERT_EQ(h(i), ranks_sum * float(i + step)) << i;
      }
      EXPECT_GE(reducer.buckets(), 1u);
      if (bucket_bytes == 4) {
        EXPECT_EQ(reducer.buckets(), 6u);
      }
      if (bucket_bytes == (std::size_t(1) << 20)) {
        EXPECT_EQ(reducer.buckets(), 1u);
      }
    }
}

TEST(GradientReducer, MisuseIsReported) {
  ParameterStore store;
  store.add("p", {2});
  store.finalize();
  GradientReducer reducer(MPI_COMM_WORLD, store);
  EXPECT_THROW(reducer.markReady(store.find("p")), Error);
  reducer.begin();
  reducer.markReady(store.find("p"));
  EXPECT_THROW(reducer.markReady(store.find("p")), Error);
  reducer.finish();
}

}  // namespace
}  // namespace halo3d::nn
