#pragma once
// The team conv3d path, written for GPUs: a Kokkos team owns a tile of output cells and a block of
// channels, stages the input window of its tile and the weights it needs in team scratch memory,
// chunk of channels by chunk of channels, and accumulates in scratch so that any team size works
// (the tests run it on the host backend with one and two threads per team). Device-callable
// throughout; the dispatcher uses it on device execution spaces.
//
// - forward: team = (sample, block of 8 output channels, output tile); stages the x window and the
//   weights.
// - backward-data: team = (sample, block of 8 input channels, dx tile); stages the dy cells the
//   tile reads, with zeros outside dy_box, so that the inner loop needs no bounds checks.
// - backward-filter: team = (block of 4 output channels, block of 4 input channels, split of the
//   tiles); stages a dy tile and its x window, keeps a partial dw in scratch (double); a second
//   kernel sums the partials: no atomics, deterministic.
//
// Scratch goes to level 0 (on-chip) when it fits kScratchBudget bytes, else to level 1.

#include <Kokkos_Core.hpp>

#include <algorithm>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/impl/Conv3dChecks.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"
#include "halo3d/kernels/impl/IndexMath.hpp"
#include "halo3d/kernels/impl/TeamTuning.hpp"

namespace halo3d::kernels::impl {

namespace team {

inline constexpr int kTile[3] = {2, 4, 16};
inline constexpr int kScratchBudget = 40 * 1024;

// A box in plain device-copyable form, split into tiles of kTile cells (clipped to the box).
struct Tiling {
  index_t lo[3], hi[3], count[3];
  int size[3];  // kTile, copied: device code cannot read host arrays

