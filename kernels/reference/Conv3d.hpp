#pragma once
// Naive conv3d, kept beside the optimized kernels (kernels/Conv3d.hpp) as the tests' yardstick: the
// same signatures (those with an execution space instance) and checks, plain serial loops on the
// host, sums in double. Backward-data is written in push form (every dy cell scatters into the
// cells it was computed from), the literal transpose of the forward, so that it checks the
// pull-form index arithmetic of the optimized kernels rather than repeating it.

#include <Kokkos_Core.hpp>

#include <vector>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/impl/Conv3dChecks.hpp"
#include "halo3d/kernels/impl/Conv3dIndexing.hpp"

namespace halo3d::kernels::reference {

namespace detail {

template <class MemorySpace>
void requireHost() {
  static_assert(Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible,
                "kernels::reference runs plain host loops: tensors must be host-accessible");
}

}  // namespace detail

// y(n, o, c) = b(o) + sum_{i, k} w(o, i, k) x(n, i, c * s - p + k * dil) for global output cells c
// in out_box. x is (N, I, D, H, W), w (O, I, kD, kH, kW), b (O) or extent 0, y (N, O, Do, Ho, Wo).
template <class ExecSpace, class T>
void conv3dForward(const ExecSpace&, const Tensor<T, ExecSpace>& x,
                   const Conv3dWeightsOn<T, ExecSpace>& w, const Conv3dBiasOn<T, ExecSpace>& b,
                   const WindowGeometry& g, const Tensor<T, ExecSpace>& y, const Box& out_box) {
  detail::requireHost<typename ExecSpace::memory_space>();
  impl::checkForward(x, w, b, g, y, out_box);
  const impl::Conv3dIndexing ix = impl::makeIndexing(g, x, y);
  const auto& xv = x.view();
  const auto& yv = y.view();
  const index_t samples = x.block().localSamples();
  const index_t in_ch = x.block().channels(), out_ch = y.block().channels();
  for (index_t n = 0; n < samples; ++n)
    for (index_t o = 0; o < out_ch; ++o)
      for (index_t d = out_box.min(0); d < out_box.max(0); ++d)
        for (index_t h = out_box.min(1); h < out_box.max(1); ++h)
          for (index_t c = out_box.min(2); c < out_box.max(2); ++c) {
            double acc = b.extent(0) ? double(b(o)) : 0.0;
            for (index_t i = 0; i < in_ch; ++i)
              for (int kd = 0; kd < g.kernel[0]; ++kd)
                for (int kh = 0; kh < g.kernel[1]; ++kh)
                  for (int kw = 0; kw < g.kernel[2]; ++kw)
                    acc += double(w(o, i, kd, kh, kw)) *
                           double(xv(n, i, ix.inputOf(0, d, kd) + ix.in_shift[0],
                                     ix.inputOf(1, h, kh) + ix.in_shift[1],
                                     ix.inputOf(2, c, kw) + ix.in_shift[2]));
            yv(n, o, d + ix.out_shift[0], h + ix.out_shift[1], c + ix.out_shift[2]) = T(acc);
          }
}

// Assigns dx on global input cells dx_box with the contributions of the dy cells in dy_box:
// dx(n, i, q) = sum over (o, k, c in dy_box) with c * s - p + k * dil = q of w(o, i, k) dy(n, o,
// c). dy is (N, O, Do, Ho, Wo), w (O, I, kD, kH, kW), dx (N, I, D, H, W).
template <class ExecSpace, class T>
void conv3dBackwardData(const ExecSpace&, const Tensor<T, ExecSpace>& dy,
                        const Conv3dWeightsOn<T, ExecSpace>& w, const WindowGeometry& g,
                        const Tensor<T, ExecSpace>& dx, const Box& dx_box, const Box& dy_box) {
  detail::requireHost<typename ExecSpace::memory_space>();
  impl::checkBackwardData(dy, w, g, dx, dx_box, dy_box);
  if (dx_box.empty()) return;
  const impl::Conv3dIndexing ix = impl::makeIndexing(g, dx, dy);
  const auto& dyv = dy.view();
  const auto& dxv = dx.view();
  const index_t samples = dx.block().localSamples();
  const index_t in_ch = dx.block().channels(), out_ch = dy.block().channels();
  // Push every dy cell into a dense buffer over dx_box; contributions outside dx_box are dropped.
  const Extents3 e = dx_box.extents();
  std::vector<double> acc(std::size_t(e[0] * e[1] * e[2]));
  for (index_t n = 0; n < samples; ++n)
    for (index_t i = 0; i < in_ch; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (index_t o = 0; o < out_ch; ++o)
        for (index_t d = dy_box.min(0); d < dy_box.max(0); ++d)
          for (index_t h = dy_box.min(1); h < dy_box.max(1); ++h)
            for (index_t c = dy_box.min(2); c < dy_box.max(2); ++c) {
              const double grad =
                  double(dyv(n, o, d + ix.out_shift[0], h + ix.out_shift[1], c + ix.out_shift[2]));
              for (int kd = 0; kd < g.kernel[0]; ++kd)
                for (int kh = 0; kh < g.kernel[1]; ++kh)
                  for (int kw = 0; kw < g.kernel[2]; ++kw) {
                    const Box::point_type q{ix.inputOf(0, d, kd), ix.inputOf(1, h, kh),
                                            ix.inputOf(2, c, kw)};
                    if (!dx_box.contains(q)) continue;
                    acc[std::size_t(((q[0] - dx_box.min(0)) * e[1] + q[1] - dx_box.min(1)) * e[2] +
                                    q[2] - dx_box.min(2))] += double(w(o, i, kd, kh, kw)) * grad;
                  }
            }
      for (index_t d = 0; d < e[0]; ++d)
        for (index_t h = 0; h < e[1]; ++h)
          for (index_t c = 0; c < e[2]; ++c)
            dxv(n, i, d + dx_box.min(0) + ix.in_shift[0], h + dx_box.min(1) + ix.in_shift[1],
                c + dx_box.min(2) + ix.in_shift[2]) =
                T(acc[std::size_t((d * e[1] + h) * e[2] + c)]);
    }
}

// The default dy_box: dy's owned cells.
template <class ExecSpace, class T>
void conv3dBackwardData(const ExecSpace& exec, const Tensor<T, ExecSpace>& dy,
                        const Conv3dWeightsOn<T, ExecSpace>& w, const WindowGeometry& g,
                        const Tensor<T, ExecSpace>& dx, const Box& dx_box) {
  conv3dBackwardData(exec, dy, w, g, dx, dx_box, dy.block().owned());
}

// dw(o, i, k) (+)= sum over samples n and output cells c in out_box of dy(n, o, c) x(n, i, c * s -
// p + k * dil); db(o) (+)= sum of dy(n, o, c) likewise (db of extent 0: no bias). Assigns unless
// `accumulate`.
template <class ExecSpace, class T>
void conv3dBackwardFilter(const ExecSpace&, const Tensor<T, ExecSpace>& x,
                          const Tensor<T, ExecSpace>& dy, const WindowGeometry& g,
                          const Conv3dWeightsGradOn<T, ExecSpace>& dw,
                          const Conv3dBiasGradOn<T, ExecSpace>& db, const Box& out_box,
                          bool accumulate) {
  detail::requireHost<typename ExecSpace::memory_space>();
  impl::checkBackwardFilter(x, dy, g, dw, db, out_box);
  const impl::Conv3dIndexing ix = impl::makeIndexing(g, x, dy);
  const auto& xv = x.view();
  const auto& dyv = dy.view();
  const index_t samples = x.block().localSamples();
  const index_t in_ch = x.block().channels(), out_ch = dy.block().channels();
  auto dyAt = [&](index_t n, index_t o, index_t d, index_t h, index_t c) {
    return double(dyv(n, o, d + ix.out_shift[0], h + ix.out_shift[1], c + ix.out_shift[2]));
  };
  for (index_t o = 0; o < out_ch; ++o) {
    for (index_t i = 0; i < in_ch; ++i)
      for (int kd = 0; kd < g.kernel[0]; ++kd)
        for (int kh = 0; kh < g.kernel[1]; ++kh)
          for (int kw = 0; kw < g.kernel[2]; ++kw) {
            double acc = accumulate ? double(dw(o, i, kd, kh, kw)) : 0.0;
            for (index_t n = 0; n < samples; ++n)
              for (index_t d = out_box.min(0); d < out_box.max(0); ++d)
                for (index_t h = out_box.min(1); h < out_box.max(1); ++h)
                  for (index_t c = out_box.min(2); c < out_box.max(2); ++c)
                    acc +=
                        dyAt(n, o, d, h, c) * double(xv(n, i, ix.inputOf(0, d, kd) + ix.in_shift[0],
                                                        ix.inputOf(1, h, kh) + ix.in_shift[1],
                                                        ix.inputOf(2, c, kw) + ix.in_shift[2]));
            dw(o, i, kd, kh, kw) = T(acc);
          }
    if (db.extent(0) == 0) continue;
    double acc = accumulate ? double(db(o)) : 0.0;
    for (index_t n = 0; n < samples; ++n)
      for (index_t d = out_box.min(0); d < out_box.max(0); ++d)
        for (index_t h = out_box.min(1); h < out_box.max(1); ++h)
          for (index_t c = out_box.min(2); c < out_box.max(2); ++c)
            acc += dyAt(n, o, d, h, c);
    db(o) = T(acc);
  }
}

}  // namespace halo3d::kernels::reference
