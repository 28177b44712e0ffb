#pragma once
// Reads the part of a sample that one rank owns: the hyperslab (C, owned D x H x W box) of the
// sample's input, straight from the file through parallel HDF5 (MPI-IO on the spatial group's
// communicator), into the owned cells of a host allocation laid out like a HaloTensor. Labels are
// read the same way; regression targets are small and read whole by every rank.
//
// The reader works on raw host memory and never calls Kokkos, so that it can run on the loader's
// background thread; io/DataLoader.hpp and io/SampleReader.hpp wrap it for HaloTensors.

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <vector>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/io/Hdf5.hpp"
#include "halo3d/io/InputTransform.hpp"
#include "halo3d/io/SampleCatalog.hpp"

namespace halo3d {

// Independent: each rank reads on its own, through HDF5's POSIX driver (no MPI-IO). Collective: the
// ranks of the spatial group read together (two-phase I/O): fewer, larger requests, which parallel
// file systems may prefer when blocks are thin strided pieces (W split finely). On one node with
// the file in the page cache, independent reads were 4-6x faster at 2-4 ranks (bench_hdf5_read),
// hence the default.
enum class IoMode { Independent, Collective };
// Hyperslab: each rank reads only its owned block. WholeSample: each rank reads the whole sample
// and keeps its block (the baseline the benchmark compares with, and a fallback for file systems
// that handle small strided reads badly).
enum class ReadMethod { Hyperslab, WholeSample };

struct ReadOptions {
  IoMode mode = IoMode::Independent;
  ReadMethod method = ReadMethod::Hyperslab;
  InputTransform transform;
  int num_classes = 3;             // U-Net labels must lie in [0, num_classes)
  bool record_hyperslabs = false;  // keep every hyperslab in ReadStats::records (tests)
  int open_files = 16;             // sample files kept open between reads
  // Independent reads into bf16 tiles stage the file's values in slabs of whole D planes of at most
  // this many bytes (at least one plane each), so that what a bf16 batch saves is not spent on a
  // staging copy of a whole block (a float one, for float files). Collective reads stage the whole
  // block: the ranks' H5Dread calls must match.
  std::size_t bf16_staging_bytes = std::size_t(4) << 20;
};

// One hyperslab read from a file: sample id, input or labels, channels [0, channels), the global
// spatial box read from the file, and the owned cells delivered from it (the same, unless short
// rows were read whole or the whole sample was read; a bf16 read in slabs delivers the owned cells
// of each slab).
struct HyperslabRecord {
  index_t sample = 0;
  bool labels = false;
  index_t channels = 0;
  Box box;
  Box owned;
};

// What this rank read from files since the last reset.
struct ReadStats {
  std::uint64_t bytes = 0;       // bytes of file data read (elements selected x file element size)
  std::uint64_t hyperslabs = 0;  // H5Dread calls for inputs and labels
  std::uint64_t samples = 0;     // sample inputs read
  std::uint64_t file_opens = 0;  // sample files opened (openAhead's included)
  std::vector<HyperslabRecord> records;
};

// Where one sample's tile goes: a host allocation (samples, C, D, H, W), LayoutRight, the sample
// slot in it, and the owned cells in local indices (HaloTensor::localOwned()).
template <class T>
struct HostTile {
  T* data = nullptr;
  Shape5 allocation{0, 0, 0, 0, 0};
  index_t slot = 0;
  Box local_owned;
};

class HyperslabReader;

// Owns a reader and deletes it on the process's I/O thread (impl::IoExecutor): closing its files is
// HDF5 work (collective over its communicator in IoMode::Collective), so it queues behind the
// other I/O like any read.
struct DeleteOnIoThread {
  void operator()(HyperslabReader* reader) const;
};
using HyperslabReaderPtr = std::unique_ptr<HyperslabReader, DeleteOnIoThread>;

class HyperslabReader {
 public:
  // A reader owned by a HyperslabReaderPtr (see the constructor).
  static HyperslabReaderPtr open(const SampleCatalog& catalog, MPI_Comm comm,
                                 const ReadOptions& options) {
    return HyperslabReaderPtr(new HyperslabReader(catalog, comm, options));
  }

