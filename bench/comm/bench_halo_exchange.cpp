// Halo exchange of a (1, 16, 64, 64, 64) float tensor (bf16 in halo_gather_bf16), side by side with
// raw MPI_Sendrecv of the same bytes to the same neighbours, in the same run. 2 ranks split D
// (1x2x1x1); 8 ranks split all three (1x2x2x2); other rank counts split D only.
//
// Arguments: {halo width, ghosts in every dimension (1) or only along split ones (0), direct: 1
// long contiguous runs go straight from tensor to tensor, one message per neighbour (the default),
// 2 the same with one message per run, 3 as 1 with runs of any length direct, 0 every message
// packed (through the node's shared-memory window: HaloExchangeOptions::shared_memory), 4 every
// message packed and sent as an MPI message (shared_memory off); 5 and 6 are 0 and 4 packed with
// plain stores (streaming_stores off: the packed paths before 2026-12-02 08:00 UTC)}. Rates:
// bytes_per_second counts the ghost bytes one rank receives per exchange (its useful payload);
// face_KiB is the largest single face message; bytes_sent and messages_sent are one rank's wire
// traffic per round. halo_vs_raw's halo/raw is the ratio of the two rates over all iterations,
// halo/raw_med that of their median iterations (halo_us_med, raw_us_med): on a machine shared with
// other jobs the sums take in every iteration in which a rank lost its core.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <vector>

#include "halo3d/comm/HaloExchange.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "support/MpiTiming.hpp"

namespace halo3d::bench {
namespace {

using Memory = Kokkos::DefaultExecutionSpace::memory_space;
constexpr index_t kC = 16, kE = 64;

GridShape gridFor(int ranks) {
  if (ranks == 8) return GridShape(1, 2, 2, 2);
  return GridShape(1, ranks, 1, 1);
}

HaloWidths widthsFor(const GridShape& g, int width, bool every_dim) {
  HaloWidths h;
  const auto parts = g.spatial();
  for (int d = 0; d < 3; ++d)
    h.lo[d] = h.hi[d] = (every_dim || parts[d] > 1) ? width : 0;
  return h;
}

template <class T = float>
struct Setup {
  ProcessGrid grid;
  TensorBlock block;
  HaloTensor<T, Memory> tensor;
  Setup(int width, bool every_dim)
      : grid(MPI_COMM_WORLD, gridFor(worldSize())),
        block(grid.blockOf({1, kC, kE, kE, kE}, widthsFor(grid.shape(), width, every_dim))),
        tensor("bench_halo", block) {
    Kokkos::deep_copy(tensor.owned(), T(1.0f));
  }
};

std::size_t largestFaceBytes(const impl::HaloPlan& plan,
                             std::size_t element_bytes = sizeof(float)) {
  std::size_t best = 0;
  for (const auto& m : plan.messages)
    best = std::max(best, std::size_t(m.owned_side.size()) * std::size_t(kC) * element_bytes);
  return best;
}

void report(benchmark::State& state, std::size_t bytes, std::size_t face_bytes) {
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  state.counters["face_KiB"] = double(face_bytes) / 1024.0;
  state.counters["ranks"] = worldSize();
}

// Seconds `f` takes on the slowest rank, starting from a barrier.
template <class F>
double timedMax(F&& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  f();
  return maxOverRanks(MPI_Wtime() - t0);
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
  return v[v.size() / 2];
}

void setTransport(HaloExchangeOptions& opts, int direct) {
  opts.direct_runs = direct == 1 || direct == 2 || direct == 3;
  opts.derived_datatypes = direct != 2;
  if (direct == 3) opts.direct_min_run_bytes = 0;
  opts.shared_memory = direct != 4 && direct != 6;
  opts.streaming_stores = direct != 5 && direct != 6;
}

template <class T = float>
void haloExchange(benchmark::State& state, HaloDirection dir) {
  Setup<T> s(int(state.range(0)), state.range(1) != 0);
  HaloExchangeOptions opts;
  setTransport(opts, int(state.range(2)));
  HaloExchange<T, Memory> exchange(s.grid, s.block, opts);
  for (int i = 0; i < 3; ++i)
    dir == HaloDirection::Gather ? exchange.gather(s.tensor) : exchange.scatter(s.tensor);
  for (auto _ : state) {
    // finish() fences the execution space before it returns.
    state.SetIterationTime(timedMax([&] {
      exchange.start(s.tensor, dir);
      exchange.finish();
    }));
  }
  report(state, exchange.receivedBytes(dir), largestFaceBytes(exchange.plan(), sizeof(T)));
  state.counters["direct_routes"] = double(exchange.directSendRoutes(dir));
  state.counters["shared_routes"] = double(exchange.sharedSendRoutes(dir));
  // Per rank and round, the same in every iteration: what the precision changes.
  state.counters["bytes_sent"] = double(exchange.sentBytes(dir));
  state.counters["messages_sent"] = double(exchange.sentMessages(dir));
}

// The anchor: one MPI_Sendrecv per neighbour slot (send to the slot's neighbour, receive from the
// opposite one, as in a shift), from and into contiguous buffers of exactly the halo's message
// sizes.
class RawSendrecv {
 public:
  explicit RawSendrecv(const Setup<>& s)
      : _comm(s.grid.spatialComm()),
        _plan(impl::planHaloExchange(s.block, s.grid.shape(), s.grid.coords().spatial())) {
    for (int slot = 0; slot < kNeighbourSlots; ++slot) {
      if (slot == kSelfSlot) continue;
      Pair p;
      p.to = s.grid.neighbour(neighbourOffset(slot));
      p.from = s.grid.neighbour(neighbourOffset(oppositeSlot(slot)));
      for (const auto& m : _plan.messages) {
        if (m.slot == slot) p.send.assign(std::size_t(m.owned_side.size() * kC), 1.0f);
        if (m.slot == oppositeSlot(slot))
          p.recv.assign(std::size_t(m.ghost_side.size() * kC), 0.0f);
      }
      _bytes += p.recv.size() * sizeof(float);
      if (p.to != MPI_PROC_NULL || p.from != MPI_PROC_NULL) _pairs.push_back(std::move(p));
    }
  }
  void run() {
    for (Pair& p : _pairs)
      MPI_Sendrecv(p.send.data(), int(p.send.size()), MPI_FLOAT, p.to, 0, p.recv.data(),
                   int(p.recv.size()), MPI_FLOAT, p.from, 0, _comm, MPI_STATUS_IGNORE);
  }
  std::size_t bytes() const { return _bytes; }
  const impl::HaloPlan& plan() const { return _plan; }

