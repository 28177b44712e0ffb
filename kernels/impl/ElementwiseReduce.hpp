#pragma once
// Deterministic per-group sums in double: the partial statistics of batch norm and the partial sums
// of the losses. A reduction is split into fixed chunks of rows whose sums land in a scratch buffer
// and are then added in chunk order, so a given box always gives the same bits, whatever the thread
// count.

#include <Kokkos_Core.hpp>

#include <string>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/core/KernelPath.hpp"
#include "halo3d/kernels/KernelTypes.hpp"
#include "halo3d/kernels/impl/ElementwiseLoops.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"
#include "halo3d/kernels/impl/TeamTuning.hpp"

namespace halo3d::kernels::impl {

// K sums: what one cell contributes to a reduction, and a device thread's running total.
template <int K>
struct Sums {
  double v[K];
  KOKKOS_INLINE_FUNCTION Sums() {
    for (int k = 0; k < K; ++k)
      v[k] = 0.0;
  }
  KOKKOS_INLINE_FUNCTION Sums& operator+=(const Sums& o) {
    for (int k = 0; k < K; ++k)
      v[k] += o.v[k];
    return *this;
  }
};

// A cell's contribution (v0, v1, ...).
template <class... V>
KOKKOS_INLINE_FUNCTION Sums<int(sizeof...(V))> sums(V... values) {
  Sums<int(sizeof...(V))> s;
  const double list[] = {double(values)...};
  for (int k = 0; k < int(sizeof...(V)); ++k)
    s.v[k] = list[k];
  return s;
}

// A host chunk's running totals: eight lanes per sum, laid out so that lane l of every sum takes
// cell i % 8 == l. Lanes are independent, so no reassociation is needed to run them side by side:
// the compiler vectorises across lanes, and the additions do not wait on each other.
inline constexpr int kLanes = 8;
template <int K>
struct Lanes {
  double v[K][kLanes] = {};

  // Adds cell(i) for i < length, cell i into lane i % kLanes.
  template <class Cell>
  KOKKOS_INLINE_FUNCTION void addRow(index_t length, const Cell& cell) {
    index_t i = 0;
    for (; i + kLanes <= length; i += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const Sums<K> c = cell(i + l);
        for (int k = 0; k < K; ++k)
          v[k][l] += c.v[k];
      }
    for (; i < length; ++i) {
      const Sums<K> c = cell(i);
      for (int k = 0; k < K; ++k)
        v[k][i % kLanes] += c.v[k];
    }
  }
  // The lanes added pairwise, in a fixed order.
  KOKKOS_INLINE_FUNCTION double total(int k) const {
    double t[kLanes];
    for (int l = 0; l < kLanes; ++l)
      t[l] = v[k][l];
    for (int step = kLanes / 2; step > 0; step /= 2)
      for (int l = 0; l < step; ++l)
        t[l] += t[l + step];
    return t[0];
  }
};

// Rows [0, rows) of `length` cells in chunks of rowsPerChunk(length) rows; no chunks when a row is
// empty.
struct ChunkPlan {
  index_t rows, length, per_chunk, chunks;
  ChunkPlan(index_t rows_, index_t length_)
      : rows(rows_),
        length(length_),
        per_chunk(rowsPerChunk(length_)),
        chunks(length_ > 0 ? (rows_ + per_chunk - 1) / per_chunk : 0) {}
  KOKKOS_INLINE_FUNCTION index_t begin(index_t chunk) const { return chunk * per_chunk; }
  KOKKOS_INLINE_FUNCTION index_t end(index_t chunk) const {
    return begin(chunk) + per_chunk < rows ? begin(chunk) + per_chunk : rows;
  }
};

template <class ExecSpace>
using Scratch = Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space>;

// scratch(g * chunks + chunk, k) = the sums of chunk `chunk` of group g. The host code (Fastest on
// a host space) has host_chunk(g, r0, r1, lanes) add rows [r0, r1) into `lanes`; the device code
// has a team spread the chunk's cells over its threads, each adding cell(g, r, i).
template <int K, class ExecSpace, class HostChunk, class DeviceCell>
void chunkSums(const ExecSpace& exec, const std::string& label, index_t groups,
               const ChunkPlan& plan, const HostChunk& host_chunk, const DeviceCell& cell,
               const Scratch<ExecSpace>& scratch, KernelPath path, const TeamTuning& tuning) {
  if (groups * plan.chunks == 0) return;
  const index_t chunks = plan.chunks;
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
      Kokkos::parallel_for(
          label,
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, groups * chunks),
          KOKKOS_LAMBDA(index_t slot) {
            Lanes<K> lanes;
            host_chunk(slot / chunks, plan.begin(slot % chunks), plan.end(slot % chunks), lanes);
            for (int k = 0; k < K; ++k)
              scratch(slot, k) = lanes.total(k);
          });
      return;
    }
  }
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  Kokkos::parallel_for(
      label, teamPolicy(exec, groups * chunks, tuning), KOKKOS_LAMBDA(const Team& team) {
        const index_t slot = team.league_rank();
        const index_t g = slot / chunks, r0 = plan.begin(slot % chunks);
        const index_t cells = (plan.end(slot % chunks) - r0) * plan.length;
        Sums<K> mine;
        for (index_t i = team.team_rank(); i < cells; i += team.team_size())
          mine += cell(g, r0 + i / plan.length, i % plan.length);
        for (int k = 0; k < K; ++k) {
          double v = mine.v[k];
          team.team_reduce(Kokkos::Sum<double>(v));
          if (team.team_rank() == 0) scratch(slot, k) = v;
        }
      });
}

