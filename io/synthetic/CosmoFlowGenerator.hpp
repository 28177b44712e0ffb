#pragma once
// Synthetic CosmoFlow samples: 4-channel "density cubes" whose statistics are set by 4 parameters
// that a network can learn back (docs/data-format.md has the rationale).
//
//   1. g: a Gaussian random field on an N^3 periodic grid (white noise filtered in Fourier space
//      with FFTW), normalised to unit variance, whose variance per log k is
//      k^3 P(k) ~ q^4 / (1 + q^(4 + slope)),  q = k / kt:
//      kt (turnover) is the scale that dominates, slope how fast power falls below it.
//   2. per channel c ("redshift" z_c = c/2, growth factor D_c = 1/(1 + z_c)), a log-density
//      delta_c = amplitude * D_c * (g + nonlinearity * (g^2 - 1)): amplitude sets the variance,
//      the quadratic term the skewness (a local non-Gaussianity inside the log-normal below).
//   3. rho_c = exp(delta_c) / mean(exp(delta_c)) (log-normal), then
//      counts ~ Poisson(mean_count * rho_c).
//
// A sample is a pure function of (seed, sample index, size, channels): the same on any rank count.

#include <array>
#include <cstdint>
#include <vector>

#include "halo3d/core/Types.hpp"
#include "halo3d/io/Random.hpp"

namespace halo3d {

struct CosmoFlowParams {
  double amplitude = 0.8;     // standard deviation of the log-density at growth 1
  double slope = 2.0;         // high-k fall-off of k^3 P(k) ~ k^-slope
  double turnover = 0.15;     // peak of P(k), as a fraction of the Nyquist frequency
  double nonlinearity = 0.3;  // weight of the quadratic term

  std::array<double, 4> asArray() const { return {amplitude, slope, turnover, nonlinearity}; }
};

// The ranges parameters are drawn from (uniformly); unitPar maps each range onto [-1, 1].
struct CosmoFlowRanges {
  CosmoFlowParams lo{0.4, 1.0, 0.06, 0.0};
  CosmoFlowParams hi{1.2, 3.0, 0.25, 0.6};

  std::array<float, 4> normalise(const CosmoFlowParams& p) const;
  CosmoFlowParams denormalise(const std::array<float, 4>& unit) const;
};

struct CosmoFlowSpec {
  index_t size = 64;  // N: samples are (channels, N, N, N)
  index_t channels = 4;
  double mean_count = 16.0;  // mean Poisson count per voxel
  CosmoFlowRanges ranges;
};

// The parameters of sample `index`: uniform in `ranges`, from (seed, index).
CosmoFlowParams drawCosmoFlowParams(std::uint64_t seed, index_t index,
                                    const CosmoFlowRanges& ranges);

// The counts (channels, N, N, N) of sample `index` with parameters `p`; as floats holding integers.
// Requires size >= 2, channels >= 1 (InputError otherwise).
std::vector<float> generateCosmoFlowCounts(const CosmoFlowParams& p, const CosmoFlowSpec& spec,
                                           std::uint64_t seed, index_t index);

}  // namespace halo3d
