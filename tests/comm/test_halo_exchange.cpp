// Halo exchange against values encoded from global coordinates, for every grid of the
// communicator's size: packed, direct, and the device code (KernelPath::Device: element-wise pack
// kernels, buffers staged through host copies, what a CUDA build without GPU-aware MPI runs). The
// packed and device routes run through the node's shared-memory window (the default) and as MPI
// messages.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <type_traits>

#include "halo3d/comm/HaloExchange.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "support/Cells.hpp"
#include "support/GridFactorisations.hpp"
#include "support/MpiWorld.hpp"

namespace halo3d {
namespace {

using Memory = Kokkos::DefaultExecutionSpace::memory_space;
using Tensor = HaloTensor<double, Memory>;
template <class T>
using TensorOf = HaloTensor<T, Memory>;

using testing::worldSize;

// A distinct non-zero value for every global cell.
double encode(const Shape5& s, index_t n, index_t c, index_t d, index_t h, index_t w) {
  return double((((n * s[1] + c) * s[2] + d) * s[3] + h) * s[4] + w + 1);
}

struct Case {
  const char* name;
  HaloWidths halo;
};

// Volumes that split unevenly over the grid while every block stays at least as thick as the widest
// ghost.
Shape5 shapeFor(const GridShape& g, const HaloWidths& h) {
  auto ext = [&](int parts, int dim) {
    const index_t thick = std::max<index_t>(2, std::max(h.lo[dim], h.hi[dim]));
    return index_t(parts) * thick + (parts > 1 ? 1 : 3);  // + 1: the first block is one larger
  };
  return {index_t(g.n()) + 1, 2, ext(g.d(), 0), ext(g.h(), 1), ext(g.w(), 2)};
}

const Case kCases[] = {
    {"width1", HaloWidths::uniform(1)},
    {"width2", HaloWidths::uniform(2)},
    {"asymmetric", HaloWidths{{1, 2, 0}, {2, 0, 1}}},
    {"stride2_like", HaloWidths{{1, 1, 1}, {0, 0, 0}}},
};

// A cell's code as T: bf16 holds integers exactly only up to 256, so its codes wrap (1..251).
template <class T>
T codeAs(double code) {
  if constexpr (std::is_same<T, bf16>::value)
    return bf16(std::fmod(code, 251.0) + 1.0);
  else
    return T(code);
}

// Host copy of the whole allocation (ghosts included).
template <class T>
Kokkos::View<T*****, Kokkos::LayoutRight, Kokkos::HostSpace> hostCopy(const TensorOf<T>& t) {
  auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), t.view());
  Kokkos::deep_copy(h, t.view());
  return h;
}

// Fills owned cells with their code; ghosts inside the volume with `interior_ghost`, ghosts past
// the boundary with `boundary_ghost`.
template <class T>
void fill(const TensorOf<T>& t, double interior_ghost, double boundary_ghost) {
  const TensorBlock& b = t.block();
  const Shape5 s = b.globalShape();
  auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), t.view());
  const Box volume = Box::fromExtents(b.globalExtents());
  for (index_t n = 0; n < b.localSamples(); ++n)
    testing::forEachAllocationCell(
        b, [&](index_t c, index_t d, index_t hh, index_t w, const Extents3& g) {
          double v;
          if (b.owned().contains(g))
            v = encode(s, n + b.sampleBegin(), c, g[0], g[1], g[2]);
          else
            v = volume.contains(g) ? interior_ghost : boundary_ghost;
          h(n, c, d, hh, w) = b.owned().contains(g) ? codeAs<T>(v) : T(v);
        });
  Kokkos::deep_copy(t.view(), h);
}

