#include "halo3d/apps/unet3d/WindowReader.hpp"

#include <type_traits>

#include "halo3d/io/Collective.hpp"
#include "halo3d/io/impl/IoExecutor.hpp"

namespace halo3d::apps {

WindowReader::WindowReader(const ProcessGrid& grid, const SampleCatalog& catalog,
                           const ReadOptions& options)
    : _world(grid.comm()), _reader(HyperslabReader::open(catalog, grid.spatialComm(), options)) {}

void WindowReader::readInput(index_t id, const Extents3& origin, const nn::Tensor& input) {
  static_assert(std::is_same<nn::real, float>::value, "sample files hold float32 inputs");
  read(id, origin, input, false);
}

void WindowReader::readLabels(index_t id, const Extents3& origin,
                              const HaloTensor<std::int32_t>& labels) {
  read(id, origin, labels, true);
}

template <class T, class M>
void WindowReader::read(index_t id, const Extents3& origin, const HaloTensor<T, M>& dst,
                        bool labels) {
  const SampleCatalog& catalog = _reader->catalog();
  const TensorBlock& b = dst.block();
  require<InputError>(id >= 0 && id < catalog.size(), "sample ", id,
                      " does not exist: the data holds ", catalog.size(), " samples");
  require<ShapeError>(b.localSamples() == 1 && b.channels() == (labels ? 1 : catalog.channels()),
                      "tensor '", dst.label(), "' ", b.globalShape(),
                      " does not hold one sample of ", labels ? index_t(1) : catalog.channels(),
                      " channels");
  // The owned block in volume coordinates, and the part of it inside the volume.
  const Box inside = intersect(b.owned().shifted(origin), Box::fromExtents(catalog.extents()));
  HaloTensor<T, Kokkos::HostSpace> host("halo3d::window", b);
  if (labels) Kokkos::deep_copy(host.view(), T(-1));
  HaloTensor<T, Kokkos::HostSpace> scratch("halo3d::window_scratch",
                                           TensorBlock::whole({1, b.channels(), 1, 1, 1}));
  const bool empty = inside.empty();
  const Box source = empty ? Box::fromExtents({1, 1, 1}) : inside;
  Extents3 lo = inside.min(), hi = inside.max();
  for (int d = 0; d < 3; ++d) {
    lo[d] -= origin[d];
    hi[d] -= origin[d];
  }
  const Box target = empty ? scratch.localOwned() : Box(b.toLocal(lo), b.toLocal(hi));
  const HaloTensor<T, Kokkos::HostSpace>& into = empty ? scratch : host;
  const HostTile<T> tile{into.view().data(), into.block().allocationExtents(), 0, target};
  impl::IoExecutor::instance().run([&] {
    std::exception_ptr failure;
    try {
      if constexpr (std::is_same<T, float>::value)
        _reader->readInput(id, source, tile);
      else
        _reader->readLabels(id, source, tile);
    } catch (...) {
      failure = std::current_exception();
    }
    if (!failure) failure = _reader->takeProblem();
    agreeOnError(failure, _world);
  });
  Kokkos::deep_copy(dst.view(), host.view());
}

}  // namespace halo3d::apps
