#pragma once
// The in-memory data store of one rank: its owned tiles of the samples it keeps (see StorePlan for
// which), after the input transform, with the sample's targets or label tile. Host memory, no
// Kokkos, so that the loader's background thread can fill and read it. A tile keeps its input in
// the batches' element type (DataLoaderOptions::input): bf16 runs keep half the bytes, and the
// values are the batch's, rounded once.

#include <cstdint>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/Types.hpp"

namespace halo3d {

struct StoredTile {
  std::vector<float> input;          // (C, d, h, w) of the owned block, contiguous; or
  std::vector<bf16> input_bf16;      // the same in bf16 (exactly one of the two is filled)
  std::vector<std::int32_t> labels;  // (d, h, w) for U-Net, empty otherwise
  std::vector<float> targets;        // regression targets for CosmoFlow, empty otherwise

  // The input of element type T (float or bf16).
  template <class T>
  std::vector<T>& inputAs() {
    if constexpr (std::is_same<T, bf16>::value)
      return input_bf16;
    else
      return input;
  }
  template <class T>
  const std::vector<T>& inputAs() const {
    return const_cast<StoredTile*>(this)->inputAs<T>();
  }

  std::size_t bytes() const {
    return input.size() * sizeof(float) + input_bf16.size() * sizeof(bf16) +
           labels.size() * sizeof(std::int32_t) + targets.size() * sizeof(float);
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