// Checks every cell after a gather; returns the number of wrong cells (and reports the first few).
template <class T>
int checkGathered(const TensorOf<T>& t) {
  const TensorBlock& b = t.block();
  const Shape5 s = b.globalShape();
  const auto h = hostCopy(t);
  const Box volume = Box::fromExtents(b.globalExtents());
  int wrong = 0;
  for (index_t n = 0; n < b.localSamples(); ++n)
    testing::forEachAllocationCell(
        b, [&](index_t c, index_t d, index_t hh, index_t w, const Extents3& g) {
          const T want = volume.contains(g)
                             ? codeAs<T>(encode(s, n + b.sampleBegin(), c, g[0], g[1], g[2]))
                             : T(0.0);
          if (h(n, c, d, hh, w) != want && ++wrong <= 3)
            ADD_FAILURE() << "cell local (" << n << ',' << c << ',' << d << ',' << hh << ',' << w
                          << ") global (" << g[0] << ',' << g[1] << ',' << g[2] << ") holds "
                          << double(h(n, c, d, hh, w)) << ", want " << double(want) << " in " << b;
        });
  return wrong;
}

// How the messages travel: packed by the host code, direct where the geometry allows (one message
// per neighbour, or one per contiguous run), or as a device build without GPU-aware MPI sends them;
// packed messages through the node's shared memory, or (*Messages) as MPI messages.
enum class Transport { Packed, Direct, DirectRuns, Device, PackedMessages, DeviceMessages };

HaloExchangeOptions optionsFor(Transport route) {
  HaloExchangeOptions opts;
  opts.direct_runs = route == Transport::Direct || route == Transport::DirectRuns;
  opts.derived_datatypes = route != Transport::DirectRuns;
  opts.direct_min_run_bytes = 0;  // with direct runs on, take them wherever the geometry allows
  opts.path = route == Transport::Device || route == Transport::DeviceMessages
                  ? KernelPath::Device
                  : KernelPath::Fastest;
  opts.shared_memory = route != Transport::PackedMessages && route != Transport::DeviceMessages;
  return opts;
}

class HaloExchangeAllGrids : public ::testing::TestWithParam<Transport> {};

// The sum of t's owned cells, computed on t's execution space. A free function: CUDA's extended
// lambdas may not be defined in a test body (a private member function).
double ownedSum(const Tensor& t) {
  double sum = 0;
  const auto owned = t.owned();
  Kokkos::parallel_reduce(
      "owned_sum",
      Kokkos::MDRangePolicy<Kokkos::Rank<5>>(
          {0, 0, 0, 0, 0},
          {owned.extent(0), owned.extent(1), owned.extent(2), owned.extent(3), owned.extent(4)}),
      KOKKOS_LAMBDA(int n, int c, int d, int h, int w, double& acc) {
        acc += owned(n, c, d, h, w);
      },
      sum);
  return sum;
}

// f(grid, case, global shape) on every grid of the world size, for every case.
template <class F>
void forEachGridAndCase(const F& f) {
  for (const GridShape& shape : testing::allGrids(worldSize())) {
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    for (const Case& cs : kCases) {
      SCOPED_TRACE(shape.str() + " " + cs.name);
      f(grid, cs, shapeFor(shape, cs.halo));
    }
  }
}

TEST_P(HaloExchangeAllGrids, GatherFillsFacesEdgesCornersAndKeepsBoundaryZero) {
  const HaloExchangeOptions opts = optionsFor(GetParam());
  forEachGridAndCase([&](const ProcessGrid& grid, const Case& cs, const Shape5& s) {
    const TensorBlock block = grid.blockOf(s, cs.halo);
    Tensor t("t", block);
    fill(t, /*interior ghost*/ -7.0, /*boundary ghost*/ 0.0);
    HaloExchange<double, Memory> exchange(grid, block, opts);
    exchange.gather(t);
    EXPECT_EQ(checkGathered(t), 0);
    // Exchanging again is idempotent.
    exchange.gather(t);
    EXPECT_EQ(checkGathered(t), 0);
  });
}

