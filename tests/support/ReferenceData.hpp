#pragma once
// Reading the PyTorch reference data (float64 HDF5 files, see tests/reference/README.md) in tests.
//
// Files are looked up in $HALO3D_REFERENCE_DIR, then ../shared/reference beside the repository,
// then the copy in tests/reference. A missing file is an error, never a skipped test.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "halo3d/core/Types.hpp"

namespace halo3d::testing {

// The path of reference file `name` (e.g. "ops.h5"). Throws if no directory holds it.
std::string referencePath(const std::string& name);

// A dataset read as doubles, with its shape (C order).
struct Array {
  std::vector<index_t> shape;
  std::vector<double> data;
  std::size_t size() const { return data.size(); }
  index_t extent(int k) const { return shape.at(std::size_t(k)); }
};

// Read-only HDF5 file. Throws halo3d::Error naming the file and object on any failure.
class H5File {
 public:
  explicit H5File(const std::string& path);
  ~H5File();
  H5File(const H5File&) = delete;
  H5File& operator=(const H5File&) = delete;

  const std::string& path() const { return _path; }
  bool exists(const std::string& object) const;
  // Names of the members of a group, numeric names in numeric order ("0", "1", ..., "10").
  std::vector<std::string> children(const std::string& group) const;
  // Any numeric dataset (float, double, integer) converted to double.
  Array read(const std::string& dataset) const;
  // A string attribute of an object ("/" for the file).
  std::string attribute(const std::string& object, const std::string& name) const;
  nlohmann::json jsonAttribute(const std::string& object, const std::string& name) const {
    return nlohmann::json::parse(attribute(object, name));
  }

 private:
  std::string _path;
  long long _id = -1;
};

}  // namespace halo3d::testing
