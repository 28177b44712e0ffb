#include "halo3d/nn/StateDict.hpp"

#include <sstream>

#include "halo3d/core/Error.hpp"
#include "halo3d/io/Hdf5.hpp"

namespace halo3d::nn {

StateDict exportStateDict(const ParameterStore& store) {
  StateDict dict;
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), store.values());
  for (const Parameter* p : store.all()) {
    std::vector<real> values(host.data() + p->offset(), host.data() + p->offset() + p->size());
    dict[p->name()] = HostArray(p->shape(), std::move(values));
  }
  for (const auto& [name, value] : store.counters())
    dict[name] = HostArray({}, std::vector<std::int64_t>{value});
  return dict;
}

void importStateDict(ParameterStore& store, const StateDict& dict, const std::string& source) {
  std::ostringstream problems;
  int bad = 0;
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), store.values());
  for (Parameter* p : store.all()) {
    const auto it = dict.find(p->name());
    if (it == dict.end()) {
      problems << "\n  missing key '" << p->name() << "' (shape " << concat(p->shape()) << ")";
      ++bad;
      continue;
    }
    const HostArray& a = it->second;
    if (a.shape != p->shape()) {
      problems << "\n  key '" << p->name() << "' has shape " << concat(a.shape)
               << ", the model needs " << concat(p->shape());
      ++bad;
      continue;
    }
    real* out = host.data() + p->offset();
    std::visit(
        [&](const auto& v) {
          for (std::size_t i = 0; i < v.size(); ++i)
            out[i] = real(v[i]);
        },
        a.values);
  }
  require<InputError>(bad == 0, "weights from ", source, " do not fit the model (", bad, " problem",
                      bad == 1 ? "" : "s", "):", problems.str());
  Kokkos::deep_copy(store.values(), host);
  for (auto& [name, value] : store.counters()) {
    (void)value;
    const auto it = dict.find(name);
    if (it != dict.end() && it->second.elements() == 1)
      std::visit([&](const auto& v) { store.counter(name) = std::int64_t(v[0]); },
                 it->second.values);
  }
}

namespace {
herr_t collectDatasets(hid_t group, const char* name, const H5L_info_t*, void* out) {
  H5O_info_t info;
  if (H5Oget_info_by_name(group, name, &info, H5P_DEFAULT) >= 0 && info.type == H5O_TYPE_DATASET)
    static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}
}  // namespace

StateDict readStateDictFile(const std::string& path, const std::string& group) {
  auto lock = h5::lock();
  h5::QuietErrors quiet;
  h5::Id file = h5::openFileSerial(path);
  h5::Id g = h5::check(H5Gopen2(file, group.c_str(), H5P_DEFAULT), "weights file '", path,
                       "' has no group '", group, "'");
  std::vector<std::string> names;
  H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, collectDatasets, &names);
  StateDict dict;
  for (const std::string& name : names) {
    h5::Id d = h5::openDataset(g, path, group + "/" + name);
    std::vector<index_t> shape = h5::shapeOf(d);
    index_t n = 1;
    for (index_t e : shape)
      n *= e;
    const ElementType t = h5::elementTypeOf(d, path, group + "/" + name);
    if (isInteger(t)) {
      std::vector<std::int64_t> v(static_cast<std::size_t>(n));
      h5::checkStatus(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
                      "reading '", path, "' dataset '", group, "/", name, "'");
      dict[name] = HostArray(shape, std::move(v));
    } else {
      std::vector<double> v(static_cast<std::size_t>(n));
      h5::checkStatus(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
                      "reading '", path, "' dataset '", group, "/", name, "'");
      dict[name] = HostArray(shape, std::move(v));
    }
  }
  return dict;
}

std::pair<std::string, std::string> splitWeightsSpec(const std::string& spec) {
  const std::size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon + 1 >= spec.size() || spec[colon + 1] != '/')
    return {spec, "/"};
  return {spec.substr(0, colon), spec.substr(colon + 1)};
}

}  // namespace halo3d::nn
