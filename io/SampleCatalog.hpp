#pragma once
// The samples of a data set: an ordered list of sample files, each holding one or more samples,
// checked on open and numbered 0 .. size()-1 in file order. Every sample has the same (C, D, H, W)
// and target width.

#include <mpi.h>

#include <string>
#include <vector>

#include "halo3d/io/SampleFormat.hpp"

namespace halo3d {

// Where a global sample id lives: file index and the sample's index inside that file.
struct SampleLocation {
  int file = 0;
  index_t index = 0;
};

class SampleCatalog {
 public:
  SampleCatalog() = default;

  // Collective over `comm`: the files are inspected in parallel (rank r checks files r, r + P,
  // ...), the layouts shared, and every rank checks that the samples agree. Any problem (see
  // inspectSampleFile, plus samples of different sizes, an empty list) throws IoError on every
  // rank, naming the first file at fault.
  static SampleCatalog open(const std::vector<std::string>& files, SampleKind kind, MPI_Comm comm);
  // The same on one process, without MPI.
  static SampleCatalog openLocal(const std::vector<std::string>& files, SampleKind kind);
  // Builds a catalog from layouts already inspected; checks that they agree.
  static SampleCatalog fromLayouts(std::vector<SampleFileLayout> layouts, SampleKind kind);

  SampleKind kind() const { return _kind; }
  index_t size() const { return _total; }
  index_t channels() const { return _files.front().channels; }
  Extents3 extents() const { return _files.front().extents; }
  index_t targetWidth() const { return _files.front().target_width; }
  // (n, C, D, H, W) of a batch of n samples.
  Shape5 batchShape(index_t n) const;
  // Elements of one sample's input, C * D * H * W.
  index_t sampleElements() const;

  int fileCount() const { return int(_files.size()); }
  const SampleFileLayout& file(int i) const { return _files.at(std::size_t(i)); }
  // Requires 0 <= id < size(); throws InputError naming the id otherwise.
  SampleLocation locate(index_t id) const;

 private:
  SampleKind _kind = SampleKind::CosmoFlow;
  std::vector<SampleFileLayout> _files;
  std::vector<index_t> _first;  // first global id of each file
  index_t _total = 0;
};

// The *.h5 and *.hdf5 files directly inside `dir`, sorted by name; a path that is a file is
// returned alone. Throws IoError naming the path if it does not exist or holds no such file.
std::vector<std::string> listSampleFiles(const std::string& path);

}  // namespace halo3d
