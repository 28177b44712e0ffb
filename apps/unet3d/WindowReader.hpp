#pragma once
// Reads a window of a U-Net sample into a tensor spread over the spatial group: the window is a box
// of the tensor's size at `origin` in the sample's volume, and it may reach past the volume
// (prediction pads the volume to a size the network divides, and a tile may be larger than a small
// volume). Each rank reads the hyperslab of its own block that lies inside the volume, and leaves
// zero where the window lies outside.
//
// Every rank takes part in every read, even where its block lies wholly outside the volume (it then
// reads one voxel and drops it): the files are opened collectively on first use, and collective
// MPI-IO needs every rank.

#include <cstdint>
#include <memory>

#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/io/HyperslabReader.hpp"
#include "halo3d/io/SampleCatalog.hpp"
#include "halo3d/nn/Activation.hpp"

namespace halo3d::apps {

class WindowReader {
 public:
  // Collective over grid.spatialComm(). The reads of every rank of a spatial group are of one
  // sample.
  WindowReader(const ProcessGrid& grid, const SampleCatalog& catalog, const ReadOptions& options);
  // The destructor closes the files (collective): the reader is a HyperslabReaderPtr.
  WindowReader(const WindowReader&) = delete;
  WindowReader& operator=(const WindowReader&) = delete;

  // Fills the owned cells of `input` (one sample, the catalog's C channels; global cell x holds
  // volume cell origin + x) from sample `id`, zero outside the volume. Collective over grid.comm();
  // throws on every rank if any rank failed (IoError naming the file and dataset).
  void readInput(index_t id, const Extents3& origin, const nn::Tensor& input);
  // The same for the labels: `labels` is (1, 1, D, H, W). Labels outside [0, options.num_classes)
  // throw IoError naming the voxel; cells outside the volume get -1 (no class).
  void readLabels(index_t id, const Extents3& origin, const HaloTensor<std::int32_t>& labels);

 private:
  template <class T, class M>
  void read(index_t id, const Extents3& origin, const HaloTensor<T, M>& dst, bool labels);

  MPI_Comm _world;
  HyperslabReaderPtr _reader;
};

}  // namespace halo3d::apps
