#pragma once
// Shape checks of the three conv3d passes, shared by every implementation (optimized, team, generic
// and reference), so that a bad call fails the same way whichever path would have run it. Each
// check throws ShapeError at the kernel boundary, naming the tensors' labels, shapes and boxes.

#include <Kokkos_Core.hpp>

#include <array>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/HaloWidths.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels::impl {

// Keeps a parameter out of template argument deduction, so that Views convert (non-const to const,
// default layout to LayoutRight) instead of failing to deduce.
template <class T>
struct NonDeduced {
  using type = T;
};

// Parameter Views of the conv3d kernels, in the memory space of the tensors, all LayoutRight:
// weights (O, I, kD, kH, kW), bias (O) or extent 0 for "no bias", and their gradients.
template <class T, class MemorySpace>
using Conv3dWeights =
    typename NonDeduced<Kokkos::View<const T*****, Kokkos::LayoutRight, MemorySpace>>::type;
template <class T, class MemorySpace>
using Conv3dBias =
    typename NonDeduced<Kokkos::View<const T*, Kokkos::LayoutRight, MemorySpace>>::type;
template <class T, class MemorySpace>
using Conv3dWeightsGrad =
    typename NonDeduced<Kokkos::View<T*****, Kokkos::LayoutRight, MemorySpace>>::type;
template <class T, class MemorySpace>
using Conv3dBiasGrad =
    typename NonDeduced<Kokkos::View<T*, Kokkos::LayoutRight, MemorySpace>>::type;

// "'label' (e0, e1, ...)": how errors name a parameter View.
template <class View>
std::string describeView(const View& v) {
  std::array<index_t, View::rank> e{};
  for (unsigned k = 0; k < View::rank; ++k)
    e[k] = index_t(v.extent(k));
  return concat("'", v.label(), "' of shape ", e);
}

// Weights must be (O, I, kD, kH, kW) with O, I the channels of the output and input tensors.
template <class WeightView>
void requireWeightShape(const char* kernel, const WeightView& w, index_t out_channels,
                        index_t in_channels, const WindowGeometry& g) {
  const std::array<index_t, 5> expected{out_channels, in_channels, g.kernel[0], g.kernel[1],
                                        g.kernel[2]};
  bool ok = true;
  for (int k = 0; k < 5; ++k)
    ok = ok && index_t(w.extent(k)) == expected[k];
  require<ShapeError>(ok, kernel, ": weights ", describeView(w),
                      " do not match the expected (O, I, kD, kH, kW) = ", expected,
                      " (output channels, input channels, kernel)");
}

// A bias has extent 0 (no bias) or one entry per output channel.
template <class BiasView>
void requireBiasShape(const char* kernel, const BiasView& b, index_t out_channels) {
  require<ShapeError>(b.extent(0) == 0 || index_t(b.extent(0)) == out_channels, kernel, ": bias ",
                      describeView(b), " must have extent 0 (no bias) or ", out_channels,
                      " (output channels)");
}

// The output volume of tensor `out` must be the window output of the volume of `in`.
template <class In, class Out>
void requireOutputVolume(const char* kernel, const In& in, const Out& out,
                         const WindowGeometry& g) {
  const Extents3 expected = g.outputExtents(in.block().globalExtents());
  require<ShapeError>(out.block().globalExtents() == expected, kernel, ": ", describe(out),
                      " has volume ", out.block().globalExtents(), " but the window ", g.kernel,
                      " (stride ", g.stride, ", dilation ", g.dilation, ", padding ", g.padding,
                      ") of the volume ", in.block().globalExtents(), " of ", describe(in),
                      " gives ", expected);
}

// The global input cells that the output cells `out_box` read (empty if out_box is empty).
inline Box inputWindowOf(const WindowGeometry& g, const Box& out_box) {
  if (out_box.empty()) return Box();
  Box::point_type lo, hi;
  for (int d = 0; d < 3; ++d) {
    const auto win = g.inputWindow(d, out_box.min(d), out_box.max(d));
    lo[d] = win[0];
    hi[d] = win[1];
  }
  return Box(lo, hi);
}

// Every check of conv3dForward(x, w, b, g, y, out_box).
template <class XT, class WeightView, class BiasView, class YT>
void checkForward(const XT& x, const WeightView& w, const BiasView& b, const WindowGeometry& g,
                  const YT& y, const Box& out_box) {
  const char* k = "conv3dForward";
  g.validate();
  requireSameSamples(k, x, y);
  requireWeightShape(k, w, y.block().channels(), x.block().channels(), g);
  requireBiasShape(k, b, y.block().channels());
  requireOutputVolume(k, x, y, g);
  requireOwned(k, y, out_box);
  requireAllocated(k, x, inputWindowOf(g, out_box), "the input window");
}

// Every check of conv3dBackwardData(dy, w, g, dx, dx_box, dy_box). dx_box may hold ghost cells of
// dx, but not cells past the volume: those ghosts are the zero padding and must stay zero.
template <class DyT, class WeightView, class DxT>
void checkBackwardData(const DyT& dy, const WeightView& w, const WindowGeometry& g, const DxT& dx,
                       const Box& dx_box, const Box& dy_box) {
  const char* k = "conv3dBackwardData";
  g.validate();
  requireSameSamples(k, dy, dx);
  requireWeightShape(k, w, dy.block().channels(), dx.block().channels(), g);
  requireOutputVolume(k, dx, dy, g);
  requireAllocated(k, dx, dx_box, "the dx box");
  require<ShapeError>(Box::fromExtents(dx.block().globalExtents()).contains(dx_box), k,
                      ": the dx box ", dx_box, " reaches past the volume ",
                      dx.block().globalExtents(), " of ", describe(dx),
                      " (ghosts past the volume are the zero padding)");
  requireAllocated(k, dy, dy_box, "the dy box");
}

// Every check of conv3dBackwardFilter(x, dy, g, dw, db, out_box).
template <class XT, class DyT, class WeightView, class BiasView>
void checkBackwardFilter(const XT& x, const DyT& dy, const WindowGeometry& g, const WeightView& dw,
                         const BiasView& db, const Box& out_box) {
  const char* k = "conv3dBackwardFilter";
  g.validate();
  requireSameSamples(k, x, dy);
  requireWeightShape(k, dw, dy.block().channels(), x.block().channels(), g);
  requireBiasShape(k, db, dy.block().channels());
  requireOutputVolume(k, x, dy, g);
  require<ShapeError>(dy.block().owned().contains(out_box), k, ": output box ", out_box,
                      " is not inside the owned cells of ", describe(dy));
  requireAllocated(k, x, inputWindowOf(g, out_box), "the input window");
}

}  // namespace halo3d::kernels::impl
