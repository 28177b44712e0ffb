#pragma once
// bf16: bfloat16 as a storage type (1 sign, 8 exponent, 7 mantissa bits: float's range, 3 decimal
// digits). Tensors, saved activations and halo messages may hold it; arithmetic does not: a kernel
// converts to float in registers and accumulates in float. Ours rather than Kokkos's because Kokkos
// 3.4 has no bhalf_t and 4.x's depends on the backend; this one is the same 16 bits everywhere, on
// host and device, so halo messages and checkpoints mean the same on every build.
//
// float -> bf16 rounds to nearest, ties to even, as PyTorch's c10::BFloat16 does: values past the
// largest bf16 round to infinity, NaN stays NaN (quiet), subnormals round like any other value.
// bf16 -> float is exact.

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>

namespace halo3d {

namespace impl {

KOKKOS_INLINE_FUNCTION std::uint32_t floatBits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);  // the defined way to read a float's bits; compiles to a move
  return u;
}

KOKKOS_INLINE_FUNCTION float floatOfBits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// The upper 16 bits of f rounded to nearest even on the 16 dropped bits.
KOKKOS_INLINE_FUNCTION std::uint16_t bf16BitsOf(float f) {
  const std::uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)  // NaN: keep the sign and payload top, force it quiet
    return std::uint16_t((u >> 16) | 0x0040u);
  // Adding 0x7fff rounds up exactly when the dropped half is above 0x8000; the kept lsb breaks the
  // tie toward even. A carry out of the mantissa increments the exponent, up to infinity.
  return std::uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace impl

struct bf16 {
  std::uint16_t bits;

  bf16() = default;
  KOKKOS_INLINE_FUNCTION explicit bf16(float f) : bits(impl::bf16BitsOf(f)) {}
  // Through float, as PyTorch converts double (two roundings; exact for every double that is a
  // float).
  KOKKOS_INLINE_FUNCTION explicit bf16(double d) : bits(impl::bf16BitsOf(float(d))) {}
  KOKKOS_INLINE_FUNCTION explicit bf16(int i) : bits(impl::bf16BitsOf(float(i))) {}
  KOKKOS_INLINE_FUNCTION explicit operator float() const {
    return impl::floatOfBits(std::uint32_t(bits) << 16);
  }
  KOKKOS_INLINE_FUNCTION explicit operator double() const { return double(float(*this)); }

  KOKKOS_INLINE_FUNCTION static bf16 fromBits(std::uint16_t b) {
    bf16 x;
    x.bits = b;
    return x;
  }
  // The one arithmetic storage needs: a scatter-sum adds a ghost's contribution to its owner.
  // Computed in float and rounded once.
  KOKKOS_INLINE_FUNCTION bf16& operator+=(bf16 other) {
    *this = bf16(float(*this) + float(other));
    return *this;
  }
  friend KOKKOS_INLINE_FUNCTION bool operator==(bf16 a, bf16 b) { return a.bits == b.bits; }
  friend KOKKOS_INLINE_FUNCTION bool operator!=(bf16 a, bf16 b) { return a.bits != b.bits; }
};

static_assert(sizeof(bf16) == 2, "bf16 is two bytes: halo messages and files depend on it");

// The value of x rounded through bf16: what storing x as bf16 and reading it back gives.
KOKKOS_INLINE_FUNCTION float roundToBf16(float x) {
  return float(bf16(x));
}

}  // namespace halo3d
