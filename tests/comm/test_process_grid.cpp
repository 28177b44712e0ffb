#include <gtest/gtest.h>
#include <mpi.h>

#include "halo3d/comm/Allreduce.hpp"
#include "halo3d/comm/Distribute.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "support/Cells.hpp"
#include "support/GridFactorisations.hpp"
#include "support/MpiWorld.hpp"

namespace halo3d {
namespace {

using Memory = Kokkos::DefaultExecutionSpace::memory_space;

using testing::worldSize;

TEST(ProcessGrid, WrongProductIsAClearErrorOnEveryRank) {
  const int size = worldSize();
  try {
    ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, size + 1, 1, 1));
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("1x" + std::to_string(size + 1) + "x1x1"), std::string::npos) << m;
    EXPECT_NE(m.find("communicator has " + std::to_string(size)), std::string::npos) << m;
  }
}

TEST(ProcessGrid, SubCommunicatorsMatchTheTopology) {
  for (const GridShape& shape : testing::allGrids(worldSize())) {
    SCOPED_TRACE(shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    int spatial_size = 0, spatial_rank = 0, data_size = 0, data_rank = 0;
    MPI_Comm_size(grid.spatialComm(), &spatial_size);
    MPI_Comm_rank(grid.spatialComm(), &spatial_rank);
    MPI_Comm_size(grid.dataComm(), &data_size);
    MPI_Comm_rank(grid.dataComm(), &data_rank);
    EXPECT_EQ(spatial_size, shape.spatialSize());
    EXPECT_EQ(spatial_rank, grid.spatialRank());
    EXPECT_EQ(data_size, shape.n());
    EXPECT_EQ(data_rank, grid.coords().n);
    // The spatial group sums the spatial ranks of one sample group; the data group the sample
    // indices.
    const int spatial_sum = sumOver(grid.spatialRank(), grid.spatialComm());
    EXPECT_EQ(spatial_sum, shape.spatialSize() * (shape.spatialSize() - 1) / 2);
    EXPECT_EQ(sumOver(grid.coords().n, grid.dataComm()), shape.n() * (shape.n() - 1) / 2);
    EXPECT_EQ(sumOver(1, commOf(grid, ReduceGroup::World)), shape.size());
    // Neighbours are symmetric: my neighbour at o sees me at -o.
    for (int slot = 0; slot < kNeighbourSlots; ++slot) {
      if (slot == kSelfSlot) continue;
      const int nb = grid.neighbour(neighbourOffset(slot));
      if (nb == MPI_PROC_NULL) continue;
      const GridCoords c = shape.coordsOf(shape.rankOf({grid.coords().n, 0, 0, 0}) + nb);
      EXPECT_EQ(shape.neighbourSpatialRank(c.spatial(), neighbourOffset(oppositeSlot(slot))),
                grid.spatialRank());
    }
  }
}

// In place where MPI can access the memory, and staged through a host copy (KernelPath::Device:
// what a device build without GPU-aware MPI runs).
TEST(Allreduce, NonBlockingSumOverEachGroup) {
  for (KernelPath path : {KernelPath::Fastest, KernelPath::Device})
    for (const GridShape& shape : testing::allGrids(worldSize())) {
      SCOPED_TRACE(kernelPathName(path));
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      Kokkos::View<double*, Memory> v("v", 3);
      Kokkos::deep_copy(v, double(grid.rank() + 1));
      {
        PendingAllreduce pending = startAllreduceSum(v, grid, ReduceGroup::World, path);
        pending.wait();
      }
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
      EXPECT_EQ(h(2), double(shape.size() * (shape.size() + 1) / 2));
      Kokkos::deep_copy(v, 1.0);
      {
        PendingAllreduce pending = startAllreduceSum(v, grid, ReduceGroup::Spatial, path);
      }  // RAII completes it
      Kokkos::deep_copy(h, v);
      EXPECT_EQ(h(0), double(shape.spatialSize()));
      Kokkos::deep_copy(v, 1.0);
      allreduceSum(v, commOf(grid, ReduceGroup::Data), path);
      Kokkos::deep_copy(h, v);
      EXPECT_EQ(h(1), double(shape.n()));
    }
}

TEST(Distribute, ScatterGatherRoundTripOverEveryGrid) {
  for (const GridShape& shape : testing::allGrids(worldSize())) {
    SCOPED_TRACE(shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    const Shape5 s{index_t(shape.n()) + 1, 2, 2 * shape.d() + 1, 2 * shape.h() + 1, 3 * shape.w()};
    GlobalHostTensor<float> global;
    if (grid.isRoot()) {
      global = GlobalHostTensor<float>("global", s[0], s[1], s[2], s[3], s[4]);
      for (std::size_t i = 0; i < global.size(); ++i)
        global.data()[i] = float(i) * 0.5f + 1.0f;
    }
    HaloTensor<float, Memory> t("t", grid.blockOf(s, HaloWidths::uniform(1)));
    scatterGlobal(global, t, grid);
    // Owned cells hold the matching global values; ghosts are untouched (zero).
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.view());
    const TensorBlock& b = t.block();
    int wrong = 0;
    for (index_t n = 0; n < b.localSamples(); ++n)
      testing::forEachAllocationCell(b, [&](index_t c, index_t d, index_t hh, index_t w,
                                            const Extents3& g) {
        const index_t gn = n + b.sampleBegin();
        const float want =
            b.owned().contains(g)
                ? float((((gn * s[1] + c) * s[2] + g[0]) * s[3] + g[1]) * s[4] + g[2]) * 0.5f + 1.0f
                : 0.0f;
        wrong += h(n, c, d, hh, w) != want;
      });
    EXPECT_EQ(wrong, 0);
    const GlobalHostTensor<float> back = gatherGlobal(t, grid);
    if (grid.isRoot()) {
      ASSERT_EQ(back.size(), global.size());
      for (std::size_t i = 0; i < back.size(); ++i)
        ASSERT_EQ(back.data()[i], global.data()[i]) << "element " << i;
    } else {
      EXPECT_EQ(back.size(), 0u);
    }
  }
}

TEST(Distribute, WrongGlobalShapeIsRejectedOnEveryRank) {
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, worldSize(), 1, 1));
  HaloTensor<float, Memory> t("t", grid.blockOf({1, 1, 2 * index_t(worldSize()), 3, 3}));
  GlobalHostTensor<float> wrong;
  if (grid.isRoot()) wrong = GlobalHostTensor<float>("wrong", 1, 2, 2 * worldSize(), 3, 3);
  EXPECT_THROW(scatterGlobal(wrong, t, grid), ShapeError);
}

}  // namespace
}  // namespace halo3d
