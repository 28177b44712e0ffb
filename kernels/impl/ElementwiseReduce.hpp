#pragma once
// Deterministic per-group sums in double: the partial statistics of batch norm and the partial sums
// of the losses. A reduction is split into fixed chunks of rows whose sums land in a scratch buffer
// and are then added in chunk order, so a given box always gives the same bits, whatever the thread
// count.

#include <Kokkos_Core.hpp>

#include <string>

#include "core/IndexSpace.hpp"
#include "kernels/impl/ElementwiseLoops.hpp"
#include "kernels/impl/ElementwiseViews.hpp"

namespace halo3d::kernels::impl {

// K running sums, one accumulator of reduceRows.
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

// Cells per chunk: enough work per chunk to amortise its scratch slot, enough chunks to fill a
// device.
inline constexpr index_t kReduceChunkCells = 4096;

// out(k * groups + g) = [out(k * groups + g) if accumulate] + sum over r < rows, i < length of what
// f(g, r, i, acc) adds to acc.v[k]. Requires out.extent(0) >= K * groups.
template <int K, class ExecSpace, class F>
void reduceRows(const ExecSpace& exec, const std::string& label, index_t groups, index_t rows,
                index_t length, const F& f, const Vector<double, ExecSpace>& out, bool accumulate) {
  if (groups == 0) return;
  // Rows of no cells add nothing: an empty box has no chunks, and the sums below are zero.
  const index_t rows_per_chunk = length > 0 ? (kReduceChunkCells + length - 1) / length : 1;
  const index_t chunks = length > 0 ? (rows + rows_per_chunk - 1) / rows_per_chunk : 0;
  Kokkos::View<double**, Kokkos::LayoutRight, typename ExecSpace::memory_space> scratch(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, label + " scratch"), groups * chunks,
      K);
  if (chunks > 0) {
    if constexpr (kRunsOnHost<ExecSpace>) {
      // Eight lanes of independent accumulators: no reassociation is needed to run them side by
      // side, so the compiler may vectorise across lanes, and the additions do not wait on each
      // other.
      Kokkos::parallel_for(
          label,
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, groups * chunks),
          KOKKOS_LAMBDA(index_t slot) {
            constexpr int kLanes = 8;
            const index_t g = slot / chunks;
            const index_t r0 = (slot % chunks) * rows_per_chunk;
            const index_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
            Sums<K> lanes[kLanes];
            for (index_t r = r0; r < r1; ++r) {
              index_t i = 0;
              for (; i + kLanes <= length; i += kLanes)
                for (int l = 0; l < kLanes; ++l)
                  f(g, r, i + l, lanes[l]);
              for (; i < length; ++i)
                f(g, r, i, lanes[i % kLanes]);
            }
            for (int step = kLanes / 2; step > 0; step /= 2)
              for (int l = 0; l < step; ++l)
                lanes[l] += lanes[l + step];
            for (int k = 0; k < K; ++k)
              scratch(slot, k) = lanes[0].v[k];
          });
    } else {
      using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
      Kokkos::parallel_for(
          label, Kokkos::TeamPolicy<ExecSpace>(exec, groups * chunks, Kokkos::AUTO),
          KOKKOS_LAMBDA(const Team& team) {
            const index_t slot = team.league_rank();
            const index_t g = slot / chunks;
            const index_t r0 = (slot % chunks) * rows_per_chunk;
            const index_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
            const index_t cells = (r1 - r0) * length;
            Sums<K> mine;
            for (index_t i = team.team_rank(); i < cells; i += team.team_size())
              f(g, r0 + i / length, i % length, mine);
            for (int k = 0; k < K; ++k) {
              double v = mine.v[k];
              team.team_reduce(Kokkos::Sum<double>(v));
              if (team.team_rank() == 0) scratch(slot, k) = v;
            }
          });
    }
  }
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

// reduceRows over the cells of `box` for local samples [0, samples): f(g, n, d, h, w, acc) with
// global (d, h, w), once per group g and cell.
template <int K, class ExecSpace, class F>
void reduceBox(const ExecSpace& exec, const std::string& label, index_t groups, index_t samples,
               const Box& box, const F& f, const Vector<double, ExecSpace>& out, bool accumulate) {
  const RowIndexer rows(1, box);
  const index_t w0 = box.min(2);
  reduceRows<K>(
      exec, label, groups, rows.rows(samples), box.extent(2),
      KOKKOS_LAMBDA(index_t g, index_t r, index_t i, Sums<K> & acc) {
        index_t n, c, d, h;
        rows(r, n, c, d, h);
        f(g, n, d, h, w0 + i, acc);
      },
      out, accumulate);
}

}  // namespace halo3d::kernels::impl
