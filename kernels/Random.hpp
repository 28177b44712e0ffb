#pragma once
// Counter-based random numbers: Philox-4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011), the generator of Random123, cuRAND and PyTorch. A draw is
// a pure function of (key, counter), so each cell gets its number from its own coordinates, on any
// rank, in any order, on the host or a device: a dropout mask never depends on the partition or the
// thread count.
//
// halo3d's streams: key = the run's 64-bit seed; counter = (global index / 4 as 64 bits, step,
// layer). One Philox block gives four words, for four consecutive global indices.

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace halo3d::kernels {

struct Philox4x32 {
  struct Counter {
    std::uint32_t v[4];
  };
  struct Key {
    std::uint32_t v[2];
  };

  // The ten rounds of Philox-4x32 on `counter` under `key`; matches Random123's known-answer
  // vectors.
  static KOKKOS_INLINE_FUNCTION Counter generate(Counter ctr, Key key) {
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        key.v[0] += kWeyl0;
        key.v[1] += kWeyl1;
      }
      const std::uint64_t p0 = std::uint64_t(kMul0) * ctr.v[0];
      const std::uint64_t p1 = std::uint64_t(kMul1) * ctr.v[2];
      const Counter next{{std::uint32_t(p1 >> 32) ^ ctr.v[1] ^ key.v[0], std::uint32_t(p1),
                          std::uint32_t(p0 >> 32) ^ ctr.v[3] ^ key.v[1], std::uint32_t(p0)}};
      ctr = next;
    }
    return ctr;
  }

 private:
  static constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  static constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
};

// What a stream of random numbers is keyed by: the run's seed, the optimizer step and the layer's
// index. Two streams that differ in any field are independent.
struct RandomStream {
  std::uint64_t seed = 0;
  std::uint32_t step = 0;
  std::uint32_t layer = 0;
};

// The four words of global indices 4 block .. 4 block + 3: word k is randomBits(stream, 4 block +
// k). A loop over consecutive indices draws once per block.
KOKKOS_INLINE_FUNCTION Philox4x32::Counter randomBlock(const RandomStream& stream,
                                                       std::uint64_t block) {
  const Philox4x32::Counter ctr{
      {std::uint32_t(block), std::uint32_t(block >> 32), stream.step, stream.layer}};
  const Philox4x32::Key key{{std::uint32_t(stream.seed), std::uint32_t(stream.seed >> 32)}};
  return Philox4x32::generate(ctr, key);
}

// 32 random bits for global index `index` (e.g. the C-order linear index of a cell in the global
// tensor).
KOKKOS_INLINE_FUNCTION std::uint32_t randomBits(const RandomStream& stream, std::uint64_t index) {
  return randomBlock(stream, index >> 2).v[index & 3];
}

// Uniform in [0, 1): bits / 2^32, exact in double.
KOKKOS_INLINE_FUNCTION double uniform01(std::uint32_t bits) {
  return double(bits) * 0x1p-32;
}

}  // namespace halo3d::kernels