// out(k * groups + g) = [out(k * groups + g) if accumulate] + sum over the chunks of scratch, in
// order.
template <int K, class ExecSpace>
void sumChunks(const ExecSpace& exec, const std::string& label, index_t groups, index_t chunks,
               const Scratch<ExecSpace>& scratch, const Vector<double, ExecSpace>& out,
               bool accumulate) {
  Kokkos::parallel_for(
      label + " chunks",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, groups),
      KOKKOS_LAMBDA(index_t g) {
        for (int k = 0; k < K; ++k) {
          double total = 0.0;
          for (index_t ch = 0; ch < chunks; ++ch)
            total += scratch(g * chunks + ch, k);
          const index_t o = k * groups + g;
          out(o) = accumulate ? out(o) + total : total;
        }
      });
}

// The chunk sums of chunkSums, then their total per group into out as sumChunks: the reduction
// behind reduceRows and reduceBox.
template <int K, class ExecSpace, class HostChunk, class DeviceCell>
void reduceChunks(const ExecSpace& exec, const std::string& label, index_t groups,
                  const ChunkPlan& plan, const HostChunk& host_chunk, const DeviceCell& cell,
                  const Vector<double, ExecSpace>& out, bool accumulate, KernelPath path,
                  const TeamTuning& tuning) {
  const Scratch<ExecSpace> scratch(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, label + " scratch"),
      groups * plan.chunks, K);
  chunkSums<K>(exec, label, groups, plan, host_chunk, cell, scratch, path, tuning);
  sumChunks<K>(exec, label, groups, plan.chunks, scratch, out, accumulate);
}

// out(k * groups + g) = [out(k * groups + g) if accumulate] + sum over r < rows, i < length of
// f(g, r, i).v[k], where f returns a cell's Sums<K>. Requires out.extent(0) >= K * groups.
template <int K, class ExecSpace, class F>
void reduceRows(const ExecSpace& exec, const std::string& label, index_t groups, index_t rows,
                index_t length, const F& f, const Vector<double, ExecSpace>& out, bool accumulate,
                KernelPath path, const TeamTuning& tuning = {}) {
  reduceChunks<K>(
      exec, label, groups, ChunkPlan(rows, length),
      KOKKOS_LAMBDA(index_t g, index_t r0, index_t r1, Lanes<K> & lanes) {
        for (index_t r = r0; r < r1; ++r)
          lanes.addRow(length, [&](index_t i) { return f(g, r, i); });
      },
      f, out, accumulate, path, tuning);
}

// The same over a flat index k < n, f(k) giving element k's Sums<K>, for one group. Rows of a fixed
// length make the reduction's chunks, whatever n; the last row's cells past n add zero.
template <int K, class ExecSpace, class F>
void reduceFlat(const ExecSpace& exec, const std::string& label, index_t n, const F& f,
                const Vector<double, ExecSpace>& out, bool accumulate, KernelPath path) {
  const index_t row = 1024;
  reduceRows<K>(
      exec, label, 1, (n + row - 1) / row, n < row ? n : row,
      KOKKOS_LAMBDA(index_t, index_t r, index_t i) {
        const index_t k = r * row + i;
        return k < n ? f(k) : Sums<K>();
      },
      out, accumulate, path);
}

// The same over the cells of `box` for local samples [0, samples): f(g, n, d, h, w) with global
// (d, h, w), once per group g and cell.
template <int K, class ExecSpace, class F>
void reduceBox(const ExecSpace& exec, const std::string& label, index_t groups, index_t samples,
               const Box& box, const F& f, const Vector<double, ExecSpace>& out, bool accumulate,
               KernelPath path, const TeamTuning& tuning = {}) {
  const RowIndexer rows(1, box);
  const index_t w0 = box.min(2);
  const ChunkPlan plan(rows.rows(samples), box.extent(2));
  reduceChunks<K>(
      exec, label, groups, plan,
      KOKKOS_LAMBDA(index_t g, index_t r0, index_t r1, Lanes<K> & lanes) {
        index_t n, c, d, h;
        rows(r0, n, c, d, h);
        for (index_t r = r0; r < r1; ++r, rows.next(n, c, d, h))
          lanes.addRow(plan.length, [&](index_t i) { return f(g, n, d, h, w0 + i); });
      },
      KOKKOS_LAMBDA(index_t g, index_t r, index_t i) {
        index_t n, c, d, h;
        rows(r, n, c, d, h);
        return f(g, n, d, h, w0 + i);
      },
      out, accumulate, path, tuning);
}

// Dice's overlap sums, soft or hard: per class c, [sum p t, sum p, sum t] over all samples and the
// cells of `box`, with t = (labels == c) and p = prob(c, n, d, h, w). Written as group c of
// reduceBox into out(c), out(C + c), out(2 C + c).
template <class ExecSpace, class L, class P>
void classOverlapSums(const ExecSpace& exec, const std::string& label, index_t classes,
                      const Tensor<L, ExecSpace>& labels, const Box& box, const P& prob,
                      const Vector<double, ExecSpace>& out, bool accumulate, KernelPath path) {
  const auto lc = readCells(labels);
  reduceBox<3>(
      exec, label, classes, labels.block().localSamples(), box,
      KOKKOS_LAMBDA(index_t c, index_t n, index_t d, index_t h, index_t w) {
        const double p = prob(c, n, d, h, w);
        const double t = lc(n, 0, d, h, w) == L(c) ? 1.0 : 0.0;
        return sums(p * t, p, t);
      },
      out, accumulate, path);
}

}  // namespace halo3d::kernels::impl