  explicit Tiling(const Box& box) {
    for (int d = 0; d < 3; ++d) {
      size[d] = kTile[d];
      lo[d] = box.min(d);
      hi[d] = box.max(d);
      count[d] = (box.extent(d) + kTile[d] - 1) / kTile[d];
    }
  }
  KOKKOS_INLINE_FUNCTION index_t tiles() const { return count[0] * count[1] * count[2]; }
  // Origin and extents of tile `t`.
  KOKKOS_INLINE_FUNCTION void tile(index_t t, index_t origin[3], int extent[3]) const {
    const index_t idx[3] = {t / (count[1] * count[2]), (t / count[2]) % count[1], t % count[2]};
    for (int d = 0; d < 3; ++d) {
      origin[d] = lo[d] + idx[d] * size[d];
      extent[d] = int(hi[d] - origin[d] < size[d] ? hi[d] - origin[d] : size[d]);
    }
  }
};

template <class ExecSpace>
using Policy = Kokkos::TeamPolicy<ExecSpace>;
template <class ExecSpace, class T>
using Scratch = Kokkos::View<T*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

inline int scratchLevel(std::size_t bytes) {
  return bytes <= std::size_t(kScratchBudget) ? 0 : 1;
}

template <class ExecSpace>
Policy<ExecSpace> makePolicy(const ExecSpace& exec, index_t league, const TeamTuning& tuning,
                             std::size_t bytes) {
  return teamPolicy(exec, league, tuning)
      .set_scratch_size(scratchLevel(bytes), Kokkos::PerTeam(bytes));
}

// Channels per staged chunk: as many as fit the budget next to `fixed` bytes, at least 1.
inline index_t chunkChannels(index_t channels, std::size_t fixed, std::size_t per_channel) {
  const std::size_t room =
      std::size_t(kScratchBudget) > fixed ? std::size_t(kScratchBudget) - fixed : 0;
  return std::max<index_t>(
      1, std::min<index_t>(channels, index_t(room / std::max<std::size_t>(per_channel, 1))));
}

}  // namespace team

// See conv3dForward in kernels/Conv3d.hpp; the caller has run checkForward.
template <class ExecSpace, class T>
void conv3dForwardTeam(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                       const Conv3dWeightsOn<T, ExecSpace>& w, const Conv3dBiasOn<T, ExecSpace>& b,
                       const WindowGeometry& g, const Tensor<T, ExecSpace>& y, const Box& out_box,
                       const TeamTuning& tuning = {}) {
  constexpr int OB = 8;
  using Member = typename team::Policy<ExecSpace>::member_type;
  using Scratch = team::Scratch<ExecSpace, T>;
  const index_t samples = y.block().localSamples();
  if (out_box.empty() || samples == 0) return;
  const Conv3dIndexing ix = makeIndexing(g, x, y);
  const team::Tiling tiling(out_box);
  const auto xv = x.view();
  const auto yv = y.view();
  const index_t in_ch = x.block().channels(), out_ch = y.block().channels();
  const int taps = ix.taps();
  int win[3];
  for (int d = 0; d < 3; ++d)
    win[d] = (team::kTile[d] - 1) * g.stride[d] + (g.kernel[d] - 1) * g.dilation[d] + 1;
  const index_t win_cells = index_t(win[0]) * win[1] * win[2],
                tile_cells = team::kTile[0] * team::kTile[1] * team::kTile[2];
  const index_t chunk = team::chunkChannels(in_ch, Scratch::shmem_size(OB * tile_cells),
                                            (win_cells + OB * taps) * sizeof(T));
  const std::size_t bytes = Scratch::shmem_size(chunk * win_cells) +
                            Scratch::shmem_size(OB * chunk * taps) +
                            Scratch::shmem_size(OB * tile_cells);
  const int level = team::scratchLevel(bytes);
  const index_t blocks = (out_ch + OB - 1) / OB;
  const bool has_bias = b.extent(0) > 0;
  Kokkos::parallel_for(
      "halo3d::conv3dForward(team)",
      team::makePolicy(exec, samples * blocks * tiling.tiles(), tuning, bytes),
      KOKKOS_LAMBDA(const Member& m) {
        const index_t tile = m.league_rank() % tiling.tiles();
        const index_t o0 = (m.league_rank() / tiling.tiles()) % blocks * OB;
        const index_t n = m.league_rank() / (tiling.tiles() * blocks);
        const int on = int(out_ch - o0 < OB ? out_ch - o0 : OB);
        index_t c0[3];
        int te[3], we[3];
        tiling.tile(tile, c0, te);
        for (int d = 0; d < 3; ++d)
          we[d] = (te[d] - 1) * ix.stride[d] + (ix.kernel[d] - 1) * ix.dilation[d] + 1;
        const int cells = te[0] * te[1] * te[2], wcells = we[0] * we[1] * we[2];
        Scratch xs(m.team_scratch(level), chunk * win_cells),
            ws(m.team_scratch(level), OB * chunk * taps);
        Scratch acc(m.team_scratch(level), OB * tile_cells);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, on * cells),
                             [&](int e) { acc(e) = has_bias ? b(o0 + e / cells) : T(0); });
        for (index_t i0 = 0; i0 < in_ch; i0 += chunk) {
          const int cn = int(in_ch - i0 < chunk ? in_ch - i0 : chunk);
          m.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, cn * wcells), [&](int e) {
            const int i = e / wcells, l = e % wcells;
            const int ld = l / (we[1] * we[2]), lh = (l / we[2]) % we[1], lw = l % we[2];
            xs(e) = xv(n, i0 + i, ix.inputOf(0, c0[0], 0) + ld + ix.in_shift[0],
                       ix.inputOf(1, c0[1], 0) + lh + ix.in_shift[1],
                       ix.inputOf(2, c0[2], 0) + lw + ix.in_shift[2]);
          });
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, OB * cn * taps), [&](int e) {
            const int o = e / (cn * taps), i = (e / taps) % cn, t = e % taps;
            const int kd = t / (ix.kernel[1] * ix.kernel[2]),
                      kh = (t / ix.kernel[2]) % ix.kernel[1], kw = t % ix.kernel[2];
            ws(e) = o < on ? w(o0 + o, i0 + i, kd, kh, kw) : T(0);
          });
          m.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, cells), [&](int cell) {
            const int ld = cell / (te[1] * te[2]), lh = (cell / te[2]) % te[1], lw = cell % te[2];
            T sum[OB] = {};
            for (int i = 0; i < cn; ++i)
              for (int kd = 0; kd < ix.kernel[0]; ++kd)
                for (int kh = 0; kh < ix.kernel[1]; ++kh)
                  for (int kw = 0; kw < ix.kernel[2]; ++kw) {
                    const T xval = xs(i * wcells +
                                      ((ld * ix.stride[0] + kd * ix.dilation[0]) * we[1] +
                                       lh * ix.stride[1] + kh * ix.dilation[1]) *
                                          we[2] +
                                      lw * ix.stride[2] + kw * ix.dilation[2]);
                    const int t = (kd * ix.kernel[1] + kh) * ix.kernel[2] + kw;
                    for (int o = 0; o < OB; ++o)
                      sum[o] += ws((o * cn + i) * taps + t) * xval;
                  }
            for (int o = 0; o < on; ++o)
              acc(o * cells + cell) += sum[o];
          });
        }
        m.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, on * cells), [&](int e) {
          const int o = e / cells, cell = e % cells;
          const int ld = cell / (te[1] * te[2]), lh = (cell / te[2]) % te[1], lw = cell % te[2];
          yv(n, o0 + o, c0[0] + ld + ix.out_shift[0], c0[1] + lh + ix.out_shift[1],
             c0[2] + lw + ix.out_shift[2]) = acc(e);
        });
      });
}

