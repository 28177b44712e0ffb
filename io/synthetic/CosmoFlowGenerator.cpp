#include "halo3d/io/synthetic/CosmoFlowGenerator.hpp"

#include <fftw3.h>

#include <cmath>
#include <memory>
#include <mutex>

#include "halo3d/core/Error.hpp"

namespace halo3d {

std::array<float, 4> CosmoFlowRanges::normalise(const CosmoFlowParams& p) const {
  const auto v = p.asArray(), a = lo.asArray(), b = hi.asArray();
  std::array<float, 4> out{};
  for (int i = 0; i < 4; ++i)
    out[std::size_t(i)] = float(2.0 * (v[i] - a[i]) / (b[i] - a[i]) - 1.0);
  return out;
}

CosmoFlowParams CosmoFlowRanges::denormalise(const std::array<float, 4>& unit) const {
  const auto a = lo.asArray(), b = hi.asArray();
  double v[4];
  for (int i = 0; i < 4; ++i)
    v[i] = a[i] + (double(unit[std::size_t(i)]) + 1.0) * 0.5 * (b[i] - a[i]);
  return {v[0], v[1], v[2], v[3]};
}

CosmoFlowParams drawCosmoFlowParams(std::uint64_t seed, index_t index,
                                    const CosmoFlowRanges& ranges) {
  CounterRng rng(seed, 3 * std::uint64_t(index));
  const auto a = ranges.lo.asArray(), b = ranges.hi.asArray();
  double v[4];
  for (int i = 0; i < 4; ++i)
    v[i] = a[i] + rng.uniform() * (b[i] - a[i]);
  return {v[0], v[1], v[2], v[3]};
}

namespace {

struct FftwFree {
  void operator()(void* p) const { fftwf_free(p); }
};

// FFTW's planner is not thread-safe; executing a plan is.
std::mutex& plannerMutex() {
  static std::mutex m;
  return m;
}

// The unit-variance Gaussian field g of the header, (N, N, N).
std::vector<float> gaussianField(const CosmoFlowParams& p, index_t n, std::uint64_t seed,
                                 index_t index) {
  const std::size_t cells = std::size_t(n * n * n);
  const index_t nh = n / 2 + 1;
  std::unique_ptr<float[], FftwFree> real(static_cast<float*>(fftwf_malloc(sizeof(float) * cells)));
  std::unique_ptr<fftwf_complex[], FftwFree> modes(
      static_cast<fftwf_complex*>(fftwf_malloc(sizeof(fftwf_complex) * std::size_t(n * n * nh))));
  require(real && modes, "synthetic CosmoFlow: out of memory for a ", n, "^3 field");
  fftwf_plan forward, backward;
  {
    std::lock_guard<std::mutex> lock(plannerMutex());
    forward = fftwf_plan_dft_r2c_3d(int(n), int(n), int(n), real.get(), modes.get(), FFTW_ESTIMATE);
    backward =
        fftwf_plan_dft_c2r_3d(int(n), int(n), int(n), modes.get(), real.get(), FFTW_ESTIMATE);
  }
  CounterRng noise(seed, 3 * std::uint64_t(index) + 1);
  for (std::size_t i = 0; i < cells; ++i)
    real[i] = float(noise.normal());
  fftwf_execute(forward);
  // Frequencies in cycles per box; the turnover is a fraction of Nyquist (n / 2 cycles).
  const double kt = std::max(1.0, p.turnover * double(n) / 2.0);
  auto freq = [n](index_t i) { return double(i <= n / 2 ? i : i - n); };
  for (index_t x = 0; x < n; ++x)
    for (index_t y = 0; y < n; ++y)
      for (index_t z = 0; z < nh; ++z) {
        const double k = std::sqrt(freq(x) * freq(x) + freq(y) * freq(y) + double(z * z)),
                     q = k / kt;
        // Variance per log k, k^3 P(k) = q^4 / (1 + q^(4 + slope)): rises to a peak near kt, then
        // falls as k^-slope, so kt is the dominant scale and slope the small-scale share.
        const double amp =
            k == 0 ? 0.0
                   : std::sqrt(std::pow(q, 4.0) / (1.0 + std::pow(q, 4.0 + p.slope)) / (k * k * k));
        fftwf_complex& m = modes[std::size_t((x * n + y) * nh + z)];
        m[0] = float(m[0] * amp);
        m[1] = float(m[1] * amp);
      }
  fftwf_execute(backward);
  {
    std::lock_guard<std::mutex> lock(plannerMutex());
    fftwf_destroy_plan(forward);
    fftwf_destroy_plan(backward);
  }
  double sum = 0, sum2 = 0;
  for (std::size_t i = 0; i < cells; ++i) {
    sum += real[i];
    sum2 += double(real[i]) * real[i];
  }
  const double mean = sum / double(cells);
  const double sd = std::sqrt(std::max(1e-30, sum2 / double(cells) - mean * mean));
  std::vector<float> g(cells);
  for (std::size_t i = 0; i < cells; ++i)
    g[i] = float((real[i] - mean) / sd);
  return g;
}

}  // namespace

std::vector<float> generateCosmoFlowCounts(const CosmoFlowParams& p, const CosmoFlowSpec& spec,
                                           std::uint64_t seed, index_t index) {
  require<InputError>(spec.size >= 2, "synthetic CosmoFlow size ", spec.size, " must be >= 2");
  require<InputError>(spec.channels >= 1, "synthetic CosmoFlow channels ", spec.channels,
                      " must be >= 1");
  require<InputError>(spec.mean_count > 0, "synthetic CosmoFlow mean count ", spec.mean_count,
                      " must be > 0");
  const index_t n = spec.size;
  const std::size_t cells = std::size_t(n * n * n);
  const std::vector<float> g = gaussianField(p, n, seed, index);
  std::vector<float> out(cells * std::size_t(spec.channels));
  std::vector<double> rho(cells);
  CounterRng counts(seed, 3 * std::uint64_t(index) + 2);
  for (index_t c = 0; c < spec.channels; ++c) {
    const double growth = 1.0 / (1.0 + 0.5 * double(c));
    double total = 0;
    for (std::size_t i = 0; i < cells; ++i) {
      const double x = g[i];
      rho[i] = std::exp(p.amplitude * growth * (x + p.nonlinearity * (x * x - 1.0)));
      total += rho[i];
    }
    const double scale = spec.mean_count * double(cells) / total;
    float* dst = out.data() + std::size_t(c) * cells;
    for (std::size_t i = 0; i < cells; ++i)
      dst[i] = float(counts.poisson(scale * rho[i]));
  }
  return out;
}

}  // namespace halo3d
