#include "halo3d/nn/layers/Redistribute.hpp"

#include "halo3d/comm/Communicator.hpp"
#include "halo3d/comm/MpiTraits.hpp"
#include "halo3d/core/Error.hpp"

namespace halo3d::nn {

namespace {

// The view of global box `box` inside tensor t's allocation.
template <class T>
auto boxView(const HaloTensor<T>& t, const Box& box) {
  const Extents3 lo = t.toLocal(box.min());
  return Kokkos::subview(t.view(), Kokkos::ALL, Kokkos::ALL,
                         Kokkos::make_pair(lo[0], lo[0] + box.extent(0)),
                         Kokkos::make_pair(lo[1], lo[1] + box.extent(1)),
                         Kokkos::make_pair(lo[2], lo[2] + box.extent(2)));
}

template <class T>
using HostDense = Kokkos::View<T*****, Kokkos::LayoutRight, Kokkos::HostSpace,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using Dense = Kokkos::View<T*****, Kokkos::LayoutRight, Memory>;

template <class T>
void copyBoxOf(const HaloTensor<T>& src, const HaloTensor<T>& dst, const Box& box) {
  const Box held_src =
      src.block().owned().grown(src.block().halo().loExtents(), src.block().halo().hiExtents());
  const Box held_dst =
      dst.block().owned().grown(dst.block().halo().loExtents(), dst.block().halo().hiExtents());
  require<ShapeError>(held_src.contains(box) && held_dst.contains(box), "copyBox: box ", box,
                      " is not held by both '", src.label(), "' and '", dst.label(), "'");
  Kokkos::deep_copy(boxView(dst, box), boxView(src, box));
}

// Gathers every spatial rank's owned box of x into out (both of element type T: the messages carry
// the activation's own precision).
template <class T>
void allgatherBoxes(const HaloTensor<T>& x, const HaloTensor<T>& out, const std::vector<Box>& boxes,
                    const std::vector<int>& counts, const std::vector<int>& displs, int me,
                    MPI_Comm comm) {
  const index_t nl = x.block().localSamples(), c = x.block().channels();
  const Box& mine = boxes[std::size_t(me)];
  Dense<T> local(Kokkos::view_alloc("halo3d::redistribute::local", Kokkos::WithoutInitializing), nl,
                 c, mine.extent(0), mine.extent(1), mine.extent(2));
  Kokkos::deep_copy(local, boxView(x, mine));
  auto local_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), local);
  std::vector<T> all(std::size_t(displs.back() + counts.back()));
  checkMpi(MPI_Allgatherv(local_host.data(), counts[std::size_t(me)], mpiType<T>(), all.data(),
                          counts.data(), displs.data(), mpiType<T>(), comm),
           "Redistribute MPI_Allgatherv");
  for (std::size_t r = 0; r < boxes.size(); ++r) {
    const Box& b = boxes[r];
    HostDense<T> part(all.data() + displs[r], nl, c, b.extent(0), b.extent(1), b.extent(2));
    Dense<T> dev(Kokkos::view_alloc("halo3d::redistribute::part", Kokkos::WithoutInitializing), nl,
                 c, b.extent(0), b.extent(1), b.extent(2));
    Kokkos::deep_copy(dev, part);
    Kokkos::deep_copy(boxView(out, b), dev);
  }
}

}  // namespace

void copyBox(const Tensor& src, const Tensor& dst, const Box& box) {
  copyBoxOf(src, dst, box);
}

void copyBox(const TensorBf16& src, const TensorBf16& dst, const Box& box) {
  copyBoxOf(src, dst, box);
}

TensorSpec Redistribute::outputSpec(const std::vector<TensorSpec>& inputs) const {
  require<ShapeError>(inputs.size() == 1, name(), ": Redistribute takes one input");
  TensorSpec s = inputs[0];
  s.dist = Distribution::Replicated;
  return s;
}

void Redistribute::setup(const ProcessGrid& grid, const std::vector<const Activation*>& in,
                         const Activation&) {
  const TensorBlock& mine = in[0]->block();
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
  const int me = ctx.grid->spatialRank();
  const MPI_Comm comm = ctx.grid->spatialComm();
  if (in[0]->isBf16())
    allgatherBoxes(in[0]->bf16Tensor(), out.bf16Tensor(), _boxes, _counts, _displs, me, comm);
  else
    allgatherBoxes(in[0]->floatTensor(), out.floatTensor(), _boxes, _counts, _displs, me, comm);
}

void Redistribute::backward(RunContext& ctx, const std::vector<const Activation*>& in,
                            const Activation&, const Activation& dout,
                            const std::vector<Activation*>& din) {
  ScopedTimer timer(ctx.timers, name(), Phase::Compute);
  if (!din[0]) return;
  if (dout.isBf16())
    copyBox(dout.bf16Tensor(), din[0]->bf16Tensor(), in[0]->owned());
  else
    copyBox(dout.tensor, din[0]->tensor, in[0]->owned());
}

}  // namespace halo3d::nn
