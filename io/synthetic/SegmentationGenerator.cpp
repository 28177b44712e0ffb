#include "halo3d/io/synthetic/SegmentationGenerator.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "halo3d/core/Error.hpp"
#include "halo3d/io/Random.hpp"

namespace halo3d {

namespace {

constexpr double kPi = 3.141592653589793;

// An ellipsoid: centre, semi-axes and a rotation (rows of the matrix taking world to body
// coordinates).
struct Ellipsoid {
  std::array<double, 3> centre{}, axes{};
  std::array<std::array<double, 3>, 3> rot{};

  bool contains(double d, double h, double w) const {
    const double p[3] = {d - centre[0], h - centre[1], w - centre[2]};
    double r = 0;
    for (int i = 0; i < 3; ++i) {
      const double q =
          (rot[i][0] * p[0] + rot[i][1] * p[1] + rot[i][2] * p[2]) / axes[std::size_t(i)];
      r += q * q;
    }
    return r <= 1.0;
  }
};

Ellipsoid randomEllipsoid(CounterRng& rng, const std::array<double, 3>& centre, double n, double lo,
                          double hi) {
  Ellipsoid e;
  e.centre = centre;
  for (double& a : e.axes)
    a = std::max(1.0, n * (lo + (hi - lo) * rng.uniform()));
  // Rotation from three Euler angles.
  const double a = 2 * kPi * rng.uniform(), b = kPi * rng.uniform(), c = 2 * kPi * rng.uniform();
  const double ca = std::cos(a), sa = std::sin(a), cb = std::cos(b), sb = std::sin(b),
               cc = std::cos(c), sc = std::sin(c);
  e.rot = {{{ca * cc - sa * cb * sc, -ca * sc - sa * cb * cc, sa * sb},
            {sa * cc + ca * cb * sc, -sa * sc + ca * cb * cc, -ca * sb},
            {sb * sc, sb * cc, cb}}};
  return e;
}

}  // namespace

SegmentationSample generateSegmentationSample(const SegmentationSpec& spec, std::uint64_t seed,
                                              index_t index) {
  require<InputError>(spec.size >= 4, "synthetic segmentation size ", spec.size, " must be >= 4");
  require<InputError>(spec.channels >= 1, "synthetic segmentation channels ", spec.channels,
                      " must be >= 1");
  const index_t n = spec.size;
  const double nd = double(n);
  CounterRng rng(seed, 2 * std::uint64_t(index));
  std::vector<Ellipsoid> organs, lesions;
  const int organ_count = 1 + int(rng.below(3));
  for (int o = 0; o < organ_count; ++o) {
    const std::array<double, 3> c{nd * (0.3 + 0.4 * rng.uniform()),
                                  nd * (0.3 + 0.4 * rng.uniform()),
                                  nd * (0.3 + 0.4 * rng.uniform())};
    organs.push_back(randomEllipsoid(rng, c, nd, 0.12, 0.28));
    const int lesion_count = int(rng.below(3));
    for (int l = 0; l < lesion_count; ++l) {
      // A centre inside the organ, by rejection from its bounding box.
      const Ellipsoid& org = organs.back();
      const double reach = std::max({org.axes[0], org.axes[1], org.axes[2]});
      std::array<double, 3> p = org.centre;
      for (int tries = 0; tries < 64; ++tries) {
        const std::array<double, 3> q{org.centre[0] + reach * (2 * rng.uniform() - 1),
                                      org.centre[1] + reach * (2 * rng.uniform() - 1),
                                      org.centre[2] + reach * (2 * rng.uniform() - 1)};
        if (org.contains(q[0], q[1], q[2])) {
          p = q;
          break;
        }
      }
      lesions.push_back(randomEllipsoid(rng, p, nd, 0.05, 0.12));
    }
  }
  // Smooth background: a few random plane waves.
  std::array<std::array<double, 4>, 3> waves{};
  for (auto& w : waves)
    w = {rng.uniform() * 3, rng.uniform() * 3, rng.uniform() * 3, 2 * kPi * rng.uniform()};

  SegmentationSample s;
  const std::size_t cells = std::size_t(n * n * n);
  s.labels.assign(cells, 0);
  s.volume.assign(cells * std::size_t(spec.channels), 0.0f);
  CounterRng noise(seed, 2 * std::uint64_t(index) + 1);
  for (index_t d = 0; d < n; ++d)
    for (index_t h = 0; h < n; ++h)
      for (index_t w = 0; w < n; ++w) {
        const std::size_t i = std::size_t((d * n + h) * n + w);
        std::int32_t label = 0;
        for (const Ellipsoid& e : organs)
          if (e.contains(double(d), double(h), double(w))) label = 1;
        for (const Ellipsoid& e : lesions)
          if (e.contains(double(d), double(h), double(w))) label = 2;
        s.labels[i] = label;
        double background = 0;
        for (const auto& wv : waves)
          background +=
              (20.0 / 3.0) * std::sin(2 * kPi * (wv[0] * d + wv[1] * h + wv[2] * w) / nd + wv[3]);
        for (index_t c = 0; c < spec.channels; ++c) {
          const double base = label == 0   ? background
                              : label == 1 ? 60.0 + 15.0 * c
                                           : 130.0 - 35.0 * c;
          s.volume[std::size_t(c) * cells + i] = float(base + 15.0 * noise.normal());
        }
      }
  return s;
}

}  // namespace halo3d
