#include "halo3d/io/CheckpointFile.hpp"

#include <array>
#include <cstring>

#include "halo3d/io/Hdf5.hpp"

namespace halo3d {

namespace {

constexpr const char* kFormat = "halo3d-checkpoint";
constexpr std::int64_t kVersion = 1;
constexpr const char* kMarker = "halo3d_crc32";
constexpr const char* kArraySections[] = {"model", "optimizer"};

// ------------------------------------------------------------------------------ checksum
class Crc32 {
 public:
  void add(const void* data, std::size_t n) {
    static const std::array<std::uint32_t, 256> table = [] {
      std::array<std::uint32_t, 256> t{};
      for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k)
          c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[i] = c;
      }
      return t;
    }();
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i)
      _crc = table[(_crc ^ p[i]) & 0xFFu] ^ (_crc >> 8);
  }
  void add(const std::string& s) { add(s.data(), s.size()); }
  void addInt(std::int64_t v) {
    add(&v, sizeof(v));
  }  // little-endian hosts only (x86, ARM, POWER LE)
  void addDouble(double v) { add(&v, sizeof(v)); }
  std::uint32_t value() const { return _crc ^ 0xFFFFFFFFu; }

 private:
  std::uint32_t _crc = 0xFFFFFFFFu;
};

void requireName(const std::string& section, const std::string& name) {
  require<InputError>(
      !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos,
      "checkpoint ", section, " entry '", name,
      "': names must be non-empty, without '/', and not '.' or '..'");
}

