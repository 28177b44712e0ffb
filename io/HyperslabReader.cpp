#include "halo3d/io/HyperslabReader.hpp"

#include "halo3d/io/impl/IoExecutor.hpp"

#include <algorithm>
#include <type_traits>

namespace halo3d {

void DeleteOnIoThread::operator()(HyperslabReader* reader) const {
  impl::IoExecutor::instance().run([reader] { delete reader; });
}

HyperslabReader::HyperslabReader(const SampleCatalog& catalog, MPI_Comm comm,
                                 const ReadOptions& options)
    : _catalog(catalog), _comm(comm), _options(options) {
  _options.transform.validate(catalog.channels());
  require<InputError>(options.num_classes >= 1, "number of classes ", options.num_classes,
                      " must be >= 1");
  require<InputError>(options.open_files >= 1, "open_files ", options.open_files, " must be >= 1");
  const auto guard = h5::lock();
  _transfer = h5::check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
  h5::checkStatus(
      H5Pset_dxpl_mpio(_transfer, options.mode == IoMode::Collective ? H5FD_MPIO_COLLECTIVE
                                                                     : H5FD_MPIO_INDEPENDENT),
      "H5Pset_dxpl_mpio");
}

HyperslabReader::~HyperslabReader() {
  const auto guard = h5::lock();
  _open.clear();
  _transfer.close();
}

HyperslabReader::OpenFile& HyperslabReader::openFile(int file) {
  for (auto it = _open.begin(); it != _open.end(); ++it) {
    if (it->file != file) continue;
    if (it != _open.begin()) {
      OpenFile moved = std::move(*it);
      _open.erase(it);
      _open.push_front(std::move(moved));
    }
    return _open.front();
  }
  // Opens and closes are collective under MPI-IO. Collective reads need the group's communicator
  // (every rank of the group reads the same samples in the same order, so they match); independent
  // reads need no MPI-IO at all and open through HDF5's POSIX driver, so that no rank waits for
  // another's I/O thread and an open costs no MPI-IO set-up.
  if (int(_open.size()) >= _options.open_files) _open.pop_back();
  const SampleFileLayout& layout = _catalog.file(file);
  const SampleDatasets names = datasetsOf(_catalog.kind());
  OpenFile f;
  f.file = file;
  f.handle = _options.mode == IoMode::Collective ? h5::openFileParallel(layout.path, _comm)
                                                 : h5::openFileSerial(layout.path);
  f.input = h5::openDataset(f.handle, layout.path, names.input);
  f.target = h5::openDataset(f.handle, layout.path, names.target);
  _open.push_front(std::move(f));
  ++_stats.file_opens;
  return _open.front();
}

void HyperslabReader::openAhead(const std::vector<index_t>& samples) {
  if (_options.mode != IoMode::Independent) return;
  const auto guard = h5::lock();
  h5::QuietErrors quiet;
  const std::size_t n = std::min(samples.size(), std::size_t(_options.open_files));
  for (std::size_t k = 0; k < n; ++k) {
    try {
      openFile(_catalog.locate(samples[k]).file);
    } catch (const std::exception&) {
      // Reported by the read of this sample, where the ranks agree on it.
    }
  }
}

// Rows of a block split along W are short runs in the file: HDF5 then reads them one by one, which
// cost the loader's thread more CPU than the rank's compute on a 64^3 sample split in two along W
// (docs/scaling.md, "The I/O thread's collectives"). Below kMinRunBytes per row the read covers
// whole rows, and the owned part is copied out of the staging buffer.
Box HyperslabReader::readBox(const SampleFileLayout& layout, const Box& owned,
                             ElementType type) const {
  if (_options.method == ReadMethod::WholeSample) return Box::fromExtents(layout.extents);
  const index_t w = layout.extents[2];
  if (owned.extent(2) == w || std::size_t(owned.extent(2)) * elementSize(type) >= kMinRunBytes)
    return owned;
  return owned.withRange(2, 0, w);
}

h5::Id HyperslabReader::fileSelection(const SampleFileLayout& layout, hid_t dataset, index_t index,
                                      index_t channels, const Box& box) const {
  std::vector<index_t> start, count;
  if (layout.batched) {
    start.push_back(index);
    count.push_back(1);
  }
  if (channels > 0) {
    start.push_back(0);
    count.push_back(channels);
  }
  for (int d = 0; d < 3; ++d) {
    start.push_back(box.min(d));
    count.push_back(box.extent(d));
  }
  h5::Id space = h5::check(H5Dget_space(dataset), "H5Dget_space of '", layout.path, "'");
  h5::selectBox(space, start, count);
  return space;
}

namespace {

// Whether HDF5 can deliver the file's `type` as T (bf16 is no HDF5 type: always converted here).
template <class T>
constexpr bool deliversAs(ElementType type) {
  if constexpr (std::is_same<T, bf16>::value)
    return false;
  else
    return type == elementTypeOf<T>();
}

}  // namespace

template <class T>
void HyperslabReader::readBlock(index_t id, bool labels, const Box& owned,
                                const HostTile<T>& tile) {
  constexpr bool rounded = std::is_same<T, bf16>::value;
  const auto guard = h5::lock();
  h5::QuietErrors quiet;
  const SampleLocation loc = _catalog.locate(id);
  const SampleFileLayout& layout = _catalog.file(loc.file);
  const char* name =
      labels ? datasetsOf(_catalog.kind()).target : datasetsOf(_catalog.kind()).input;
  const index_t channels = labels ? 1 : layout.channels;
  const Shape5& a = tile.allocation;
  require<ShapeError>(a[1] == channels && tile.slot >= 0 && tile.slot < a[0] &&
                          tile.local_owned.extents() == owned.extents() &&
                          Box::fromExtents({a[2], a[3], a[4]}).contains(tile.local_owned),
                      "reading '", name, "': destination allocation ", a, " slot ", tile.slot,
                      " owned ", tile.local_owned, " does not fit ", channels,
                      " channels over the box ", owned);
  require<ShapeError>(Box::fromExtents(layout.extents).contains(owned), "reading '", name,
                      "': box ", owned, " outside the sample volume ", layout.extents);
  OpenFile& f = openFile(loc.file);
  const hid_t dataset = labels ? f.target.get() : f.input.get();
  const ElementType type = labels ? layout.target_type : layout.input_type;
  const Box read_box = readBox(layout, owned, type);
  const Box& lo = tile.local_owned;
  // Same element type and only the owned block: HDF5 scatters straight into the owned cells.
  const bool direct = deliversAs<T>(type) && read_box == owned;
  index_t planes = read_box.extent(0);
  // Collective reads stay whole: every rank of the group must make the same H5Dread calls, and
  // slab counts differ between blocks of an uneven split.
  if (rounded && _options.mode == IoMode::Independent) {
    const std::size_t plane_bytes =
        std::size_t(channels * read_box.extent(1) * read_box.extent(2)) * elementSize(type);
    planes = std::clamp(index_t(_options.bf16_staging_bytes / plane_bytes), index_t(1), planes);
  }
  if (rounded) _row.resize(std::size_t(owned.extent(2)));
  const index_t w = owned.extent(2);
  const index_t off_h = owned.min(1) - read_box.min(1), off_w = owned.min(2) - read_box.min(2);
  for (index_t s0 = read_box.min(0); s0 < read_box.max(0); s0 += planes) {
    const Box slab = read_box.withRange(0, s0, std::min(s0 + planes, read_box.max(0)));
    h5::Id file_space = fileSelection(layout, dataset, loc.index, labels ? 0 : channels, slab);
    const std::size_t count = std::size_t(channels * slab.size());
    h5::Id memory_space;
    void* destination = nullptr;
    if (direct) {
      const std::vector<index_t> extents(a.begin(), a.end());
      const std::vector<index_t> start{tile.slot, index_t(0), lo.min(0), lo.min(1), lo.min(2)};
      const std::vector<index_t> block_count{index_t(1), channels, lo.extent(0), lo.extent(1),
                                             lo.extent(2)};
      memory_space = h5::makeSpace(extents);
      h5::selectBox(memory_space, start, block_count);
      destination = tile.data;
    } else {
      _staging.resize(count * elementSize(type));
      memory_space = h5::makeSpace({static_cast<index_t>(count)});
      destination = _staging.data();
    }
    h5::checkStatus(
        H5Dread(dataset, h5::nativeType(type), memory_space, file_space, transfer(), destination),
        "cannot read sample ", loc.index, " of dataset '", name, "' of file '", layout.path, "'");
    _stats.bytes += count * elementSize(type);
    _stats.hyperslabs += 1;
    const Box delivered = intersect(owned, slab);
    if (_options.record_hyperslabs)
      _stats.records.push_back({id, labels, channels, slab, delivered});

    // Convert (staged reads) and post-process one W row at a time: the owned rows of this slab.
    for (index_t c = 0; c < channels; ++c)
      for (index_t gd = delivered.min(0); gd < delivered.max(0); ++gd)
        for (index_t h = 0; h < owned.extent(1); ++h) {
          const index_t d = gd - owned.min(0);
          T* row =
              tile.data +
              ((((tile.slot * a[1] + c) * a[2] + lo.min(0) + d) * a[3] + lo.min(1) + h) * a[4] +
               lo.min(2));
          const unsigned char* src =
              direct ? nullptr
                     : _staging.data() +
                           std::size_t(((c * slab.extent(0) + gd - slab.min(0)) * slab.extent(1) +
                                        h + off_h) *
                                           slab.extent(2) +
                                       off_w) *
                               elementSize(type);
          if constexpr (rounded) {
            // The float path's values (convert, then transform), each rounded once.
            convertElements<float>(type, src, _row.data(), std::size_t(w));
            if (!_options.transform.isIdentity())
              _options.transform.apply(c, _row.data(), _row.size());
            for (index_t x = 0; x < w; ++x)
              row[x] = bf16(_row[std::size_t(x)]);
          } else {
            if (!direct) convertElements<T>(type, src, row, std::size_t(w));
          }
          if constexpr (std::is_same<T, float>::value) {
            if (!_options.transform.isIdentity()) _options.transform.apply(c, row, std::size_t(w));
          } else if constexpr (std::is_same<T, std::int32_t>::value) {
            if (_problem) continue;
            for (index_t x = 0; x < w; ++x) {
              if (row[x] >= 0 && row[x] < _options.num_classes) continue;
              _problem = std::make_exception_ptr(
                  IoError(concat("dataset '", name, "' of file '", layout.path, "' (sample ",
                                 loc.index, " of the file) holds class ", row[x], " at voxel (", gd,
                                 ", ", owned.min(1) + h, ", ", owned.min(2) + x,
                                 "); classes must lie in [0, ", _options.num_classes, ")")));
              break;
            }
          }
        }
  }
  if (!labels) _stats.samples += 1;
}

void HyperslabReader::readInput(index_t id, const Box& owned, const HostTile<float>& tile) {
  readBlock(id, false, owned, tile);
}

void HyperslabReader::readInput(index_t id, const Box& owned, const HostTile<bf16>& tile) {
  readBlock(id, false, owned, tile);
}

void HyperslabReader::readLabels(index_t id, const Box& owned, const HostTile<std::int32_t>& tile) {
  require<InputError>(_catalog.kind() == SampleKind::UNet,
                      "readLabels: ", sampleKindName(_catalog.kind()),
                      " samples have no voxel labels");
  readBlock(id, true, owned, tile);
}

void HyperslabReader::readTargets(index_t id, float* out) {
  require<InputError>(_catalog.kind() == SampleKind::CosmoFlow,
                      "readTargets: ", sampleKindName(_catalog.kind()),
                      " samples have no regression targets");
  const auto guard = h5::lock();
  h5::QuietErrors quiet;
  const SampleLocation loc = _catalog.locate(id);
  const SampleFileLayout& layout = _catalog.file(loc.file);
  OpenFile& f = openFile(loc.file);
  const index_t width = layout.target_width;
  std::vector<index_t> start, count;
  if (layout.batched) {
    start.push_back(loc.index);
    count.push_back(1);
  }
  start.push_back(0);
  count.push_back(width);
  h5::Id file_space = h5::check(H5Dget_space(f.target), "H5Dget_space of '", layout.path, "'");
  h5::selectBox(file_space, start, count);
  h5::Id memory_space = h5::makeSpace({width});
  h5::checkStatus(H5Dread(f.target, H5T_NATIVE_FLOAT, memory_space, file_space, transfer(), out),
                  "cannot read sample ", loc.index, " of dataset '",
                  datasetsOf(_catalog.kind()).target, "' of file '", layout.path, "'");
  _stats.bytes += std::uint64_t(width) * elementSize(layout.target_type);
}

std::exception_ptr HyperslabReader::takeProblem() {
  std::exception_ptr p = _problem;
  _problem = nullptr;
  return p;
}

}  // namespace halo3d
