#pragma once
// Half-open index spaces. IndexSpace<Rank> is [min, max) in every dimension; Box is the 3D spatial
// case used for owned blocks, ghost regions and kernel sub-boxes. An index space turns straight
// into an MDRangePolicy (see makePolicy) or a subview range, as in Cabana::Grid.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <ostream>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/Types.hpp"

namespace halo3d {

template <int Rank>
class IndexSpace {
 public:
  static constexpr int rank = Rank;
  using index_type = index_t;
  using point_type = std::array<index_t, Rank>;

  // The empty space at the origin.
  IndexSpace() {
    _min.fill(0);
    _max.fill(0);
  }

  // Requires min[d] <= max[d] for every d.
  IndexSpace(const point_type& min, const point_type& max) : _min(min), _max(max) {
    for (int d = 0; d < Rank; ++d)
      require<ShapeError>(min[d] <= max[d], "IndexSpace: min ", min, " exceeds max ", max,
                          " in dimension ", d);
  }

  // [0, extents) ; requires extents >= 0.
  static IndexSpace fromExtents(const point_type& extents) {
    point_type zero;
    zero.fill(0);
    return IndexSpace(zero, extents);
  }

  index_t min(int d) const { return _min[d]; }
  index_t max(int d) const { return _max[d]; }
  const point_type& min() const { return _min; }
  const point_type& max() const { return _max; }
  index_t extent(int d) const { return _max[d] - _min[d]; }
  point_type extents() const {
    point_type e;
    for (int d = 0; d < Rank; ++d)
      e[d] = extent(d);
    return e;
  }
  index_t size() const {
    index_t s = 1;
    for (int d = 0; d < Rank; ++d)
      s *= extent(d);
    return s;
  }
  bool empty() const { return size() == 0; }

  bool contains(const point_type& p) const {
    for (int d = 0; d < Rank; ++d)
      if (p[d] < _min[d] || p[d] >= _max[d]) return false;
    return true;
  }
  // An empty space is contained everywhere.
  bool contains(const IndexSpace& other) const {
    if (other.empty()) return true;
    for (int d = 0; d < Rank; ++d)
      if (other._min[d] < _min[d] || other._max[d] > _max[d]) return false;
    return true;
  }

  // The same space moved by `offset`.
  IndexSpace shifted(const point_type& offset) const {
    IndexSpace s = *this;
    for (int d = 0; d < Rank; ++d) {
      s._min[d] += offset[d];
      s._max[d] += offset[d];
    }
    return s;
  }
  // The space grown by lo[d] below and hi[d] above (negative values shrink it).
  IndexSpace grown(const point_type& lo, const point_type& hi) const {
    point_type mn, mx;
    for (int d = 0; d < Rank; ++d) {
      mn[d] = _min[d] - lo[d];
      mx[d] = std::max(mn[d], _max[d] + hi[d]);
    }
    return IndexSpace(mn, mx);
  }
  // Replaces dimension d by [lo, hi).
  IndexSpace withRange(int d, index_t lo, index_t hi) const {
    point_type mn = _min, mx = _max;
    mn[d] = lo;
    mx[d] = hi;
    return IndexSpace(mn, mx);
  }

  friend bool operator==(const IndexSpace& a, const IndexSpace& b) {
    return a._min == b._min && a._max == b._max;
  }
  friend bool operator!=(const IndexSpace& a, const IndexSpace& b) { return !(a == b); }

  // The common part of a and b; empty (at a's min) if they do not overlap.
  friend IndexSpace intersect(const IndexSpace& a, const IndexSpace& b) {
    point_type mn, mx;
    bool empty = false;
    for (int d = 0; d < Rank; ++d) {
      mn[d] = std::max(a._min[d], b._min[d]);
      mx[d] = std::min(a._max[d], b._max[d]);
      if (mx[d] <= mn[d]) empty = true;
    }
    if (empty) return IndexSpace(a._min, a._min);
    return IndexSpace(mn, mx);
  }

  friend std::ostream& operator<<(std::ostream& os, const IndexSpace& s) {
    os << '[';
    for (int d = 0; d < Rank; ++d)
      os << (d ? ", " : "") << s._min[d] << ':' << s._max[d];
    return os << ')';
  }

 private:
  point_type _min, _max;
};

using Box = IndexSpace<3>;

// An MDRangePolicy over `space` on `exec`. Requires a non-empty space (callers skip empty boxes).
template <class ExecSpace, int Rank>
Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<Rank>, Kokkos::IndexType<index_t>> makePolicy(
    const ExecSpace& exec, const IndexSpace<Rank>& space) {
  Kokkos::Array<index_t, Rank> lo, hi;
  for (int d = 0; d < Rank; ++d) {
    lo[d] = space.min(d);
    hi[d] = space.max(d);
  }
  return Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<Rank>, Kokkos::IndexType<index_t>>(exec, lo,
                                                                                          hi);
}

// (min, max) of dimension d as a subview range.
template <int Rank>
Kokkos::pair<index_t, index_t> rangeOf(const IndexSpace<Rank>& space, int d) {
  return Kokkos::pair<index_t, index_t>(space.min(d), space.max(d));
}

}  // namespace halo3d
