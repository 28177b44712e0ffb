#include "halo3d/io/Hdf5.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <system_error>
#include <utility>

namespace halo3d::h5 {

std::recursive_mutex& mutex() {
  static std::recursive_mutex m;
  return m;
}

Id& Id::operator=(Id&& o) noexcept {
  if (this != &o) {
    close();
    _id = o._id;
    o._id = H5I_INVALID_HID;
  }
  return *this;
}

namespace {

// The H5?close of each kind of identifier; any other kind is released with H5Idec_ref.
constexpr struct {
  H5I_type_t type;
  herr_t (*close)(hid_t);
} kClosers[] = {{H5I_FILE, H5Fclose},       {H5I_GROUP, H5Gclose},    {H5I_DATASET, H5Dclose},
                {H5I_DATASPACE, H5Sclose},  {H5I_DATATYPE, H5Tclose}, {H5I_ATTR, H5Aclose},
                {H5I_GENPROP_LST, H5Pclose}};

}  // namespace

bool Id::close() noexcept {
  if (_id < 0) return true;
  const auto guard = lock();
  const H5I_type_t type = H5Iget_type(_id);
  herr_t status = 0;
  const auto closer = std::find_if(std::begin(kClosers), std::end(kClosers),
                                   [&](const auto& c) { return c.type == type; });
  if (closer != std::end(kClosers))
    status = closer->close(_id);
  else
    status = H5Idec_ref(_id) < 0 ? -1 : 0;
  _id = H5I_INVALID_HID;
  return status >= 0;
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &_func, &_data);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() {
  H5Eset_auto2(H5E_DEFAULT, _func, _data);
}

namespace {

herr_t collectDescription(unsigned n, const H5E_error2_t* e, void* out) {
  auto* list = static_cast<std::vector<std::string>*>(out);
  if (e->desc && *e->desc) list->emplace_back(e->desc);
  return 0;
}

}  // namespace

std::string lastError() {
  std::vector<std::string> descriptions;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collectDescription, &descriptions);
  H5Eclear2(H5E_DEFAULT);
  if (descriptions.empty()) return "";
  // The outermost entry says what failed, the innermost why.
  if (descriptions.size() == 1) return descriptions.front();
  return descriptions.front() + " (" + descriptions.back() + ")";
}

namespace {

void requireRegularFile(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    throw IoError(concat("cannot open '", path, "': no such file"));
  if (!std::filesystem::is_regular_file(status))
    throw IoError(concat("cannot open '", path, "': not a regular file"));
}

}  // namespace

Id openFileSerial(const std::string& path) {
  requireRegularFile(path);
  const auto guard = lock();
  QuietErrors quiet;
  return check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open '", path,
               "' as an HDF5 file (corrupt or truncated?)");
}

Id openFileParallel(const std::string& path, MPI_Comm comm) {
  const auto guard = lock();
  QuietErrors quiet;
  Id fapl = check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  checkStatus(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), "H5Pset_fapl_mpio for '", path, "'");
  return check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), "cannot open '", path,
               "' with MPI-IO (corrupt, truncated or removed?)");
}

bool isDataset(hid_t file, const std::string& name) {
  const auto guard = lock();
  QuietErrors quiet;
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) return false;
  const hid_t object = H5Oopen(file, name.c_str(), H5P_DEFAULT);
  if (object < 0) return false;
  const bool dataset = H5Iget_type(object) == H5I_DATASET;
  H5Oclose(object);
  return dataset;
}

Id openDataset(hid_t file, const std::string& path, const std::string& name) {
  const auto guard = lock();
  if (!isDataset(file, name))
    throw IoError(concat("file '", path, "' has no dataset '", name, "'"));
  QuietErrors quiet;
  return check(H5Dopen2(file, name.c_str(), H5P_DEFAULT), "cannot open dataset '", name,
               "' of file '", path, "'");
}