TEST_P(HaloExchangeAllGrids, StartFinishOverlapsWithOwnedReads) {
  const HaloExchangeOptions opts = optionsFor(GetParam());
  for (const GridShape& shape : testing::allGrids(worldSize())) {
    SCOPED_TRACE(shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    const HaloWidths halo = HaloWidths::uniform(1);
    const TensorBlock block = grid.blockOf(shapeFor(shape, halo), halo);
    Tensor t("t", block);
    fill(t, -1.0, 0.0);
    HaloExchange<double, Memory> exchange(grid, block, opts);
    exchange.start(t, HaloDirection::Gather);
    EXPECT_TRUE(exchange.inFlight());
    // Work on owned cells while messages fly: a sum over the owned region.
    EXPECT_GT(ownedSum(t), 0.0);
    EXPECT_THROW(exchange.start(t, HaloDirection::Gather), Error);
    // Progress until every message has moved: finish() must still unpack what progress()
    // completed.
    for (int i = 0; i < 200; ++i) {
      exchange.progress();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    exchange.finish();
    EXPECT_FALSE(exchange.inFlight());
    EXPECT_EQ(checkGathered(t), 0);
  }
}

// Scatter-sum: every owned cell gains the copies its neighbours hold as ghosts; the sent ghosts end
// zero; whatever sits in ghosts past the boundary is dropped, never added.
TEST_P(HaloExchangeAllGrids, ScatterSumAddsEveryGhostCopyOnceAndZeroesSentGhosts) {
  const HaloExchangeOptions opts = optionsFor(GetParam());
  forEachGridAndCase([&](const ProcessGrid& grid, const Case& cs, const Shape5& s) {
    const TensorBlock block = grid.blockOf(s, cs.halo);
    Tensor t("t", block);
    // Every in-volume cell of the allocation (owned or ghost) holds its code; boundary ghosts
    // hold junk that must be dropped.
    fill(t, 0.0, 12345.0);
    HaloExchange<double, Memory> exchange(grid, block, opts);
    exchange.gather(t);  // ghosts now hold their owners' codes; boundary junk untouched
    exchange.scatter(t);
    // Expected multiplicity of a global cell: how many blocks of the sample group hold it
    // (owned+ghost).
    const GridShape& shape = grid.shape();
    std::vector<TensorBlock> blocks;
    for (int r = 0; r < shape.spatialSize(); ++r)
      blocks.push_back(TensorBlock::forGrid(s, shape, shape.coordsOf(r), cs.halo));
    const auto h = hostCopy(t);
    int wrong = 0;
    for (index_t n = 0; n < block.localSamples(); ++n)
      testing::forEachAllocationCell(block, [&](index_t c, index_t d, index_t hh, index_t w,
                                                const Extents3& g) {
        double want = Box::fromExtents(block.globalExtents()).contains(g) ? 0.0 : 12345.0;
        if (block.owned().contains(g)) {
          int copies = 0;
          for (const TensorBlock& other : blocks)
            copies +=
                other.owned().grown(other.halo().loExtents(), other.halo().hiExtents()).contains(g);
          want = copies * encode(s, n + block.sampleBegin(), c, g[0], g[1], g[2]);
        }
        if (h(n, c, d, hh, w) != want && ++wrong <= 3)
          ADD_FAILURE() << "global (" << g[0] << ',' << g[1] << ',' << g[2] << ") holds "
                        << h(n, c, d, hh, w) << ", want " << want;
      });
    EXPECT_EQ(wrong, 0);
  });
}

// bf16 tensors travel as their 16 bits: the gather fills every ghost with its owner's value, on
// every grid, packed, direct and by the device code; and each round moves exactly half the bytes of
// the float exchange of the same layout, in the same number of messages.
TEST_P(HaloExchangeAllGrids, Bf16GatherMovesHalfTheBytesOfFloat) {
  const HaloExchangeOptions opts = optionsFor(GetParam());
  forEachGridAndCase([&](const ProcessGrid& grid, const Case& cs, const Shape5& s) {
    const TensorBlock block = grid.blockOf(s, cs.halo);
    TensorOf<bf16> t("t", block);
    fill(t, /*interior ghost*/ -7.0, /*boundary ghost*/ 0.0);
    HaloExchange<bf16, Memory> exchange(grid, block, opts);
    exchange.gather(t);
    EXPECT_EQ(checkGathered(t), 0);
    HaloExchange<float, Memory> as_float(grid, block, opts);
    for (const HaloDirection dir : {HaloDirection::Gather, HaloDirection::ScatterSum}) {
      EXPECT_EQ(2 * exchange.sentBytes(dir), as_float.sentBytes(dir));
      EXPECT_EQ(2 * exchange.receivedBytes(dir), as_float.receivedBytes(dir));
      EXPECT_EQ(exchange.sentMessages(dir), as_float.sentMessages(dir));
    }
  });
}

// Multiplies every cell of t by f.
void scale(const Tensor& t, double f) {
  const auto v = t.view();
  Kokkos::parallel_for(
      "scale", Kokkos::RangePolicy<>(0, v.span()),
      KOKKOS_LAMBDA(std::size_t i) { v.data()[i] *= f; });
  Kokkos::fence();
}

// Round after round, each gather delivers that round's values: a receiver that read a neighbour's
// shared segment before the neighbour had packed into it (or a sender that packed over a segment
// still being read) would leave ghosts of another round, off by a power of two. A scatter between
// rounds sends from the other direction's buffers. Two of the cases: every exchange built costs
// collectives (the shared window's among them), which oversubscribed runs pay dearly.
TEST_P(HaloExchangeAllGrids, EveryRoundDeliversItsOwnValues) {
  const HaloExchangeOptions opts = optionsFor(GetParam());
  forEachGridAndCase([&](const ProcessGrid& grid, const Case& cs, const Shape5& s) {
    if (std::string(cs.name) != "width1" && std::string(cs.name) != "asymmetric") return;
    const TensorBlock block = grid.blockOf(s, cs.halo);
    Tensor t("t", block);
    HaloExchange<double, Memory> exchange(grid, block, opts);
    for (int round = 0; round < 3; ++round) {
      SCOPED_TRACE(round);
      const double f = double(1 << round);
      fill(t, -7.0, 0.0);
      scale(t, f);
      exchange.start(t, HaloDirection::Gather);
      exchange.finish();
      scale(t, 1.0 / f);
      EXPECT_EQ(checkGathered(t), 0);
      exchange.scatter(t);
    }
  });
}

// Two exchanges of one grid with rounds in flight together, finished in the reverse order of their
// starts, round after round: each keeps its own messages (a shared-memory sender's "consumed" is
// still due when the other exchange runs). On the transports whose gathers send every message
// through shared memory (between ranks of one node), not on the direct and MPI-message ones.
TEST_P(HaloExchangeAllGrids, InterleavedExchangesFinishedInReverseOrder) {
  if (GetParam() != Transport::Packed && GetParam() != Transport::Device)
    GTEST_SKIP() << "shared-memory routes only";
  const HaloExchangeOptions opts = optionsFor(GetParam());
  for (const GridShape& shape : testing::allGrids(worldSize())) {
    SCOPED_TRACE(shape.str());
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    const HaloWidths halo = HaloWidths::uniform(1);
    const TensorBlock block = grid.blockOf(shapeFor(shape, halo), halo);
    Tensor a("a", block), b("b", block);
    HaloExchange<double, Memory> ea(grid, block, opts), eb(grid, block, opts);
    for (int round = 0; round < 3; ++round) {
      SCOPED_TRACE(round);
      fill(a, -7.0, 0.0);
      fill(b, -7.0, 0.0);
      scale(a, double(1 << round));
      scale(b, double(1 << (round + 3)));
      ea.start(a, HaloDirection::Gather);
      eb.start(b, HaloDirection::Gather);
      eb.finish();
      ea.finish();
      scale(a, 1.0 / double(1 << round));
      scale(b, 1.0 / double(1 << (round + 3)));
      EXPECT_EQ(checkGathered(a), 0);
      EXPECT_EQ(checkGathered(b), 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Routes, HaloExchangeAllGrids,
                         ::testing::Values(Transport::Packed, Transport::Direct,
                                           Transport::DirectRuns, Transport::Device,
                                           Transport::PackedMessages, Transport::DeviceMessages),
                         [](const ::testing::TestParamInfo<Transport>& i) {
                           return i.param == Transport::Direct           ? "direct"
                                  : i.param == Transport::DirectRuns     ? "direct_runs"
                                  : i.param == Transport::Device         ? "device"
                                  : i.param == Transport::PackedMessages ? "packed_messages"
                                  : i.param == Transport::DeviceMessages ? "device_messages"
                                                                         : "packed";
                         });

// Packed messages between ranks of one node take the shared window wherever its buffers are host
// memory (host tensors, or the device path's host staging), and none do with shared_memory off;
// direct messages never do.
TEST(HaloExchange, PackedMessagesWithinANodeGoThroughSharedMemory) {
  const int size = worldSize();
  if (size == 1) GTEST_SKIP() << "needs a neighbour";
  if (ranksOnNode(MPI_COMM_WORLD) != size) GTEST_SKIP() << "needs every rank on one node";
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, size, 1, 1));
  const HaloWidths halo = HaloWidths::uniform(1);
  const TensorBlock block = grid.blockOf({1, 2, 3 * size, 5, 6}, halo);
  using Exchange = HaloExchange<double, Memory>;
  constexpr bool host_buffers =
      !Exchange::kMpiReadsMemory || kRunsOnHost<Exchange::execution_space>;
  for (const Transport route : {Transport::Packed, Transport::Device, Transport::PackedMessages,
                                Transport::DeviceMessages, Transport::Direct}) {
    const HaloExchangeOptions opts = optionsFor(route);
    Exchange ex(grid, block, opts);
    for (const HaloDirection dir : {HaloDirection::Gather, HaloDirection::ScatterSum}) {
      const std::size_t packed = ex.sendRoutes(dir) - ex.directSendRoutes(dir);
      const bool device = opts.path == KernelPath::Device;
      const std::size_t want = opts.shared_memory && (host_buffers || device) ? packed : 0;
      EXPECT_EQ(ex.sharedSendRoutes(dir), want) << int(route);
      EXPECT_GT(ex.sendRoutes(dir), 0u);
    }
  }
}

TEST(HaloExchange, ZeroBoundaryGhostsRestoresPadding) {
  for (const GridShape& shape : testing::allGrids(worldSize())) {
    ProcessGrid grid(MPI_COMM_WORLD, shape);
    const HaloWidths halo{{1, 2, 1}, {2, 1, 0}};
    const TensorBlock block = grid.blockOf(shapeFor(shape, halo), halo);
    Tensor t("t", block);
    fill(t, -7.0, 99.0);
    zeroBoundaryGhosts(t);
    HaloExchange<double, Memory>(grid, block).gather(t);
    EXPECT_EQ(checkGathered(t), 0) << shape.str();
  }
}

TEST(HaloExchange, DirectRunsBypassPackingWhereTheGridLeavesDimensionsWhole) {
  // A split along D only: each D face, stretched over the unsplit H and W, is one run per (n, c).
  const int size = worldSize();
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, size, 1, 1));
  const HaloWidths halo = HaloWidths::uniform(2);
  const TensorBlock block = grid.blockOf({1, 3, 4 * size, 8, 8}, halo);
  HaloExchangeOptions opts;
  opts.direct_min_run_bytes = 0;
  HaloExchange<double, Memory> exchange(grid, block, opts);
  const std::size_t neighbours = (size == 1)                                             ? 0
                                 : (grid.coords().d == 0 || grid.coords().d == size - 1) ? 1
                                                                                         : 2;
  EXPECT_EQ(exchange.sendRoutes(HaloDirection::Gather), neighbours);
  if (HaloExchange<double, Memory>::kMpiReadsMemory) {
    EXPECT_EQ(exchange.directSendRoutes(HaloDirection::Gather), neighbours);
  }
  EXPECT_EQ(exchange.directSendRoutes(HaloDirection::ScatterSum), 0u);
  EXPECT_EQ(exchange.receivedBytes(HaloDirection::Gather),
            neighbours * 3 * 2 * 8 * 8 * sizeof(double));
}

// The wire traffic the performance model reads from the pure plan (impl::wireMessages) is what the
// exchange sends: bytes and MPI messages per round, gather (direct or packed) and scatter-sum, on
// every grid.
TEST(HaloExchange, WireMessagesOfThePlanAreWhatTheExchangeSends) {
  for (const GridShape& shape : testing::allGrids(worldSize())) {
    for (const Case& c : kCases) {
      SCOPED_TRACE(shape.str() + " " + c.name);
      ProcessGrid grid(MPI_COMM_WORLD, shape);
      const TensorBlock block = grid.blockOf(shapeFor(shape, c.halo), c.halo);
      for (const auto& [direct, datatypes] :
           {std::pair{true, true}, {true, false}, {false, true}}) {
        HaloExchangeOptions opts;
        opts.direct_runs = direct;
        opts.derived_datatypes = datatypes;
        opts.direct_min_run_bytes = 64;
        HaloExchange<double, Memory> ex(grid, block, opts);
        const impl::DirectRule rule{direct && HaloExchange<double, Memory>::kMpiReadsMemory,
                                    opts.direct_min_run_bytes, opts.direct_max_runs,
                                    opts.derived_datatypes};
        for (const bool gather : {true, false}) {
          std::size_t bytes = 0, messages = 0;
          for (const impl::WireMessage& w :
               impl::wireMessages(ex.plan(), gather, rule, sizeof(double))) {
            bytes += w.bytes;
            messages += w.messages;
          }
          const HaloDirection dir = gather ? HaloDirection::Gather : HaloDirection::ScatterSum;
          EXPECT_EQ(bytes, ex.sentBytes(dir)) << (gather ? "gather" : "scatter");
          EXPECT_EQ(messages, ex.sentMessages(dir)) << (gather ? "gather" : "scatter");
          // With ghosts on both sides every rank of a split grid sends something.
          if (shape.spatialSize() > 1 && std::string(c.name).rfind("width", 0) == 0) {
            EXPECT_GT(messages, 0u);
          }
        }
      }
    }
  }
}

TEST(HaloExchange, TensorOfAnotherLayoutIsRejected) {
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, worldSize(), 1, 1));
  const TensorBlock planned = grid.blockOf({1, 1, 4 * worldSize(), 4, 4}, HaloWidths::uniform(1));
  const TensorBlock other = grid.blockOf({1, 2, 4 * worldSize(), 4, 4}, HaloWidths::uniform(1));
  HaloExchange<double, Memory> exchange(grid, planned);
  Tensor t("wrong", other);
  try {
    exchange.gather(t);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("'wrong'"), std::string::npos) << e.what();
  }
}

