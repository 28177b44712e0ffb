#include "halo3d/comm/impl/HaloPlan.hpp"

#include "halo3d/core/Error.hpp"

namespace halo3d::impl {

RunLayout runsOf(const Shape5& alloc, const Box& region, std::size_t max_runs) {
  const std::array<index_t, 5> lo{0, 0, region.min(0), region.min(1), region.min(2)};
  const std::array<index_t, 5> ext{alloc[0], alloc[1], region.extent(0), region.extent(1),
                                   region.extent(2)};
  RunLayout r;
  if (region.empty()) return r;
  // Walk from the contiguous W axis outwards while the region spans the whole axis: those axes fold
  // into one run, and so does the first partial axis. The axes outside it enumerate the runs.
  int k = 4;
  r.length = 1;
  for (; k >= 0; --k) {
    r.length *= std::size_t(ext[k]);
    if (ext[k] != alloc[k]) break;
  }
  std::size_t count = 1;
  for (int j = 0; j < k; ++j)
    count *= std::size_t(ext[j]);
  if (count > max_runs) return r;
  r.starts.reserve(count);
  std::array<index_t, 5> idx = lo;
  for (std::size_t n = 0; n < count; ++n) {
    std::size_t linear = 0;
    for (int j = 0; j < 5; ++j)
      linear = linear * std::size_t(alloc[j]) + std::size_t(idx[j]);
    r.starts.push_back(linear);
    for (int j = k - 1; j >= 0; --j) {  // odometer over the outer axes
      if (++idx[j] < lo[j] + ext[j]) break;
      idx[j] = lo[j];
    }
  }
  return r;
}

RunLayout directRuns(const Shape5& alloc, const Box& stretched, std::size_t element_bytes,
                     std::size_t min_run_bytes, std::size_t max_runs) {
  RunLayout runs = runsOf(alloc, stretched, max_runs);
  if (runs.starts.empty() || runs.length * element_bytes < min_run_bytes) return RunLayout{};
  return runs;
}

std::vector<WireMessage> wireMessages(const HaloPlan& plan, bool gather, const DirectRule& rule,
                                      std::size_t element_bytes) {
  const Shape5 a = plan.block.allocationExtents();
  const std::size_t per_cell = std::size_t(a[0] * a[1]) * element_bytes;
  std::vector<WireMessage> out;
  for (const HaloMessage& m : plan.messages) {
    const Box& exact = gather ? m.owned_side : m.ghost_side;
    if (exact.empty()) continue;
    WireMessage w;
    w.offset = m.offset;
    const RunLayout runs = gather && rule.enabled
                               ? directRuns(a, m.owned_side_stretched, element_bytes,
                                            rule.min_run_bytes, rule.max_runs)
                               : RunLayout{};
    w.direct = !runs.starts.empty();
    w.bytes = per_cell * std::size_t(w.direct ? m.owned_side_stretched.size() : exact.size());
    w.messages =
        w.direct && !(rule.derived_datatypes && runs.starts.size() > 1) ? runs.starts.size() : 1;
    out.push_back(w);
  }
  return out;
}

namespace {

// Along one dimension: [ghost lo | owned | ghost hi] in local indices, with lo/hi widths and owned
// extent e. Offset -1 faces the lo side, +1 the hi side, 0 the owned span.
std::array<index_t, 2> ownedSide(int o, index_t lo, index_t hi, index_t e) {
  if (o < 0) return {lo, lo + hi};  // my first `hi` cells feed the lo neighbour's hi ghosts
  if (o > 0)
    return {
        e, lo + e};  // my last `lo` cells, [lo + e - lo, lo + e), feed the hi neighbour's lo ghosts
  return {lo, lo + e};
}
std::array<index_t, 2> ghostSide(int o, index_t lo, index_t hi, index_t e) {
  if (o < 0) return {0, lo};
  if (o > 0) return {lo + e, lo + e + hi};
  return {lo, lo + e};
}

}  // namespace

HaloPlan planHaloExchange(const TensorBlock& block, const GridShape& grid,
                          const std::array<int, 3>& spatial) {
  HaloPlan plan;
  plan.block = block;
  const HaloWidths& h = block.halo();
  const Box owned = block.localOwned();
  const Box all = block.localAll();
  const std::array<int, 3> parts = grid.spatial();
  for (int slot = 0; slot < kNeighbourSlots; ++slot) {
    if (slot == kSelfSlot) continue;
    const std::array<int, 3> o = neighbourOffset(slot);
    if (grid.neighbourSpatialRank(spatial, o) < 0) continue;
    HaloMessage m;
    m.slot = slot;
    m.offset = o;
    m.owned_side = m.ghost_side = m.owned_side_stretched = m.ghost_side_stretched = owned;
    for (int d = 0; d < 3; ++d) {
      const index_t e = owned.extent(d);
      const auto os = ownedSide(o[d], h.lo[d], h.hi[d], e);
      const auto gs = ghostSide(o[d], h.lo[d], h.hi[d], e);
      m.owned_side = m.owned_side.withRange(d, os[0], os[1]);
      m.ghost_side = m.ghost_side.withRange(d, gs[0], gs[1]);
      const bool stretch = parts[d] == 1;  // then o[d] == 0 and every ghost along d is physical
      m.owned_side_stretched = m.owned_side_stretched.withRange(d, stretch ? all.min(d) : os[0],
                                                                stretch ? all.max(d) : os[1]);
      m.ghost_side_stretched = m.ghost_side_stretched.withRange(d, stretch ? all.min(d) : gs[0],
                                                                stretch ? all.max(d) : gs[1]);
    }
    if (m.owned_side.empty() && m.ghost_side.empty()) continue;
    require<ShapeError>(owned.contains(m.owned_side), "halo exchange: the ", m.owned_side.extents(),
                        " cells feeding neighbour offset ", o, " do not fit the owned block ",
                        block.owned().extents(), " (halo ", h,
                        "): an owned extent is smaller than the halo width");
    plan.messages.push_back(m);
  }
  return plan;
}

}  // namespace halo3d::impl
