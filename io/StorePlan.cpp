#include "halo3d/io/StorePlan.hpp"

#include "halo3d/core/Error.hpp"

namespace halo3d {

StorePlan::StorePlan(index_t samples, int groups, index_t capacity)
    : _capacity(capacity), _holder(std::size_t(samples), -1), _kept(std::size_t(groups), 0) {
  require<InputError>(capacity >= 0, "data store capacity ", capacity, " must be >= 0");
}

index_t StorePlan::capacityFor(std::size_t budget_bytes, std::size_t tile_bytes) {
  return tile_bytes == 0 ? 0 : index_t(budget_bytes / tile_bytes);
}

std::vector<StorePlan::Source> StorePlan::plan(const std::vector<index_t>& ids,
                                               const std::vector<int>& reader_group) {
  require<InputError>(ids.size() == reader_group.size(), "StorePlan::plan: ", ids.size(),
                      " ids but ", reader_group.size(), " groups");
  std::vector<Source> out(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const std::size_t id = std::size_t(ids[k]);
    const int g = reader_group[k];
    if (_holder.at(id) >= 0) {
      out[k].holder = _holder[id];
    } else if (_kept.at(std::size_t(g)) < _capacity) {
      out[k].insert = true;
      _holder[id] = g;
      ++_kept[std::size_t(g)];
    }
  }
  return out;
}

}  // namespace halo3d
