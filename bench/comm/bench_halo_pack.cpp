// The pack and unpack kernels of the halo exchange (comm/impl/HaloPack.hpp) alone, without MPI: the
// 26 neighbour regions (faces, edges, corners) of a (1, 16, 64, 64, 64) float block with ghosts of
// the given width on every side, packed from the owned side into one buffer and unpacked (assigned,
// or added as the backward scatter does) into the ghost side. Built in the kernels-only
// configuration too, so that a GPU node without MPI times what the exchange costs on the device
// besides the messages (scripts/device_check.sh).
//
// Arguments: {halo width, path: 0 = Fastest (host code on a host space, device code on a GPU),
// 1 = Device (the device code on any space)}. Rates: bytes_per_second counts the bytes moved once
// (the packed payload); `regions` is 26.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>

#include <vector>

#include "halo3d/comm/impl/HaloPack.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "support/ManualTime.hpp"

namespace {

using halo3d::Box;
using halo3d::index_t;
using halo3d::KernelPath;
using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using View5 = Kokkos::View<float*****, Kokkos::LayoutRight, Memory>;
using Buffer = Kokkos::View<float*, Memory>;

constexpr index_t kC = 16, kE = 64;

struct Region {
  Box owned_side, ghost_side;
  std::size_t offset;
};

// The 26 neighbour regions of a block of kE^3 owned cells with `h` ghosts per side, in local
// indices, and their offsets in one buffer.
std::vector<Region> regions(index_t h, std::size_t& total) {
  std::vector<Region> out;
  total = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (dz == 0 && dy == 0 && dx == 0) continue;
        const int dir[3] = {dz, dy, dx};
        halo3d::Extents3 olo, ohi, glo, ghi;
        for (int a = 0; a < 3; ++a) {
          if (dir[a] < 0) {
            olo[a] = h, ohi[a] = 2 * h, glo[a] = 0, ghi[a] = h;
          } else if (dir[a] > 0) {
            olo[a] = kE, ohi[a] = kE + h, glo[a] = kE + h, ghi[a] = kE + 2 * h;
          } else {
            olo[a] = glo[a] = h, ohi[a] = ghi[a] = kE + h;
          }
        }
        const Box owned(olo, ohi), ghost(glo, ghi);
        out.push_back({owned, ghost, total});
        total += std::size_t(owned.size()) * std::size_t(kC);
      }
  return out;
}

void haloPack(benchmark::State& state, int mode) {
  const index_t h = state.range(0);
  const KernelPath path = state.range(1) != 0 ? KernelPath::Device : KernelPath::Fastest;
  std::size_t total = 0;
  const std::vector<Region> rs = regions(h, total);
  const View5 v("block", 1, kC, kE + 2 * h, kE + 2 * h, kE + 2 * h);
  const Buffer buf("buffer", total);
  Kokkos::deep_copy(v, 1.0f);
  const Exec exec;
  auto run = [&] {
    for (const Region& r : rs) {
      if (mode == 0)
        halo3d::impl::packRegion(exec, v, r.owned_side, buf, r.offset, path);
      else
        halo3d::impl::unpackRegion(exec, v, r.ghost_side, buf, r.offset, mode == 2, path);
    }
  };
  halo3d::bench::timeFenced(state, exec, run);
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(total * sizeof(float)));
  state.counters["regions"] = double(rs.size());
  state.SetLabel(halo3d::kernelPathName(path));
}

void registerAll(const char* name, int mode) {
  auto* b = benchmark::RegisterBenchmark(name, haloPack, mode);
  b->ArgNames({"halo", "device"})->UseManualTime()->Unit(benchmark::kMicrosecond);
  for (int h : {1, 2})
    for (int device : {0, 1})
      b->Args({h, device});
}

const bool registered = [] {
  registerAll("halo_pack", 0);
  registerAll("halo_unpack", 1);
  registerAll("halo_unpack_add", 2);
  return true;
}();

}  // namespace
