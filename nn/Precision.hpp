#pragma once
// The precision of a run's activations: chosen when the model is built (Model::build), not when the
// library is compiled. In bf16 every activation and every activation gradient (all the backward
// pass saves, the model's input included) and every halo and redistribution message holds bf16;
// parameters, their gradients, the optimizer state, statistics and losses stay float (the master
// copy the optimizer updates), and kernels accumulate in float. fp32 keeps the library's scalar
// `real` throughout.
//
// bf16 needs real = float: the float64 test library (halo3d_nn_fp64) refuses it, because its fp32
// kernels would widen bf16 to double and the precision would mean something else there.

#include <cstddef>
#include <string>
#include <type_traits>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/nn/Real.hpp"

namespace halo3d::nn {

enum class Precision { fp32, bf16 };

// Every precision, in the order --precision lists them.
inline constexpr Precision kPrecisions[] = {Precision::fp32, Precision::bf16};

inline const char* toString(Precision p) {
  return p == Precision::bf16 ? "bf16" : "fp32";
}

// "fp32" or "bf16" (as --precision takes them); InputError naming the accepted values otherwise.
inline Precision parsePrecision(const std::string& s) {
  if (s == "fp32") return Precision::fp32;
  if (s == "bf16") return Precision::bf16;
  throw InputError(concat("unknown precision '", s, "': expected fp32 or bf16"));
}

// Bytes of one activation element in precision p (fp32: 4, bf16: 2).
constexpr std::size_t elementBytes(Precision p) {
  return p == Precision::bf16 ? sizeof(bf16) : sizeof(float);
}

// Bytes of one activation element of this library in precision p: fp32 means the library's
// `real` (8 bytes in the float64 test library).
constexpr std::size_t activationElementBytes(Precision p) {
  return p == Precision::bf16 ? sizeof(bf16) : sizeof(real);
}

// Whether this build of the library can run in precision p.
constexpr bool precisionAvailable(Precision p) {
  return p == Precision::fp32 || std::is_same<real, float>::value;
}

// Throws InputError if this build cannot run in precision p.
inline void requirePrecisionAvailable(Precision p) {
  require<InputError>(precisionAvailable(p), "precision ", toString(p),
                      " needs the float32 layer stack; this library computes in ", sizeof(real) * 8,
                      "-bit floats (the float64 test build) and runs fp32 only");
}

}  // namespace halo3d::nn