  // `comm` is the spatial group's communicator. In IoMode::Collective every read is collective
  // over it (all its ranks read the same sample, each its own box, in the same order); in
  // IoMode::Independent files are opened through HDF5's POSIX driver and nothing is collective: a
  // rank never waits for another's reads. "Collective" below means "collective in
  // IoMode::Collective". Throws InputError on invalid options.
  HyperslabReader(const SampleCatalog& catalog, MPI_Comm comm, const ReadOptions& options);
  // Closes the open files: collective over `comm`.
  ~HyperslabReader();
  HyperslabReader(const HyperslabReader&) = delete;
  HyperslabReader& operator=(const HyperslabReader&) = delete;

  // IoMode::Independent: opens the files of the first ReadOptions::open_files of `samples` (one
  // sample per file: a file already open only becomes the most recently used), so that the reads
  // that follow find them open. Opening more files than were ever closed
  // costs more than the reads: HDF5 zeroes a 512 KiB metadata-cache index per open file, and its
  // fresh pages fault in (about 1.5 ms a file on this project's 2-core VM), while an open after a
  // close reuses the closed file's memory (docs/scaling.md, "The first opens, and the layers timed
  // in step order"). A file that fails to open is skipped: the read that needs it reports the
  // failure. Does nothing in IoMode::Collective, where opens are collective and a failure on some
  // ranks would leave the others waiting.
  void openAhead(const std::vector<index_t>& samples);

  // Reads sample `id`'s input over the global spatial box `owned` (all C channels) into `tile`,
  // converting int16 to float and applying the input transform. Collective over comm.
  void readInput(index_t id, const Box& owned, const HostTile<float>& tile);
  // The same into a bf16 tile: each value converted to float and transformed as above, then
  // rounded to nearest even (what rounding the float tile gives, bit for bit). In
  // IoMode::Independent one H5Dread per slab of ReadOptions::bf16_staging_bytes. Collective over
  // comm.
  void readInput(index_t id, const Box& owned, const HostTile<bf16>& tile);
  // Reads sample `id`'s labels over `owned` into `tile` (C = 1). Labels outside [0, num_classes)
  // are not thrown here (that would leave the other ranks in a collective) but kept for
  // takeProblem(). Collective.
  void readLabels(index_t id, const Box& owned, const HostTile<std::int32_t>& tile);
  // Reads sample `id`'s targetWidth() regression targets into `out`. Collective over comm.
  void readTargets(index_t id, float* out);

  // The first problem found in the data since the last call (or null); the caller agrees on it
  // collectively.
  std::exception_ptr takeProblem();
  const ReadStats& stats() const { return _stats; }
  void resetStats() { _stats = ReadStats(); }
  const SampleCatalog& catalog() const { return _catalog; }
  const ReadOptions& options() const { return _options; }

 private:
  struct OpenFile {
    int file = -1;
    h5::Id handle, input, target;
  };
  OpenFile& openFile(int file);
  // File selection of sample `loc` over `box` with `channels` leading channels (0: no channel
  // axis).
  // The transfer properties of a read: MPI-IO's collective mode, or HDF5's defaults for the
  // POSIX driver of independent reads.
  hid_t transfer() const {
    return _options.mode == IoMode::Collective ? _transfer.get() : H5P_DEFAULT;
  }
  // Rows shorter than this are read whole (readBox).
  static constexpr std::size_t kMinRunBytes = 4096;
  // The box a read of the owned box `owned` covers in the file.
  Box readBox(const SampleFileLayout& layout, const Box& owned, ElementType type) const;
  h5::Id fileSelection(const SampleFileLayout& layout, hid_t dataset, index_t index,
                       index_t channels, const Box& box) const;
  template <class T>
  void readBlock(index_t id, bool labels, const Box& owned, const HostTile<T>& tile);

  SampleCatalog _catalog;
  MPI_Comm _comm;
  ReadOptions _options;
  h5::Id _transfer;
  std::deque<OpenFile> _open;  // most recently used first
  ReadStats _stats;
  std::exception_ptr _problem;
  std::vector<unsigned char> _staging;
  std::vector<float> _row;  // one W row in float, between the file's type and bf16
};

}  // namespace halo3d
