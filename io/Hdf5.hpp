#pragma once
// A thin RAII layer over the HDF5 C API for io/: owned identifiers, one process-wide lock, and
// errors that name the file and dataset together with HDF5's own reason.
//
// The lock: Debian's parallel HDF5 is not thread-safe, and the data loader reads on a background
// thread while the main thread may write a checkpoint. Every io/ function that calls HDF5 holds
// h5::lock() for the call. Two threads of one rank must never both run *collective* HDF5 operations
// (they could each wait for the other's peers while holding the lock): io/ runs every MPI-IO
// operation on one thread, impl::IoExecutor.

#include <hdf5.h>
#include <mpi.h>

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/Types.hpp"
#include "halo3d/io/ElementType.hpp"
#include "halo3d/io/IoError.hpp"

namespace halo3d {

namespace h5 {

std::recursive_mutex& mutex();
inline std::unique_lock<std::recursive_mutex> lock() {
  return std::unique_lock<std::recursive_mutex>(mutex());
}

// Owns one HDF5 identifier (file, group, dataset, dataspace, datatype, property list or attribute)
// and closes it with the matching H5?close. Move-only.
class Id {
 public:
  Id() = default;
  explicit Id(hid_t id) : _id(id) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id(Id&& o) noexcept : _id(o._id) { o._id = H5I_INVALID_HID; }
  Id& operator=(Id&& o) noexcept;
  ~Id() { close(); }

  hid_t get() const { return _id; }
  operator hid_t() const { return _id; }
  bool valid() const { return _id >= 0; }
  // Closes now; returns false if HDF5 reported a failure (a file that could not be flushed).
  bool close() noexcept;

 private:
  hid_t _id = H5I_INVALID_HID;
};

// Silences HDF5's automatic error printing for its lifetime (io/ reports errors itself) and
// restores the previous handler afterwards.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t _func = nullptr;
  void* _data = nullptr;
};

// HDF5's explanation of the last failure on this thread ("file signature not found", ...), or "".
std::string lastError();

// Throws IoError(concat(args..., ": ", lastError())) if `id` is negative; returns it owned
// otherwise.
template <class... Args>
Id check(hid_t id, const Args&... args) {
  if (id < 0) {
    const std::string why = lastError();
    throw IoError(concat(args..., why.empty() ? "" : ": ", why));
  }
  return Id(id);
}
template <class... Args>
void checkStatus(herr_t status, const Args&... args) {
  if (status < 0) {
    const std::string why = lastError();
    throw IoError(concat(args..., why.empty() ? "" : ": ", why));
  }
}

// Opens `path` read-only with the default (POSIX) driver. Throws IoError naming the file if it is
// missing or not a readable HDF5 file.
Id openFileSerial(const std::string& path);
// Opens `path` read-only through MPI-IO; collective over `comm`. HDF5 shares a file that is already
// open in the process with its first opener's communicator, so readers that hold one file open at
// the same time must use the same spatial groups (loaders on one grid do).
Id openFileParallel(const std::string& path, MPI_Comm comm);
// True if `name` is a link in `file` that leads to a dataset.
bool isDataset(hid_t file, const std::string& name);
// Opens dataset `name`; throws IoError naming the file and dataset if it is absent.
Id openDataset(hid_t file, const std::string& path, const std::string& name);
// The extents of a dataset's dataspace, C order ({} for a scalar).
std::vector<index_t> shapeOf(hid_t dataset);
// The element type of a dataset; throws IoError naming the file and dataset for non-numeric types.
ElementType elementTypeOf(hid_t dataset, const std::string& path, const std::string& name);
// The native in-memory HDF5 type of `t` (not to be closed).
hid_t nativeType(ElementType t);
// A simple dataspace of `extents` (scalar when empty).
Id makeSpace(const std::vector<index_t>& extents);
// Selects the hyperslab [start, start + count) of `space`, replacing any selection.
void selectBox(hid_t space, const std::vector<index_t>& start, const std::vector<index_t>& count);

// Creates dataset `name` of `shape` in `file` and writes all of `data` (native layout of `type`);
// `path` names the file in errors.
void writeDataset(hid_t file, const std::string& path, const std::string& name,
                  const std::vector<index_t>& shape, ElementType type, const void* data);
// Writes a new file through `write(file, temporary_path)` under a temporary name beside `path`,
// then renames it into place, so a reader never sees a half-written file; the temporary is removed
// on any failure. The caller holds lock().
void writeFileAtomically(const std::string& path,
                         const std::function<void(hid_t, const std::string&)>& write);

}  // namespace h5
}  // namespace halo3d
