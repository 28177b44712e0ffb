#include "support/ReferenceData.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "halo3d/core/Error.hpp"

namespace halo3d::testing {

namespace {

bool fileExists(const std::string& p) {
  return std::ifstream(p).good();
}

herr_t collectName(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

bool numericLess(const std::string& a, const std::string& b) {
  const bool na = !a.empty() && std::all_of(a.begin(), a.end(), ::isdigit);
  const bool nb = !b.empty() && std::all_of(b.begin(), b.end(), ::isdigit);
  if (na && nb) return std::stol(a) < std::stol(b);
  return a < b;
}

}  // namespace

std::string referencePath(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("HALO3D_REFERENCE_DIR")) dirs.push_back(env);
  dirs.push_back(std::string(HALO3D_SOURCE_DIR) + "/../shared/reference");
  dirs.push_back(std::string(HALO3D_SOURCE_DIR) + "/tests/reference");
  for (const auto& d : dirs)
    if (fileExists(d + "/" + name)) return d + "/" + name;
  throw Error(concat("reference file '", name, "' not found in $HALO3D_REFERENCE_DIR, ",
                     dirs[dirs.size() - 2], " or ", dirs.back()));
}

H5File::H5File(const std::string& path) : _path(path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions below, not stderr noise
  _id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  require(_id >= 0, "cannot open HDF5 file '", path, "'");
}

H5File::~H5File() {
  if (_id >= 0) H5Fclose(hid_t(_id));
}

bool H5File::exists(const std::string& object) const {
  // Walk the path so that a missing parent group is 'absent', not an error.
  std::string prefix;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    const std::size_t next = object.find('/', pos + 1);
    prefix = object.substr(0, next);
    if (!prefix.empty() && prefix != "/" && H5Lexists(hid_t(_id), prefix.c_str(), H5P_DEFAULT) <= 0)
      return false;
    pos = next;
  }
  return true;
}

std::vector<std::string> H5File::children(const std::string& group) const {
  std::vector<std::string> names;
  hid_t g = H5Gopen2(hid_t(_id), group.c_str(), H5P_DEFAULT);
  require(g >= 0, _path, ": no group '", group, "'");
  H5Literate(g, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, collectName, &names);
  H5Gclose(g);
  std::sort(names.begin(), names.end(), numericLess);
  return names;
}

Array H5File::read(const std::string& dataset) const {
  hid_t d = H5Dopen2(hid_t(_id), dataset.c_str(), H5P_DEFAULT);
  require(d >= 0, _path, ": no dataset '", dataset, "'");
  hid_t space = H5Dget_space(d);
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(std::size_t(std::max(rank, 0)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  Array a;
  std::size_t n = 1;
  for (hsize_t e : dims) {
    a.shape.push_back(index_t(e));
    n *= std::size_t(e);
  }
  a.data.resize(n);
  const herr_t status = H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.data.data());
  H5Sclose(space);
  H5Dclose(d);
  require(status >= 0, _path, ": reading dataset '", dataset, "' as double failed");
  return a;
}

std::string H5File::attribute(const std::string& object, const std::string& name) const {
  hid_t attr = H5Aopen_by_name(hid_t(_id), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  require(attr >= 0, _path, ": no attribute '", name, "' on '", object, "'");
  hid_t type = H5Aget_type(attr);
  std::string value;
  if (H5Tis_variable_str(type) > 0) {
    char* text = nullptr;
    hid_t mem = H5Tcopy(H5T_C_S1);
    H5Tset_size(mem, H5T_VARIABLE);
    H5Tset_cset(mem, H5Tget_cset(type));
    if (H5Aread(attr, mem, &text) >= 0 && text) value = text;
    H5free_memory(text);
    H5Tclose(mem);
  } else {
    const std::size_t size = H5Tget_size(type);
    std::string buf(size, '\0');
    H5Aread(attr, type, buf.data());
    value = buf.c_str();
  }
  H5Tclose(type);
  H5Aclose(attr);
  return value;
}

}  // namespace halo3d::testing