// See conv3dBackwardData in kernels/Conv3d.hpp; the caller has run checkBackwardData.
template <class ExecSpace, class T>
void conv3dBackwardDataTeam(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy,
                            const Conv3dWeightsOn<T, ExecSpace>& w, const WindowGeometry& g,
                            const Tensor<T, ExecSpace>& dx, const Box& dx_box, const Box& dy_box,
                            const TeamTuning& tuning = {}) {
  constexpr int IB = 8;
  using Member = typename team::Policy<ExecSpace>::member_type;
  using Scratch = team::Scratch<ExecSpace, T>;
  const index_t samples = dx.block().localSamples();
  if (dx_box.empty() || samples == 0) return;
  const Conv3dIndexing ix = makeIndexing(g, dx, dy);
  const team::Tiling tiling(dx_box);
  const auto dyv = dy.view();
  const auto dxv = dx.view();
  const index_t in_ch = dx.block().channels(), out_ch = dy.block().channels();
  const int taps = ix.taps();
  // The dy cells a tile of kTile dx cells reads span at most this many cells per dimension.
  int win[3];
  for (int d = 0; d < 3; ++d)
    win[d] = (team::kTile[d] - 1 + (g.kernel[d] - 1) * g.dilation[d]) / g.stride[d] + 2;
  const index_t win_cells = index_t(win[0]) * win[1] * win[2],
                tile_cells = team::kTile[0] * team::kTile[1] * team::kTile[2];
  const index_t chunk = team::chunkChannels(out_ch, Scratch::shmem_size(IB * tile_cells),
                                            (win_cells + IB * taps) * sizeof(T));
  const std::size_t bytes = Scratch::shmem_size(chunk * win_cells) +
                            Scratch::shmem_size(IB * chunk * taps) +
                            Scratch::shmem_size(IB * tile_cells);
  const int level = team::scratchLevel(bytes);
  const index_t blocks = (in_ch + IB - 1) / IB;
  const index_t ylo[3] = {dy_box.min(0), dy_box.min(1), dy_box.min(2)};
  const index_t yhi[3] = {dy_box.max(0), dy_box.max(1), dy_box.max(2)};
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardData(team)",
      team::makePolicy(exec, samples * blocks * tiling.tiles(), tuning, bytes),
      KOKKOS_LAMBDA(const Member& m) {
        const index_t tile = m.league_rank() % tiling.tiles();
        const index_t i0 = (m.league_rank() / tiling.tiles()) % blocks * IB;
        const index_t n = m.league_rank() / (tiling.tiles() * blocks);
        const int in = int(in_ch - i0 < IB ? in_ch - i0 : IB);
        index_t q0[3], c_lo[3];
        int te[3], we[3];
        tiling.tile(tile, q0, te);
        for (int d = 0; d < 3; ++d) {
          // dy cells c with c s in [q + p - (k - 1) dil, q + p] for q in the tile.
          c_lo[d] = -floorDiv(-(q0[d] + ix.padding[d] - index_t(ix.kernel[d] - 1) * ix.dilation[d]),
                              ix.stride[d]);
          we[d] = int(floorDiv(q0[d] + te[d] - 1 + ix.padding[d], ix.stride[d]) - c_lo[d] + 1);
        }
        const int cells = te[0] * te[1] * te[2], wcells = we[0] * we[1] * we[2];
        Scratch ys(m.team_scratch(level), chunk * win_cells),
            ws(m.team_scratch(level), IB * chunk * taps);
        Scratch acc(m.team_scratch(level), IB * tile_cells);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, in * cells), [&](int e) { acc(e) = T(0); });
        for (index_t o0 = 0; o0 < out_ch; o0 += chunk) {
          const int cn = int(out_ch - o0 < chunk ? out_ch - o0 : chunk);
          m.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, cn * wcells), [&](int e) {
            const int o = e / wcells, l = e % wcells;
            const index_t c[3] = {c_lo[0] + l / (we[1] * we[2]), c_lo[1] + (l / we[2]) % we[1],
                                  c_lo[2] + l % we[2]};
            bool inside = true;
            for (int d = 0; d < 3; ++d)
              inside = inside && c[d] >= ylo[d] && c[d] < yhi[d];
            ys(e) = inside ? dyv(n, o0 + o, c[0] + ix.out_shift[0], c[1] + ix.out_shift[1],
                                 c[2] + ix.out_shift[2])
                           : T(0);
          });
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, IB * cn * taps), [&](int e) {
            const int i = e / (cn * taps), o = (e / taps) % cn, t = e % taps;
            const int kd = t / (ix.kernel[1] * ix.kernel[2]),
                      kh = (t / ix.kernel[2]) % ix.kernel[1], kw = t % ix.kernel[2];
            ws(e) = i < in ? w(o0 + o, i0 + i, kd, kh, kw) : T(0);
          });
          m.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, cells), [&](int cell) {
            const index_t q[3] = {q0[0] + cell / (te[1] * te[2]), q0[1] + (cell / te[2]) % te[1],
                                  q0[2] + cell % te[2]};
            T sum[IB] = {};
            for (int kd = 0; kd < ix.kernel[0]; ++kd) {
              const index_t nd = q[0] + ix.padding[0] - index_t(kd) * ix.dilation[0];
              if (nd % ix.stride[0] != 0) continue;
              for (int kh = 0; kh < ix.kernel[1]; ++kh) {
                const index_t nh = q[1] + ix.padding[1] - index_t(kh) * ix.dilation[1];
                if (nh % ix.stride[1] != 0) continue;
                for (int kw = 0; kw < ix.kernel[2]; ++kw) {
                  const index_t nw = q[2] + ix.padding[2] - index_t(kw) * ix.dilation[2];
                  if (nw % ix.stride[2] != 0) continue;
                  const index_t l =
                      ((nd / ix.stride[0] - c_lo[0]) * we[1] + nh / ix.stride[1] - c_lo[1]) *
                          we[2] +
                      nw / ix.stride[2] - c_lo[2];
                  const int t = (kd * ix.kernel[1] + kh) * ix.kernel[2] + kw;
                  for (int o = 0; o < cn; ++o) {
                    const T grad = ys(o * wcells + l);
                    for (int i = 0; i < IB; ++i)
                      sum[i] += ws((i * cn + o) * taps + t) * grad;
                  }
                }
              }
            }
            for (int i = 0; i < in; ++i)
              acc(i * cells + cell) += sum[i];
          });
        }
        m.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, in * cells), [&](int e) {
          const int i = e / cells, cell = e % cells;
          const int ld = cell / (te[1] * te[2]), lh = (cell / te[2]) % te[1], lw = cell % te[2];
          dxv(n, i0 + i, q0[0] + ld + ix.in_shift[0], q0[1] + lh + ix.in_shift[1],
              q0[2] + lw + ix.in_shift[2]) = acc(e);
        });
      });
}