TEST(HaloExchange, BlockThinnerThanHaloIsRejectedOnEveryRank) {
  const int size = worldSize();
  if (size == 1) GTEST_SKIP() << "needs a split";
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, size, 1, 1));
  // Hand-made block whose owned extent (1) is below the halo width (2): TensorBlock::forGrid
  // refuses it, and so must the exchange, on all ranks together.
  const Shape5 s{1, 1, index_t(size), 4, 4};
  const TensorBlock b(s, 0, 1, Box({grid.coords().d, 0, 0}, {grid.coords().d + 1, 4, 4}),
                      HaloWidths::uniform(2));
  EXPECT_THROW((HaloExchange<double, Memory>(grid, b)), ShapeError);
  EXPECT_THROW(grid.blockOf(s, HaloWidths::uniform(2)), ShapeError);
}

TEST(HaloExchange, DisagreeingWidthsAreRejectedOnEveryRank) {
  const int size = worldSize();
  if (size == 1) GTEST_SKIP() << "needs two ranks";
  ProcessGrid grid(MPI_COMM_WORLD, GridShape(1, size, 1, 1));
  const HaloWidths mine = grid.rank() == 0 ? HaloWidths::uniform(2) : HaloWidths::uniform(1);
  const TensorBlock b = grid.blockOf({1, 1, 4 * index_t(size), 4, 4}, mine);
  EXPECT_THROW((HaloExchange<double, Memory>(grid, b)), ShapeError);
}

}  // namespace
}  // namespace halo3d
