#pragma once
// Counter-based random numbers for io/: the n-th draw of stream (seed, stream) is a pure function
// of (seed, stream, n), so shuffles and synthetic samples never depend on the rank count or on the
// order in which ranks produce them. The distributions are written out here (not
// std::*_distribution, whose algorithms differ between standard libraries) so that a seed gives the
// same data everywhere.

#include <cmath>
#include <cstdint>

namespace halo3d {

// The splitmix64 finaliser: a bijective 64-bit mix.
inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

class CounterRng {
 public:
  CounterRng(std::uint64_t seed, std::uint64_t stream)
      : _key(mix64(mix64(seed + 0x9e3779b97f4a7c15ULL) ^ (stream * 0xd1342543de82ef95ULL + 1))) {}

  std::uint64_t next() { return mix64(_key ^ mix64(++_counter * 0x9e3779b97f4a7c15ULL)); }
  // Uniform in the open interval (0, 1), 53 random bits.
  double uniform() { return (double(next() >> 11) + 0.5) * 0x1.0p-53; }
  // Uniform integer in [0, n), n >= 1, without modulo bias (rejection).
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = ~std::uint64_t(0) - (~std::uint64_t(0) % n);
    std::uint64_t x = next();
    while (x >= limit)
      x = next();
    return x % n;
  }
  // Standard normal (Box-Muller; the second value of each pair is kept for the next call).
  double normal() {
    if (_has_spare) {
      _has_spare = false;
      return _spare;
    }
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    const double t = 6.283185307179586 * uniform();
    _spare = r * std::sin(t);
    _has_spare = true;
    return r * std::cos(t);
  }
  // Poisson with mean `lambda` >= 0: multiplication for small means, Hoermann's PTRS (as numpy)
  // otherwise.
  std::int64_t poisson(double lambda) {
    if (lambda <= 0) return 0;
    if (lambda < 10) {
      const double limit = std::exp(-lambda);
      double p = uniform();
      std::int64_t k = 0;
      while (p > limit) {
        p *= uniform();
        ++k;
      }
      return k;
    }
    const double slam = std::sqrt(lambda), loglam = std::log(lambda);
    const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
      const double u = uniform() - 0.5, v = uniform(), us = 0.5 - std::fabs(u);
      const double k = std::floor((2 * a / us + b) * u + lambda + 0.43);
      if (us >= 0.07 && v <= vr) return std::int64_t(k);
      if (k < 0 || (us < 0.013 && v > us)) continue;
      if (std::log(v) + std::log(invalpha) - std::log(a / (us * us) + b) <=
          -lambda + k * loglam - std::lgamma(k + 1))
        return std::int64_t(k);
    }
  }

 private:
  std::uint64_t _key;
  std::uint64_t _counter = 0;
  double _spare = 0;
  bool _has_spare = false;
};

}  // namespace halo3d
