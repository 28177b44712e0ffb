#pragma once
// Reading single samples, for evaluation and prediction: each sample group reads one sample of its
// own choosing, spread over its spatial ranks as the block of a batch of one,
//   TensorBlock::forGrid({1, C, D, H, W}, (1, Pd, Ph, Pw), this rank's spatial coordinates, halo).
//
//   SampleReader<> reader(grid, catalog, ReadOptions{}, halo);
//   Sample<> s = reader.read(id);   // s.input, s.targets / s.labels
//
// Reads run on the process's I/O thread (impl::IoExecutor), in order with any DataLoader's
// prefetches, so that a validation reader and a prefetching training loader can share the ranks.

#include <Kokkos_Core.hpp>

#include <memory>
#include <vector>

#include "halo3d/comm/Communicator.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/io/Collective.hpp"
#include "halo3d/io/HyperslabReader.hpp"
#include "halo3d/io/impl/HostToMemorySpace.hpp"
#include "halo3d/io/impl/IoExecutor.hpp"

namespace halo3d {

template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
struct Sample {
  HaloTensor<float, MemorySpace> input;          // (1, C, D, H, W) block with ghosts (zero)
  HaloTensor<std::int32_t, MemorySpace> labels;  // U-Net: (1, 1, D, H, W) block without ghosts
  std::vector<float> targets;                    // CosmoFlow: T targets
  index_t id = 0;
};

template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
class SampleReader {
 public:
  // Collective over grid.comm(). Throws ShapeError if the grid cannot split the volume with `halo`.
  SampleReader(const ProcessGrid& grid, const SampleCatalog& catalog, const ReadOptions& options,
               const HaloWidths& halo = {})
      : _world(Communicator::duplicate(grid.comm())),
        _spatial(Communicator::duplicate(grid.spatialComm())),
        _block(TensorBlock::forGrid(catalog.batchShape(1), spatialOnly(grid.shape()),
                                    spatialOnly(grid.coords()), halo)),
        _reader(HyperslabReader::open(catalog, _spatial.get(), options)) {}
  SampleReader(const SampleReader&) = delete;
  SampleReader& operator=(const SampleReader&) = delete;

  // Collective over grid.comm(); `id` must be the same on the ranks of a sample group. Throws on
  // every rank (IoError naming the file and dataset, InputError for an id out of range) if any rank
  // failed.
  Sample<MemorySpace> read(index_t id) {
    const SampleCatalog& c = _reader->catalog();
    runCollectively(_world.get(), [&] { c.locate(id); });
    HaloTensor<float, Kokkos::HostSpace> input("halo3d::sample_input", _block);
    HaloTensor<std::int32_t, Kokkos::HostSpace> labels;
    Sample<MemorySpace> s;
    s.id = id;
    s.targets.resize(std::size_t(c.targetWidth()));
    if (c.kind() == SampleKind::UNet) {
      const Shape5 g = _block.globalShape();
      labels = HaloTensor<std::int32_t, Kokkos::HostSpace>(
          "halo3d::sample_labels",
          TensorBlock(Shape5{1, 1, g[2], g[3], g[4]}, 0, 1, _block.owned(), {}));
    }
    impl::IoExecutor::instance().run([&] {
      std::exception_ptr failure;
      try {
        const Box owned = _block.owned();
        _reader->readInput(id, owned,
                           HostTile<float>{input.view().data(), _block.allocationExtents(), 0,
                                           _block.localOwned()});
        if (c.kind() == SampleKind::UNet)
          _reader->readLabels(
              id, owned,
              {labels.view().data(), labels.block().allocationExtents(), 0, labels.localOwned()});
        else
          _reader->readTargets(id, s.targets.data());
      } catch (...) {
        failure = std::current_exception();
      }
      if (!failure) failure = _reader->takeProblem();
      agreeOnError(failure, _world.get());
    });
    s.input = impl::toMemorySpace<MemorySpace>(std::move(input));
    s.labels = impl::toMemorySpace<MemorySpace>(std::move(labels));
    return s;
  }

  const TensorBlock& block() const { return _block; }
  const ReadStats& stats() const { return _reader->stats(); }

 private:
  static GridShape spatialOnly(const GridShape& g) { return GridShape(1, g.d(), g.h(), g.w()); }
  static GridCoords spatialOnly(const GridCoords& c) { return GridCoords{0, c.d, c.h, c.w}; }

  Communicator _world, _spatial;
  TensorBlock _block;
  HyperslabReaderPtr _reader;
};

}  // namespace halo3d
