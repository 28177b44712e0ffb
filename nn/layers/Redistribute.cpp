#include "halo3d/nn/layers/Redistribute.hpp"

#include "halo3d/comm/Communicator.hpp"
#include "halo3d/comm/MpiTraits.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d::nn {

namespace {

// The view of global box `box` inside tensor t's allocation.
auto boxView(const Tensor& t, const Box& box) {
  const Extents3 lo = t.toLocal(box.min());
  return Kokkos::subview(t.view(), Kokkos::ALL, Kokkos::ALL,
                         Kokkos::make_pair(lo[0], lo[0] + box.extent(0)),
                         Kokkos::make_pair(lo[1], lo[1] + box.extent(1)),
                         Kokkos::make_pair(lo[2], lo[2] + box.extent(2)));
}

using HostDense = Kokkos::View<real*****, Kokkos::LayoutRight, Kokkos::HostSpace,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using Dense = Kokkos::View<real*****, Kokkos::LayoutRight, Memory>;

}  // namespace

void copyBox(const Tensor& src, const Tensor& dst, const Box& box) {
  const Box held_src =
      src.block().owned().grown(src.block().halo().loExtents(), src.block().halo().hiExtents());
  const Box held_dst =
      dst.block().owned().grown(dst.block().halo().loExtents(), dst.block().halo().hiExtents());
  require<ShapeError>(held_src.contains(box) && held_dst.contains(box), "copyBox: box ", box,
                      " is not held by both '", src.label(), "' and '", dst.label(), "'");
  Kokkos::deep_copy(boxView(dst, box), boxView(src, box));
}

TensorSpec Redistribute::outputSpec(const std::vector<TensorSpec>& inputs) const {
  require<ShapeError>(inputs.size() == 1, name(), ": Redistribute takes one input");
  TensorSpec s = inputs[0];
  s.dist = Distribution::Replicated;
  return s;
}

void Redistribute::setup(const ProcessGrid& grid, const std::vector<const Activation*>& in,
                         const Activation&) {
  const TensorBlock& mine = in[0]->tensor.block();
  const GridShape& shape = grid.shape();
  _boxes.clear();
  _counts.clear();
  _displs.clear();
  int offset = 0;
  for (int r = 0; r < shape.spatialSize(); ++r) {
    GridCoords c = shape.coordsOf(r);
    c.n = grid.coords().n;
    const Box b = TensorBlock::forGrid(mine.globalShape(), shape, c, mine.halo()).owned();
    const index_t count = mine.localSamples() * mine.channels() * b.size();
    require(count < (index_t(1) << 31), name(), ": block too large for one MPI_Allgatherv");
    _boxes.push_back(b);
    _counts.push_back(int(count));
    _displs.push_back(offset);
    offset += int(count);
  }
}

void Redistribute::forward(RunContext& ctx, const std::vector<const Activation*>& in,
                           Activation& out) {
  ScopedTimer timer(ctx.timers, name(), Phase::Redistribute);
  const Tensor& x = in[0]->tensor;
  const int me = ctx.grid->spatialRank();
  const index_t nl = x.block().localSamples(), c = x.block().channels();
  const Box& mine = _boxes[std::size_t(me)];
  Dense local(Kokkos::view_alloc("halo3d::redistribute::local", Kokkos::WithoutInitializing), nl, c,
              mine.extent(0), mine.extent(1), mine.extent(2));
  Kokkos::deep_copy(local, boxView(x, mine));
  auto local_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), local);
  std::vector<real> all(std::size_t(_displs.back() + _counts.back()));
  checkMpi(MPI_Allgatherv(local_host.data(), _counts[std::size_t(me)], mpiType<real>(), all.data(),
                          _counts.data(), _displs.data(), mpiType<real>(), ctx.grid->spatialComm()),
           "Redistribute MPI_Allgatherv");
  for (std::size_t r = 0; r < _boxes.size(); ++r) {
    const Box& b = _boxes[r];
    HostDense part(all.data() + _displs[r], nl, c, b.extent(0), b.extent(1), b.extent(2));
    Dense dev(Kokkos::view_alloc("halo3d::redistribute::part", Kokkos::WithoutInitializing), nl, c,
              b.extent(0), b.extent(1), b.extent(2));
    Kokkos::deep_copy(dev, part);
    Kokkos::deep_copy(boxView(out.tensor, b), dev);
  }
}

void Redistribute::backward(RunContext& ctx, const std::vector<const Activation*>& in,
                            const Activation&, const Activation& dout,
                            const std::vector<Activation*>& din) {
  ScopedTimer timer(ctx.timers, name(), Phase::Compute);
  if (din[0]) copyBox(dout.tensor, din[0]->tensor, in[0]->owned());
}

}  // namespace halo3d::nn
