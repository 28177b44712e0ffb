// The data store plan: first come, first kept, the same decisions on every rank; the tile copies
// the store uses (plain host loops, the same code in every build); and the loader's copy of a batch
// into the tensors' memory space, whose device code (a new allocation and a deep_copy) runs here on
// the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "halo3d/io/StorePlan.hpp"
#include "halo3d/io/impl/HostToMemorySpace.hpp"
#include "halo3d/io/impl/TileCopy.hpp"

namespace halo3d {
namespace {

TEST(StorePlan, FirstComeFirstKeptPerGroup) {
  StorePlan plan(10, 2, 2);
  // Step 1: group 0 reads 3, 5, 7; group 1 reads 1, 2.
  auto s = plan.plan({3, 5, 7, 1, 2}, {0, 0, 0, 1, 1});
  EXPECT_TRUE(s[0].insert && s[1].insert && !s[2].insert && s[3].insert && s[4].insert);
  for (const auto& x : s)
    EXPECT_EQ(x.holder, -1);
  EXPECT_EQ(plan.kept(0), 2);
  EXPECT_EQ(plan.kept(1), 2);
  // Step 2: 3 and 1 now come from the store of their holders (group 0 serving group 1 and back); 7
  // was not kept and comes from file again; the groups are full.
  s = plan.plan({1, 7, 3, 9}, {0, 0, 1, 1});
  EXPECT_EQ(s[0].holder, 1);
  EXPECT_EQ(s[1].holder, -1);
  EXPECT_FALSE(s[1].insert);
  EXPECT_EQ(s[2].holder, 0);
  EXPECT_EQ(s[3].holder, -1);
  EXPECT_FALSE(s[3].insert);
  EXPECT_EQ(plan.holder(5), 0);
  EXPECT_EQ(plan.holder(7), -1);
}

TEST(StorePlan, ZeroCapacityKeepsNothing) {
  StorePlan plan(4, 1, 0);
  for (int epoch = 0; epoch < 2; ++epoch)
    for (const auto& x : plan.plan({0, 1, 2, 3}, {0, 0, 0, 0})) {
      EXPECT_EQ(x.holder, -1);
      EXPECT_FALSE(x.insert);
    }
  EXPECT_EQ(StorePlan::capacityFor(1000, 300), 3);
  EXPECT_EQ(StorePlan::capacityFor(1000, 0), 0);
  EXPECT_THROW(StorePlan(4, 1, -1), InputError);
}

TEST(TileCopy, OwnedCellsRoundTripThroughAContiguousTile) {
  // Allocation (2 samples, 2 channels, 5 x 4 x 6) with owned cells [1,4) x [1,3) x [2,5) of slot 1.
  const Shape5 a{2, 2, 5, 4, 6};
  std::vector<float> alloc(std::size_t(2 * 2 * 5 * 4 * 6), -1.0f);
  const HostTile<float> tile{alloc.data(), a, 1, Box({1, 1, 2}, {4, 3, 5})};
  ASSERT_EQ(impl::ownedElements(tile), 2u * 3 * 2 * 3);
  std::vector<float> in(impl::ownedElements(tile));
  std::iota(in.begin(), in.end(), 100.0f);
  impl::copyOwnedIn(in.data(), tile);
  std::vector<float> out(in.size());
  impl::copyOwnedOut(tile, out.data());
  EXPECT_EQ(in, out);
  // First owned cell of channel 1, and untouched cells outside the owned box.
  EXPECT_EQ(alloc[std::size_t((((1 * 2 + 1) * 5 + 1) * 4 + 1) * 6 + 2)], 100.0f + 18);
  EXPECT_EQ(alloc[std::size_t((((1 * 2 + 1) * 5 + 0) * 4 + 1) * 6 + 2)], -1.0f);
  EXPECT_EQ(alloc[0], -1.0f);
}

TEST(TileCopy, ZeroGhostsKeepsOwnedCells) {
  // (1, 2, 4, 3, 5) with owned [1,3) x [1,2) x [1,4): 2 x 1 x 3 owned cells per channel.
  const Shape5 a{1, 2, 4, 3, 5};
  const Box owned({1, 1, 1}, {3, 2, 4});
  std::vector<int> v(std::size_t(2 * 4 * 3 * 5), 7);
  impl::zeroGhosts(v.data(), a, owned);
  int sevens = 0;
  for (index_t c = 0; c < 2; ++c)
    for (index_t d = 0; d < 4; ++d)
      for (index_t h = 0; h < 3; ++h)
        for (index_t w = 0; w < 5; ++w) {
          const int x = v[std::size_t(((c * 4 + d) * 3 + h) * 5 + w)];
          EXPECT_EQ(x, owned.contains({d, h, w}) ? 7 : 0);
          sevens += x == 7;
        }
  EXPECT_EQ(sevens, 2 * 6);
}

// Host memory: Fastest hands the tensor over (no copy); Device is what a device build runs, a new
// allocation in the target space filled by deep_copy, ghosts included.
TEST(HostToMemorySpace, FastestMovesAndDeviceCopies) {
  const TensorBlock block({2, 3, 4, 5, 6}, 0, 2, Box({1, 0, 2}, {4, 5, 5}), HaloWidths::uniform(1));
  auto make = [&] {
    HaloTensor<float, Kokkos::HostSpace> t("halo3d::batch_input", block);
    std::iota(t.view().data(), t.view().data() + t.view().span(), 1.0f);
    return t;
  };
  HaloTensor<float, Kokkos::HostSpace> moved_from = make();
  const float* data = moved_from.view().data();
  const auto moved = impl::toMemorySpace<Kokkos::HostSpace>(std::move(moved_from));
  EXPECT_EQ(moved.view().data(), data);

  HaloTensor<float, Kokkos::HostSpace> source = make();
  const HaloTensor<float, Kokkos::HostSpace> expected = make();
  const float* source_data = source.view().data();
  const auto copied = impl::toMemorySpace<Kokkos::HostSpace>(std::move(source), KernelPath::Device);
  EXPECT_NE(copied.view().data(), source_data);
  EXPECT_EQ(copied.label(), "halo3d::batch_input");
  EXPECT_TRUE(copied.block() == block);
  ASSERT_EQ(copied.view().span(), expected.view().span());
  EXPECT_TRUE(std::equal(expected.view().data(), expected.view().data() + expected.view().span(),
                         copied.view().data()));
  // An empty tensor stays empty on either path.
  EXPECT_FALSE(impl::toMemorySpace<Kokkos::HostSpace>(HaloTensor<float, Kokkos::HostSpace>(),
                                                      KernelPath::Device)
                   .isAllocated());
}

}  // namespace
}  // namespace halo3d