std::vector<index_t> shapeOf(hid_t dataset) {
  const auto guard = lock();
  Id space = check(H5Dget_space(dataset), "H5Dget_space");
  const int rank = H5Sget_simple_extent_ndims(space);
  checkStatus(rank, "H5Sget_simple_extent_ndims");
  std::vector<hsize_t> dims(std::size_t(rank), 0);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return std::vector<index_t>(dims.begin(), dims.end());
}

ElementType elementTypeOf(hid_t dataset, const std::string& path, const std::string& name) {
  const auto guard = lock();
  Id type = check(H5Dget_type(dataset), "H5Dget_type");
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  if (cls == H5T_FLOAT) {
    if (size == 4) return ElementType::Float32;
    if (size == 8) return ElementType::Float64;
  } else if (cls == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
    switch (size) {
      case 1:
        return is_signed ? ElementType::Int8 : ElementType::UInt8;
      case 2:
        return is_signed ? ElementType::Int16 : ElementType::UInt16;
      case 4:
        return is_signed ? ElementType::Int32 : ElementType::UInt32;
      case 8:
        return is_signed ? ElementType::Int64 : ElementType::UInt64;
      default:
        break;
    }
  }
  throw IoError(concat("dataset '", name, "' of file '", path,
                       "' has a non-numeric element type (class ", int(cls), ", ", size,
                       " bytes)"));
}

hid_t nativeType(ElementType t) {
  // The H5T_NATIVE_* identifiers are set when HDF5 starts: no constant table can hold them.
  const std::pair<ElementType, hid_t> types[] = {
      {ElementType::Int8, H5T_NATIVE_INT8},     {ElementType::UInt8, H5T_NATIVE_UINT8},
      {ElementType::Int16, H5T_NATIVE_INT16},   {ElementType::UInt16, H5T_NATIVE_UINT16},
      {ElementType::Int32, H5T_NATIVE_INT32},   {ElementType::UInt32, H5T_NATIVE_UINT32},
      {ElementType::Int64, H5T_NATIVE_INT64},   {ElementType::UInt64, H5T_NATIVE_UINT64},
      {ElementType::Float32, H5T_NATIVE_FLOAT}, {ElementType::Float64, H5T_NATIVE_DOUBLE}};
  for (const auto& [type, native] : types)
    if (type == t) return native;
  return H5I_INVALID_HID;
}

Id makeSpace(const std::vector<index_t>& extents) {
  const auto guard = lock();
  if (extents.empty()) return check(H5Screate(H5S_SCALAR), "H5Screate");
  const std::vector<hsize_t> dims(extents.begin(), extents.end());
  return check(H5Screate_simple(int(dims.size()), dims.data(), nullptr), "H5Screate_simple");
}

void selectBox(hid_t space, const std::vector<index_t>& start, const std::vector<index_t>& count) {
  const auto guard = lock();
  const std::vector<hsize_t> s(start.begin(), start.end()), c(count.begin(), count.end());
  checkStatus(H5Sselect_hyperslab(space, H5S_SELECT_SET, s.data(), nullptr, c.data(), nullptr),
              "H5Sselect_hyperslab");
}

void writeDataset(hid_t file, const std::string& path, const std::string& name,
                  const std::vector<index_t>& shape, ElementType type, const void* data) {
  Id space = makeSpace(shape);
  Id dset = check(H5Dcreate2(file, name.c_str(), nativeType(type), space, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT),
                  "cannot create dataset '", name, "' in '", path, "'");
  checkStatus(H5Dwrite(dset, nativeType(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
              "cannot write dataset '", name, "' of '", path, "'");
}

void writeFileAtomically(const std::string& path,
                         const std::function<void(hid_t, const std::string&)>& write) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  try {
    Id file = check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                    "cannot create '", tmp, "'");
    write(file.get(), tmp);
    require<IoError>(file.close(), "cannot close '", tmp, "'");
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw IoError(concat("cannot rename '", tmp, "' to '", path, "': ", ec.message()));
  }
}

}  // namespace halo3d::h5