// ------------------------------------------------------------------------------ writing
struct WritePlists {
  h5::Id group, dataset;
  WritePlists() {
    group = h5::check(H5Pcreate(H5P_GROUP_CREATE), "H5Pcreate");
    h5::checkStatus(H5Pset_obj_track_times(group, 0), "H5Pset_obj_track_times");
    dataset = h5::check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
    h5::checkStatus(H5Pset_obj_track_times(dataset, 0), "H5Pset_obj_track_times");
    h5::checkStatus(H5Pset_fill_time(dataset, H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  }
};

void writeValues(hid_t loc, const std::string& path, const std::string& name,
                 const std::vector<index_t>& shape, ElementType type, const void* data,
                 const WritePlists& pl) {
  h5::Id space = h5::makeSpace(shape);
  h5::Id dset = h5::check(H5Dcreate2(loc, name.c_str(), h5::nativeType(type), space, H5P_DEFAULT,
                                     pl.dataset, H5P_DEFAULT),
                          "cannot create dataset '", name, "' in checkpoint '", path, "'");
  h5::checkStatus(H5Dwrite(dset, h5::nativeType(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
                  "cannot write dataset '", name, "' of checkpoint '", path, "'");
}

h5::Id stringType(std::size_t length) {
  h5::Id t = h5::check(H5Tcopy(H5T_C_S1), "H5Tcopy");
  h5::checkStatus(H5Tset_size(t, std::max<std::size_t>(1, length)), "H5Tset_size");
  h5::checkStatus(H5Tset_strpad(t, H5T_STR_NULLPAD), "H5Tset_strpad");
  return t;
}

template <class T>
void writeAttribute(hid_t loc, const char* name, hid_t type, const T* value) {
  h5::Id space = h5::makeSpace({});
  h5::Id attr =
      h5::check(H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2 ", name);
  h5::checkStatus(H5Awrite(attr, type, value), "H5Awrite ", name);
}

// ------------------------------------------------------------------------------ reading
std::vector<std::string> memberNames(hid_t group) {
  std::vector<std::string> names;
  H5Literate(
      group, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->emplace_back(name);
        return 0;
      },
      &names);
  return names;
}

HostArray readArray(hid_t group, const std::string& file, const std::string& where) {
  const std::string name = where.substr(where.find('/') + 1);
  h5::Id dset = h5::check(H5Dopen2(group, name.c_str(), H5P_DEFAULT), "checkpoint '", file,
                          "': cannot open '", where, "'");
  const std::vector<index_t> shape = h5::shapeOf(dset);
  const ElementType type = h5::elementTypeOf(dset, file, where);
  index_t n = 1;
  for (index_t e : shape)
    n *= e;
  auto read = [&](auto values) {
    h5::checkStatus(
        H5Dread(dset, h5::nativeType(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
        "checkpoint '", file, "': cannot read '", where, "'");
    return HostArray(shape, std::move(values));
  };
  switch (type) {
    case ElementType::Float32:
      return read(std::vector<float>(std::size_t(n)));
    case ElementType::Float64:
      return read(std::vector<double>(std::size_t(n)));
    case ElementType::Int64:
      return read(std::vector<std::int64_t>(std::size_t(n)));
    default:
      break;
  }
  throw IoError(concat("checkpoint '", file, "': dataset '", where, "' holds ",
                       elementTypeName(type), " (expected float32, float64 or int64)"));
}

template <class T>
T readScalar(hid_t group, const std::string& file, const std::string& where, hid_t type) {
  const std::string name = where.substr(where.find('/') + 1);
  h5::Id dset = h5::check(H5Dopen2(group, name.c_str(), H5P_DEFAULT), "checkpoint '", file,
                          "': cannot open '", where, "'");
  require<IoError>(h5::shapeOf(dset).empty(), "checkpoint '", file, "': '", where,
                   "' is not a scalar");
  T value{};
  h5::checkStatus(H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value), "checkpoint '", file,
                  "': cannot read '", where, "'");
  return value;
}

h5::Id openGroup(hid_t file, const std::string& path, const char* name) {
  return h5::check(H5Gopen2(file, name, H5P_DEFAULT), "checkpoint '", path, "' has no group '",
                   name, "'");
}

CheckpointState readOpenFile(hid_t file, const std::string& path) {
  require<IoError>(H5Aexists(file, "format") > 0, "'", path,
                   "' is not a halo3d checkpoint (no 'format' attribute)");
  {
    h5::Id attr =
        h5::check(H5Aopen(file, "format", H5P_DEFAULT), "checkpoint '", path, "': format");
    h5::Id type = h5::check(H5Aget_type(attr), "H5Aget_type");
    std::string text(H5Tget_size(type), '\0');
    h5::checkStatus(H5Aread(attr, type, text.data()), "checkpoint '", path, "': format");
    text.resize(std::strlen(text.c_str()));
    require<IoError>(text == kFormat, "'", path, "' is not a halo3d checkpoint (format '", text,
                     "')");
  }
  require<IoError>(H5Aexists(file, kMarker) > 0, "checkpoint '", path,
                   "' has no completion marker: it was not completely written");
  std::uint32_t stored = 0;
  {
    h5::Id attr = h5::check(H5Aopen(file, kMarker, H5P_DEFAULT), "checkpoint '", path, "': marker");
    h5::checkStatus(H5Aread(attr, H5T_NATIVE_UINT32, &stored), "checkpoint '", path, "': marker");
  }
  CheckpointState state;
  for (const char* section : kArraySections) {
    h5::Id group = openGroup(file, path, section);
    auto& target = std::string(section) == "model" ? state.model : state.optimizer;
    for (const std::string& name : memberNames(group))
      target.emplace(name, readArray(group, path, std::string(section) + "/" + name));
  }
  {
    h5::Id group = openGroup(file, path, "counters");
    for (const std::string& name : memberNames(group))
      state.counters[name] =
          readScalar<std::int64_t>(group, path, "counters/" + name, H5T_NATIVE_INT64);
  }
  {
    h5::Id group = openGroup(file, path, "scalars");
    for (const std::string& name : memberNames(group))
      state.scalars[name] = readScalar<double>(group, path, "scalars/" + name, H5T_NATIVE_DOUBLE);
  }
  {
    h5::Id dset =
        h5::check(H5Dopen2(file, "config", H5P_DEFAULT), "checkpoint '", path, "' has no 'config'");
    h5::Id type = h5::check(H5Dget_type(dset), "H5Dget_type");
    std::string text(H5Tget_size(type), '\0');
    h5::checkStatus(H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()), "checkpoint '",
                    path, "': cannot read 'config'");
    text.resize(std::strlen(text.c_str()));
    state.config = text;
  }
  const std::uint32_t computed = checkpointChecksum(state);
  require<IoError>(computed == stored, "checkpoint '", path, "' is corrupt: content checksum ",
                   computed, " differs from the stored ", stored);
  return state;
}

}  // namespace

std::uint32_t checkpointChecksum(const CheckpointState& state) {
  Crc32 crc;
  for (const char* section : kArraySections) {
    const auto& arrays = std::string(section) == "model" ? state.model : state.optimizer;
    for (const auto& [name, a] : arrays) {
      crc.add(std::string(section) + "/" + name);
      crc.add("\0", 1);
      crc.add(elementTypeName(a.type()));
      crc.add("\0", 1);
      crc.addInt(std::int64_t(a.shape.size()));
      for (index_t e : a.shape)
        crc.addInt(e);
      crc.add(a.data(), std::size_t(a.elements()) * elementSize(a.type()));
    }
  }
  for (const auto& [name, v] : state.counters) {
    crc.add("counters/" + name);
    crc.add("\0", 1);
    crc.addInt(v);
  }
  for (const auto& [name, v] : state.scalars) {
    crc.add("scalars/" + name);
    crc.add("\0", 1);
    crc.addDouble(v);
  }
  crc.add("config");
  crc.add("\0", 1);
  crc.add(state.config);
  return crc.value();
}

void writeCheckpointFile(const std::string& path, const CheckpointState& state) {
  for (const auto& [name, a] : state.model)
    requireName("model", name);
  for (const auto& [name, a] : state.optimizer)
    requireName("optimizer", name);
  for (const auto& [name, v] : state.counters)
    requireName("counters", name);
  for (const auto& [name, v] : state.scalars)
    requireName("scalars", name);
  const std::uint32_t crc = checkpointChecksum(state);

  const auto guard = h5::lock();
  h5::QuietErrors quiet;
  h5::Id fcpl = h5::check(H5Pcreate(H5P_FILE_CREATE), "H5Pcreate");
  h5::checkStatus(H5Pset_obj_track_times(fcpl, 0), "H5Pset_obj_track_times");
  h5::Id file = h5::check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT),
                          "cannot create checkpoint '", path, "'");
  const WritePlists pl;
  {
    h5::Id type = stringType(std::strlen(kFormat));
    writeAttribute(file, "format", type, kFormat);
    writeAttribute(file, "version", H5T_NATIVE_INT64, &kVersion);
  }
  for (const char* section : kArraySections) {
    h5::Id group = h5::check(H5Gcreate2(file, section, H5P_DEFAULT, pl.group, H5P_DEFAULT),
                             "cannot create group '", section, "' in checkpoint '", path, "'");
    const auto& arrays = std::string(section) == "model" ? state.model : state.optimizer;
    for (const auto& [name, a] : arrays)
      writeValues(group, path, name, a.shape, a.type(), a.data(), pl);
  }
  {
    h5::Id group =
        h5::check(H5Gcreate2(file, "counters", H5P_DEFAULT, pl.group, H5P_DEFAULT), "H5Gcreate2");
    for (const auto& [name, v] : state.counters)
      writeValues(group, path, name, {}, ElementType::Int64, &v, pl);
  }
  {
    h5::Id group =
        h5::check(H5Gcreate2(file, "scalars", H5P_DEFAULT, pl.group, H5P_DEFAULT), "H5Gcreate2");
    for (const auto& [name, v] : state.scalars)
      writeValues(group, path, name, {}, ElementType::Float64, &v, pl);
  }
  {
    h5::Id type = stringType(state.config.size());
    h5::Id space = h5::makeSpace({});
    h5::Id dset =
        h5::check(H5Dcreate2(file, "config", type, space, H5P_DEFAULT, pl.dataset, H5P_DEFAULT),
                  "cannot create 'config' in checkpoint '", path, "'");
    std::string padded = state.config;
    padded.resize(std::max<std::size_t>(1, padded.size()), '\0');
    h5::checkStatus(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, padded.data()),
                    "cannot write 'config' of checkpoint '", path, "'");
  }
  // The marker goes last: a file cut short before this point has none.
  writeAttribute(file, kMarker, H5T_NATIVE_UINT32, &crc);
  require<IoError>(file.close(), "cannot close checkpoint '", path, "': ", h5::lastError());
}

CheckpointState readCheckpointFile(const std::string& path) {
  const auto guard = h5::lock();
  h5::QuietErrors quiet;
  h5::Id file = h5::openFileSerial(path);
  return readOpenFile(file, path);
}

CheckpointState readCheckpointImage(const std::string& bytes, const std::string& name) {
  const auto guard = h5::lock();
  h5::QuietErrors quiet;
  h5::Id fapl = h5::check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  h5::checkStatus(H5Pset_fapl_core(fapl, 1 << 20, 0), "H5Pset_fapl_core");
  h5::checkStatus(H5Pset_file_image(fapl, const_cast<char*>(bytes.data()), bytes.size()),
                  "H5Pset_file_image");
  // The core driver refuses names of files that exist on disk, so the image gets a name of its own.
  h5::Id file = h5::check(H5Fopen("halo3d-checkpoint-image", H5F_ACC_RDONLY, fapl),
                          "cannot open checkpoint '", name, "' (corrupt or truncated?)");
  return readOpenFile(file, name);
}

}  // namespace halo3d
