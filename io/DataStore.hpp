#pragma once
// The in-memory data store of one rank: its owned tiles of the samples it keeps (see StorePlan for
// which), after the input transform, with the sample's targets or label tile. Host memory, no
// Kokkos, so that the loader's background thread can fill and read it.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "halo3d/core/Types.hpp"

namespace halo3d {

struct StoredTile {
  std::vector<float> input;          // (C, d, h, w) of the owned block, contiguous
  std::vector<std::int32_t> labels;  // (d, h, w) for U-Net, empty otherwise
  std::vector<float> targets;        // regression targets for CosmoFlow, empty otherwise

  std::size_t bytes() const {
    return input.size() * sizeof(float) + labels.size() * sizeof(std::int32_t) +
           targets.size() * sizeof(float);
  }
};

class DataStore {
 public:
  // Keeps `tile` for sample `id` (replacing nothing: a sample is inserted once).
  void insert(index_t id, StoredTile tile) {
    _bytes += tile.bytes();
    _tiles.emplace(id, std::move(tile));
  }
  // The tile of `id`, or null.
  const StoredTile* find(index_t id) const {
    const auto it = _tiles.find(id);
    return it == _tiles.end() ? nullptr : &it->second;
  }
  std::size_t size() const { return _tiles.size(); }
  std::size_t bytes() const { return _bytes; }

 private:
  std::unordered_map<index_t, StoredTile> _tiles;
  std::size_t _bytes = 0;
};

}  // namespace halo3d
