// The bucketed gradient allreduce, on the host code (MPI reads the gradients in place) and on the
// device code (KernelPath::Device: each bucket staged through a host copy and back, what a device
// build without GPU-aware MPI runs).
#include <gtest/gtest.h>
#include <mpi.h>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/MemoryTracker.hpp"
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

// One rank with an fp32 wire: the gradients are their own sum, so the reducer allocates no receive
// buffers and leaves them as they are; with more ranks it allocates them (the memory model's
// "gradient allreduce buffers", counted from P = 2 on).
TEST(GradientReducer, AloneItAllocatesNoBuffers) {
  MemoryTracker::install();
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ParameterStore store;
  store.add("w", {index_t(1000)});
  store.finalize();
  const auto allocations = [] { return MemoryTracker::usage("Host").allocations; };
  {
    const std::size_t before = allocations();
    GradientReducer alone(MPI_COMM_SELF, store);
    EXPECT_EQ(allocations(), before);
    auto h = Kokkos::create_mirror_view(store.grads());
    for (std::size_t i = 0; i < h.size(); ++i)
      h(i) = 0.5f * float(i);
    Kokkos::deep_copy(store.grads(), h);
    alone.begin();
    alone.markReady(*store.trainable()[0]);
    alone.finish();
    Kokkos::deep_copy(h, store.grads());
    for (std::size_t i = 0; i < h.size(); ++i)
      ASSERT_EQ(h(i), 0.5f * float(i)) << i;
  }
  if (size > 1 && Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible) {
    const std::size_t before = allocations();
    GradientReducer together(MPI_COMM_WORLD, store);
    EXPECT_GT(allocations(), before);
  }
}

// A bf16 wire: sums whose every partial sum is a bf16 value come out exact, whatever MPI's
// reduction order (multiples of 1/4 below 2^7); one contributing rank gives each gradient rounded
// to bf16 exactly, which checks the in-place rounding and widening over buckets of every size.
TEST(GradientReducer, Bf16WireSumsInPlaceAndRoundsOnce) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (KernelPath path : {KernelPath::Fastest, KernelPath::Device})
    for (std::size_t bucket_bytes : {std::size_t(4), std::size_t(64), std::size_t(1) << 20}) {
      SCOPED_TRACE(::testing::Message() << kernelPathName(path) << ", buckets of " << bucket_bytes);
      ParameterStore store;
      for (int k = 0; k < 5; ++k)
        store.add("p" + std::to_string(k), {index_t(1 + 7 * k)});
      store.add("big", {1000});
      store.finalize();
      GradientReducer reducer(MPI_COMM_WORLD, store, bucket_bytes, path, Precision::bf16);
      EXPECT_EQ(reducer.wire(), Precision::bf16);
      auto h = Kokkos::create_mirror_view(store.grads());
      auto run = [&] {
        Kokkos::deep_copy(store.grads(), h);
        reducer.begin();
        auto params = store.trainable();
        for (std::size_t k = params.size(); k-- > 0;)
          reducer.markReady(*params[k]);
        reducer.finish();
        Kokkos::deep_copy(h, store.grads());
      };
      for (std::size_t i = 0; i < h.size(); ++i)
        h(i) = float(rank + 1) * float(int(i % 5) - 2) * 0.25f;
      run();
      const float ranks_sum = float(size * (size + 1) / 2);
      for (std::size_t i = 0; i < h.size(); ++i)
        ASSERT_EQ(h(i), ranks_sum * float(int(i % 5) - 2) * 0.25f) << i;

      for (std::size_t i = 0; i < h.size(); ++i)
        h(i) = rank == 0 ? 1.0f + float(i) / 3.0f : 0.0f;
      run();
      for (std::size_t i = 0; i < h.size(); ++i) {
        const float x = 1.0f + float(i) / 3.0f;
        ASSERT_EQ(h(i), roundToBf16(x)) << i;
        if (i % 3 != 0) {
          ASSERT_NE(h(i), x) << i;  // the wire did round
        }
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
