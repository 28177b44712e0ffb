#pragma once
// Scatter a whole global tensor from one rank to the owned blocks of every rank, and gather it
// back. Used by tests (compare P-rank results with the 1-rank result) and as the I/O fallback when
// a file cannot be read by hyperslabs. Point-to-point from the root, one block at a time, so the
// root holds the global tensor plus one block.

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <vector>

#include "halo3d/comm/Communicator.hpp"
#include "halo3d/comm/MpiTraits.hpp"
#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/HaloTensor.hpp"

namespace halo3d {

// A whole global tensor (N, C, D, H, W) in host memory, C order.
template <class T>
using GlobalHostTensor = Kokkos::View<T*****, Kokkos::LayoutRight, Kokkos::HostSpace>;

namespace impl {

// The block rank `r` of `grid` holds of a tensor laid out like `mine`.
inline TensorBlock blockOfRank(const TensorBlock& mine, const GridShape& grid, int r) {
  return TensorBlock::forGrid(mine.globalShape(), grid, grid.coordsOf(r), mine.halo());
}

template <class T>
void copyBlock(const GlobalHostTensor<T>& global, const TensorBlock& b, std::vector<T>& buf,
               bool to_global) {
  const Box& o = b.owned();
  const index_t C = b.channels();
  buf.resize(std::size_t(b.localSamples() * C * o.size()));
  std::size_t k = 0;
  for (index_t n = b.sampleBegin(); n < b.sampleEnd(); ++n)
    for (index_t c = 0; c < C; ++c)
      for (index_t d = o.min(0); d < o.max(0); ++d)
        for (index_t h = o.min(1); h < o.max(1); ++h)
          for (index_t w = o.min(2); w < o.max(2); ++w, ++k) {
            if (to_global)
              global(n, c, d, h, w) = buf[k];
            else
              buf[k] = global(n, c, d, h, w);
          }
}

// Moves a contiguous host block (samples, C, d, h, w) into / out of the owned cells of `t`.
template <class T, class M>
void hostBlockToOwned(const std::vector<T>& buf, const HaloTensor<T, M>& t) {
  const auto owned = t.owned();
  Kokkos::View<T*****, Kokkos::LayoutRight, M> dense(
      Kokkos::view_alloc("halo3d::distribute", Kokkos::WithoutInitializing), owned.extent(0),
      owned.extent(1), owned.extent(2), owned.extent(3), owned.extent(4));
  Kokkos::View<const T*****, Kokkos::LayoutRight, Kokkos::HostSpace,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      host(buf.data(), owned.extent(0), owned.extent(1), owned.extent(2), owned.extent(3),
           owned.extent(4));
  Kokkos::deep_copy(dense, host);
  Kokkos::deep_copy(owned, dense);
}

template <class T, class M>
void ownedToHostBlock(const HaloTensor<T, M>& t, std::vector<T>& buf) {
  const auto owned = t.owned();
  Kokkos::View<T*****, Kokkos::LayoutRight, M> dense(
      Kokkos::view_alloc("halo3d::distribute", Kokkos::WithoutInitializing), owned.extent(0),
      owned.extent(1), owned.extent(2), owned.extent(3), owned.extent(4));
  Kokkos::deep_copy(dense, owned);
  buf.resize(dense.size());
  Kokkos::View<T*****, Kokkos::LayoutRight, Kokkos::HostSpace,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      host(buf.data(), owned.extent(0), owned.extent(1), owned.extent(2), owned.extent(3),
           owned.extent(4));
  Kokkos::deep_copy(host, dense);
}

inline int messageCount(std::size_t n) {
  require(n <= std::size_t(std::numeric_limits<int>::max()), "block of ", n,
          " elements is too large for one MPI message");
  return int(n);
}

}  // namespace impl

// Collective over grid.comm(). Fills the owned cells of every rank's `local` from `global`, which
// is read on `root` only. Throws on every rank if root's global shape differs from the tensors'
// global shape.
template <class T, class M>
void scatterGlobal(const GlobalHostTensor<T>& global, const HaloTensor<T, M>& local,
                   const ProcessGrid& grid, int root = 0) {
  const Shape5 expected = local.block().globalShape();
  int ok = 1;
  if (grid.rank() == root)
    for (int k = 0; k < 5; ++k)
      ok &= index_t(global.extent(k)) == expected[k];
  MPI_Bcast(&ok, 1, MPI_INT, root, grid.comm());
  require<ShapeError>(ok != 0, "scatterGlobal: root's global tensor does not have the shape ",
                      expected, " of tensor '", local.label(), "'");
  std::vector<T> buf;
  if (grid.rank() == root) {
    for (int r = 0; r < grid.size(); ++r) {
      impl::copyBlock(global, impl::blockOfRank(local.block(), grid.shape(), r), buf, false);
      if (r == root)
        impl::hostBlockToOwned(buf, local);
      else
        checkMpi(
            MPI_Send(buf.data(), impl::messageCount(buf.size()), mpiType<T>(), r, 0, grid.comm()),
            "scatterGlobal send");
    }
  } else {
    const TensorBlock& b = local.block();
    buf.resize(std::size_t(b.localSamples() * b.channels() * b.owned().size()));
    checkMpi(MPI_Recv(buf.data(), impl::messageCount(buf.size()), mpiType<T>(), root, 0,
                      grid.comm(), MPI_STATUS_IGNORE),
             "scatterGlobal receive");
    impl::hostBlockToOwned(buf, local);
  }
}

// Collective over grid.comm(). Returns the global tensor assembled from every rank's owned cells on
// `root`, and an empty View elsewhere.
template <class T, class M>
GlobalHostTensor<T> gatherGlobal(const HaloTensor<T, M>& local, const ProcessGrid& grid,
                                 int root = 0) {
  std::vector<T> buf;
  impl::ownedToHostBlock(local, buf);
  if (grid.rank() != root) {
    checkMpi(
        MPI_Send(buf.data(), impl::messageCount(buf.size()), mpiType<T>(), root, 1, grid.comm()),
        "gatherGlobal send");
    return GlobalHostTensor<T>();
  }
  const Shape5 s = local.block().globalShape();
  GlobalHostTensor<T> global("halo3d::gatherGlobal", s[0], s[1], s[2], s[3], s[4]);
  for (int r = 0; r < grid.size(); ++r) {
    const TensorBlock b = impl::blockOfRank(local.block(), grid.shape(), r);
    if (r != root) {
      buf.resize(std::size_t(b.localSamples() * b.channels() * b.owned().size()));
      checkMpi(MPI_Recv(buf.data(), impl::messageCount(buf.size()), mpiType<T>(), r, 1, grid.comm(),
                        MPI_STATUS_IGNORE),
               "gatherGlobal receive");
    } else {
      impl::ownedToHostBlock(local, buf);
    }
    impl::copyBlock(global, b, buf, true);
  }
  return global;
}

}  // namespace halo3d
