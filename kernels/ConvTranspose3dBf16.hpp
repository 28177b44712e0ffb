#pragma once
// The transposed-convolution passes (ConvTranspose3d.hpp) on bf16 tensors (core/BFloat16.hpp): x,
// y, dy and dx hold bf16; the weights, the bias and their gradients stay float. What is rounded
// where, as PyTorch's bf16 autocast computes it:
//   - forward and backward-data multiply a bf16 activation (x or dy) by the weight rounded to bf16
//     (nearest even), each product exact in float; backward-filter multiplies bf16 x by bf16 dy;
//   - every sum is in float; y and dx are rounded to bf16 once, on the store; dw and db are float
//     (added to their float values when accumulating).
// Argument lists, conventions, boxes and ShapeErrors are those of the fp32 functions with the same
// name minus "Bf16"; read ConvTranspose3d.hpp for the definitions.
//
// Paths: on a host space with KernelPath::Fastest, the float host kernels of ConvTranspose3d.hpp on
// float copies of the bf16 operands and of the bf16-rounded weights (the same products, summed in
// float in the float kernels' order), the destination box rounded to bf16; the copies last for
// the call. Otherwise (the device code, and KernelPath::Device on the host) a generic code
// converting bf16 in registers: one thread per destination value for forward and backward-data,
// one team per weight for backward-filter. Each destination value is summed in one fixed order
// whatever box it is computed in, so box-by-box results are bitwise the whole-box result for
// forward and backward-data, on either path.

#include <Kokkos_Core.hpp>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/ConvTranspose3d.hpp"
#include "halo3d/kernels/ConvTranspose3dGeometry.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

// y(n, o, q) = bf16(b(o) + sum_{i, k} x(n, i, (q + p - k dil) / s) bf16(w(i, o, k))) over the exact
// taps that land in the input volume, for every sample and q in out_box.
template <class ExecSpace, class MemorySpace>
void convTranspose3dForwardBf16(
    const ExecSpace& exec, const HaloTensor<bf16, MemorySpace>& x,
    const typename ConvTranspose3dViews<float, MemorySpace>::weights_type& w,
    const typename ConvTranspose3dViews<float, MemorySpace>::bias_type& b,
    const ConvTranspose3dGeometry& g, const HaloTensor<bf16, MemorySpace>& y, const Box& out_box,
    KernelPath path = KernelPath::Fastest);

// dx(n, c, i) = bf16(sum_{o, k} dy(n, o, i s - p + k dil) bf16(w(c, o, k))) over the taps whose
// output cell is in dy_box, for every sample and input cell i in dx_box.
template <class ExecSpace, class MemorySpace>
void convTranspose3dBackwardDataBf16(
    const ExecSpace& exec, const HaloTensor<bf16, MemorySpace>& dy,
    const typename ConvTranspose3dViews<float, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<bf16, MemorySpace>& dx, const Box& dx_box,
    const Box& dy_box, KernelPath path = KernelPath::Fastest);

// dw(i, o, k) (+)= sum_{n, q in out_box} float(x(n, i, (q + p - k dil) / s)) float(dy(n, o, q)),
// db(o) (+)= sum_{n, q in out_box} float(dy(n, o, q)) (skipped if db is empty), in float.
template <class ExecSpace, class MemorySpace>
void convTranspose3dBackwardFilterBf16(
    const ExecSpace& exec, const HaloTensor<bf16, MemorySpace>& x,
    const HaloTensor<bf16, MemorySpace>& dy, const ConvTranspose3dGeometry& g,
    const typename ConvTranspose3dViews<float, MemorySpace>::weights_grad_type& dw,
    const typename ConvTranspose3dViews<float, MemorySpace>::bias_grad_type& db, const Box& out_box,
    bool accumulate, KernelPath path = KernelPath::Fastest);

// Backward-data with dy_box = dy's owned cells.
template <class ExecSpace, class MemorySpace>
void convTranspose3dBackwardDataBf16(
    const ExecSpace& exec, const HaloTensor<bf16, MemorySpace>& dy,
    const typename ConvTranspose3dViews<float, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<bf16, MemorySpace>& dx, const Box& dx_box) {
  convTranspose3dBackwardDataBf16(exec, dy, w, g, dx, dx_box, dy.block().owned());
}

// Explicit instantiations (kernels/ConvTranspose3dBf16.cpp) on the default execution space.
#define HALO3D_CONV_TRANSPOSE3D_BF16_INSTANTIATE(EXTERN, EXEC)                                  \
  EXTERN template void convTranspose3dForwardBf16<EXEC, EXEC::memory_space>(                    \
      const EXEC&, const HaloTensor<bf16, EXEC::memory_space>&,                                 \
      const ConvTranspose3dViews<float, EXEC::memory_space>::weights_type&,                     \
      const ConvTranspose3dViews<float, EXEC::memory_space>::bias_type&,                        \
      const ConvTranspose3dGeometry&, const HaloTensor<bf16, EXEC::memory_space>&, const Box&,  \
      KernelPath);                                                                              \
  EXTERN template void convTranspose3dBackwardDataBf16<EXEC, EXEC::memory_space>(               \
      const EXEC&, const HaloTensor<bf16, EXEC::memory_space>&,                                 \
      const ConvTranspose3dViews<float, EXEC::memory_space>::weights_type&,                     \
      const ConvTranspose3dGeometry&, const HaloTensor<bf16, EXEC::memory_space>&, const Box&,  \
      const Box&, KernelPath);                                                                  \
  EXTERN template void convTranspose3dBackwardFilterBf16<EXEC, EXEC::memory_space>(             \
      const EXEC&, const HaloTensor<bf16, EXEC::memory_space>&,                                 \
      const HaloTensor<bf16, EXEC::memory_space>&, const ConvTranspose3dGeometry&,              \
      const ConvTranspose3dViews<float, EXEC::memory_space>::weights_grad_type&,                \
      const ConvTranspose3dViews<float, EXEC::memory_space>::bias_grad_type&, const Box&, bool, \
      KernelPath);

HALO3D_CONV_TRANSPOSE3D_BF16_INSTANTIATE(extern, Kokkos::DefaultExecutionSpace)

}  // namespace halo3d::kernels