 private:
  struct Pair {
    int to, from;
    std::vector<float> send, recv;
  };
  MPI_Comm _comm;
  impl::HaloPlan _plan;
  std::vector<Pair> _pairs;
  std::size_t _bytes = 0;
};

void rawSendrecv(benchmark::State& state) {
  Setup<> s(int(state.range(0)), state.range(1) != 0);
  RawSendrecv raw(s);
  for (int i = 0; i < 3; ++i)
    raw.run();
  for (auto _ : state)
    state.SetIterationTime(timedMax([&] { raw.run(); }));
  report(state, raw.bytes(), largestFaceBytes(raw.plan()));
}

// Halo gather and raw MPI_Sendrecv interleaved, iteration by iteration, so that both see the same
// machine (shared, noisy virtual machines drift by tens of percent between benchmarks). The manual
// time is the halo's; the counters give both rates and halo/raw, the bandwidth ratio.
void haloVsRaw(benchmark::State& state) {
  Setup<> s(int(state.range(0)), state.range(1) != 0);
  HaloExchangeOptions opts;
  setTransport(opts, int(state.range(2)));
  HaloExchange<float, Memory> exchange(s.grid, s.block, opts);
  RawSendrecv raw(s);
  for (int i = 0; i < 3; ++i) {
    exchange.gather(s.tensor);
    raw.run();
  }
  double t_halo = 0, t_raw = 0;
  std::vector<double> halo_times, raw_times;
  for (auto _ : state) {
    const double th = timedMax([&] { exchange.gather(s.tensor); });
    const double tr = timedMax([&] { raw.run(); });
    t_raw += tr;
    t_halo += th;
    halo_times.push_back(th);
    raw_times.push_back(tr);
    state.SetIterationTime(th);
  }
  report(state, exchange.receivedBytes(HaloDirection::Gather), largestFaceBytes(exchange.plan()));
  const double n = double(state.iterations());
  state.counters["halo_GBps"] =
      double(exchange.receivedBytes(HaloDirection::Gather)) * n / t_halo / 1e9;
  state.counters["raw_GBps"] = double(raw.bytes()) * n / t_raw / 1e9;
  state.counters["halo/raw"] = (double(exchange.receivedBytes(HaloDirection::Gather)) / t_halo) /
                               (double(raw.bytes()) / t_raw);
  // The same ratio from the median iterations (see the file comment).
  const double halo_med = median(halo_times), raw_med = median(raw_times);
  state.counters["halo/raw_med"] =
      (double(exchange.receivedBytes(HaloDirection::Gather)) / halo_med) /
      (double(raw.bytes()) / raw_med);
  state.counters["halo_us_med"] = halo_med * 1e6;
  state.counters["raw_us_med"] = raw_med * 1e6;
  state.counters["direct_routes"] = double(exchange.directSendRoutes(HaloDirection::Gather));
  state.counters["shared_routes"] = double(exchange.sharedSendRoutes(HaloDirection::Gather));
}

void haloGather(benchmark::State& state) {
  haloExchange(state, HaloDirection::Gather);
}
void haloGatherBf16(benchmark::State& state) {
  haloExchange<bf16>(state, HaloDirection::Gather);
}
void haloScatter(benchmark::State& state) {
  haloExchange(state, HaloDirection::ScatterSum);
}

void widths(benchmark::internal::Benchmark* b, const std::vector<int>& transports) {
  b->ArgNames({"halo", "every_dim", "direct"});
  for (int every_dim : {1, 0})
    for (int w : {1, 2, 4, 8})
      for (int direct : transports)
        b->Args({w, every_dim, direct});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

const std::vector<int> kAllTransports{1, 2, 3, 0, 4, 5, 6}, kPacked{0, 4};

BENCHMARK(rawSendrecv)->Name("raw_sendrecv/N1_C16_D64")->Apply([](auto* b) { widths(b, {0}); });
BENCHMARK(haloGather)->Name("halo_gather/N1_C16_D64")->Apply([](auto* b) {
  widths(b, kAllTransports);
});
BENCHMARK(haloGatherBf16)->Name("halo_gather_bf16/N1_C16_D64")->Apply([](auto* b) {
  widths(b, kAllTransports);
});
BENCHMARK(haloVsRaw)->Name("halo_vs_raw/N1_C16_D64")->Apply([](auto* b) {
  widths(b, kAllTransports);
});
BENCHMARK(haloScatter)->Name("halo_scatter/N1_C16_D64")->Apply([](auto* b) { widths(b, kPacked); });

}  // namespace
}  // namespace halo3d::bench
