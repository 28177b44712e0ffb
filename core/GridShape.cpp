#include "halo3d/core/GridShape.hpp"

#include <cctype>
#include <vector>

#include "halo3d/core/Error.hpp"

namespace halo3d {

GridShape::GridShape(int n, int d, int h, int w) : _n(n), _d(d), _h(h), _w(w) {
  require<InputError>(n >= 1 && d >= 1 && h >= 1 && w >= 1,
                      "process grid factors must all be >= 1, got ", n, "x", d, "x", h, "x", w);
}

GridShape GridShape::parse(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return InputError(concat("malformed process grid '", std::string(text),
                             "': expected NxDxHxW with four positive integers (e.g. 1x2x2x1); ",
                             why));
  };
  std::vector<long> parts;
  std::size_t i = 0;
  while (i <= text.size()) {
    std::size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])))
      ++j;
    if (j == i) throw bad(concat("expected a number at position ", i));
    if (j - i > 6) throw bad("factor too large");
    parts.push_back(std::stol(std::string(text.substr(i, j - i))));
    if (j == text.size()) break;
    if (text[j] != 'x' && text[j] != 'X')
      throw bad(concat("unexpected '", text[j], "' at position ", j));
    i = j + 1;
  }
  if (parts.size() != 4) throw bad(concat("found ", parts.size(), " factors"));
  for (long p : parts)
    if (p < 1) throw bad("factors must be >= 1");
  return GridShape(int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3]));
}

std::string GridShape::str() const {
  return concat(_n, "x", _d, "x", _h, "x", _w);
}

GridCoords GridShape::coordsOf(int rank) const {
  require<InputError>(rank >= 0 && rank < size(), "rank ", rank, " outside grid ", str());
  GridCoords c;
  c.w = rank % _w;
  rank /= _w;
  c.h = rank % _h;
  rank /= _h;
  c.d = rank % _d;
  c.n = rank / _d;
  return c;
}

int GridShape::rankOf(const GridCoords& c) const {
  return ((c.n * _d + c.d) * _h + c.h) * _w + c.w;
}

int GridShape::neighbourSpatialRank(const std::array<int, 3>& spatial,
                                    const std::array<int, 3>& offset) const {
  const std::array<int, 3> dims = this->spatial();
  std::array<int, 3> q;
  for (int k = 0; k < 3; ++k) {
    q[k] = spatial[k] + offset[k];
    if (q[k] < 0 || q[k] >= dims[k]) return -1;
  }
  return spatialRankOf(q);
}

std::vector<GridShape> allGrids(int ranks) {
  std::vector<GridShape> grids;
  for (int n = 1; n <= ranks; ++n)
    for (int d = 1; n * d <= ranks; ++d)
      for (int h = 1; n * d * h <= ranks; ++h)
        if (ranks % (n * d * h) == 0) grids.emplace_back(n, d, h, ranks / (n * d * h));
  return grids;
}

}  // namespace halo3d