// See conv3dBackwardFilter in kernels/Conv3d.hpp; the caller has run checkBackwardFilter.
template <class ExecSpace, class T>
void conv3dBackwardFilterTeam(const ExecSpace& exec, const Tensor<T, ExecSpace>& x,
                              const Tensor<T, ExecSpace>& dy, const WindowGeometry& g,
                              const Conv3dWeightsGradOn<T, ExecSpace>& dw,
                              const Conv3dBiasGradOn<T, ExecSpace>& db, const Box& out_box,
                              bool accumulate, const TeamTuning& tuning = {}) {
  constexpr int OB = 4, IB = 4;
  using Member = typename team::Policy<ExecSpace>::member_type;
  using Scratch = team::Scratch<ExecSpace, T>;
  using Accumulator = team::Scratch<ExecSpace, double>;
  using memory_space = typename ExecSpace::memory_space;
  const Conv3dIndexing ix = makeIndexing(g, x, dy);
  const team::Tiling tiling(out_box);
  const auto xv = x.view();
  const auto dyv = dy.view();
  const index_t samples = x.block().localSamples();
  const index_t in_ch = x.block().channels(), out_ch = dy.block().channels();
  const int taps = ix.taps();
  const index_t pairs = in_ch * taps, entries = out_ch * pairs + out_ch;
  const bool has_bias = db.extent(0) > 0;
  int win[3];
  for (int d = 0; d < 3; ++d)
    win[d] = (team::kTile[d] - 1) * g.stride[d] + (g.kernel[d] - 1) * g.dilation[d] + 1;
  const index_t win_cells = index_t(win[0]) * win[1] * win[2],
                tile_cells = team::kTile[0] * team::kTile[1] * team::kTile[2];
  const std::size_t bytes = Scratch::shmem_size(OB * tile_cells) +
                            Scratch::shmem_size(IB * win_cells) +
                            Accumulator::shmem_size(OB * IB * taps + OB);
  const int level = team::scratchLevel(bytes);
  const index_t oblocks = (out_ch + OB - 1) / OB, iblocks = (in_ch + IB - 1) / IB;
  const index_t tiles = out_box.empty() ? 0 : samples * tiling.tiles();
  // Enough teams to fill a GPU, never more splits than tiles.
  const index_t splits = std::max<index_t>(
      1, std::min<index_t>(tiles, (512 + oblocks * iblocks - 1) / (oblocks * iblocks)));
  Kokkos::View<double**, Kokkos::LayoutRight, memory_space> partial("halo3d::conv3d dw partials",
                                                                    splits, entries);
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardFilter(team)",
      team::makePolicy(exec, oblocks * iblocks * splits, tuning, bytes),
      KOKKOS_LAMBDA(const Member& m) {
        const index_t split = m.league_rank() % splits;
        const index_t i0 = (m.league_rank() / splits) % iblocks * IB;
        const index_t o0 = m.league_rank() / (splits * iblocks) * OB;
        const int on = int(out_ch - o0 < OB ? out_ch - o0 : OB),
                  in = int(in_ch - i0 < IB ? in_ch - i0 : IB);
        const bool bias_team = has_bias && i0 == 0;
        Scratch ds(m.team_scratch(level), OB * tile_cells),
            xs(m.team_scratch(level), IB * win_cells);
        Accumulator acc(m.team_scratch(level), OB * IB * taps + OB);
        const int n_acc = on * in * taps;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, n_acc + on), [&](int e) { acc(e) = 0.0; });
        for (index_t k = split; k < tiles; k += splits) {
          const index_t n = k / tiling.tiles();
          index_t c0[3];
          int te[3], we[3];
          tiling.tile(k % tiling.tiles(), c0, te);
          for (int d = 0; d < 3; ++d)
            we[d] = (te[d] - 1) * ix.stride[d] + (ix.kernel[d] - 1) * ix.dilation[d] + 1;
          const int cells = te[0] * te[1] * te[2], wcells = we[0] * we[1] * we[2];
          m.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, on * cells), [&](int e) {
            const int o = e / cells, cell = e % cells;
            ds(e) = dyv(n, o0 + o, c0[0] + cell / (te[1] * te[2]) + ix.out_shift[0],
                        c0[1] + (cell / te[2]) % te[1] + ix.out_shift[1],
                        c0[2] + cell % te[2] + ix.out_shift[2]);
          });
          Kokkos::parallel_for(Kokkos::TeamThreadRange(m, in * wcells), [&](int e) {
            const int i = e / wcells, l = e % wcells;
            xs(e) = xv(n, i0 + i, ix.inputOf(0, c0[0], 0) + l / (we[1] * we[2]) + ix.in_shift[0],
                       ix.inputOf(1, c0[1], 0) + (l / we[2]) % we[1] + ix.in_shift[1],
                       ix.inputOf(2, c0[2], 0) + l % we[2] + ix.in_shift[2]);
          });
          m.team_barrier();
          Kokkos::parallel_for(
              Kokkos::TeamThreadRange(m, n_acc + (bias_team ? on : 0)), [&](int e) {
                double sum = 0;
                if (e >= n_acc) {
                  for (int cell = 0; cell < cells; ++cell)
                    sum += double(ds((e - n_acc) * cells + cell));
                } else {
                  const int o = e / (in * taps), i = (e / taps) % in, t = e % taps;
                  const int kd = t / (ix.kernel[1] * ix.kernel[2]),
                            kh = (t / ix.kernel[2]) % ix.kernel[1], kw = t % ix.kernel[2];
                  for (int cell = 0; cell < cells; ++cell) {
                    const int ld = cell / (te[1] * te[2]), lh = (cell / te[2]) % te[1],
                              lw = cell % te[2];
                    sum += double(ds(o * cells + cell)) *
                           double(xs(i * wcells +
                                     ((ld * ix.stride[0] + kd * ix.dilation[0]) * we[1] +
                                      lh * ix.stride[1] + kh * ix.dilation[1]) *
                                         we[2] +
                                     lw * ix.stride[2] + kw * ix.dilation[2]));
                  }
                }
                acc(e) += sum;
              });
        }
        m.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(m, n_acc + (bias_team ? on : 0)), [&](int e) {
          if (e >= n_acc) {
            partial(split, out_ch * pairs + o0 + e - n_acc) = acc(e);
          } else {
            const int o = e / (in * taps), i = (e / taps) % in, t = e % taps;
            partial(split, (o0 + o) * pairs + (i0 + i) * taps + t) = acc(e);
          }
        });
      });
  Kokkos::parallel_for(
      "halo3d::conv3dBackwardFilter(team sum)",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(
          exec, 0, has_bias ? entries : out_ch * pairs),
      KOKKOS_LAMBDA(index_t e) {
        double sum = 0;
        for (index_t s = 0; s < splits; ++s)
          sum += partial(s, e);
        if (e < out_ch * pairs) {
          const index_t o = e / pairs, i = (e / taps) % in_ch;
          const int t = int(e % taps);
          const int kd = t / (ix.kernel[1] * ix.kernel[2]), kh = (t / ix.kernel[2]) % ix.kernel[1],
                    kw = t % ix.kernel[2];
          dw(o, i, kd, kh, kw) = accumulate ? T(double(dw(o, i, kd, kh, kw)) + sum) : T(sum);
        } else {
          db(e - out_ch * pairs) = accumulate ? T(double(db(e - out_ch * pairs)) + sum) : T(sum);
        }
      });
}

}  // namespace halo3d::kernels::impl
