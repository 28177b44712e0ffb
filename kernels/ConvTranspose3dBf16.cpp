// The bf16 transposed-convolution passes: the fp32 functions' shape checks, then on a host space
// with KernelPath::Fastest the float host kernels (ConvTranspose3dGather.hpp,
// ConvTranspose3dFilter.hpp) on float copies (Conv3dBf16Float.hpp), elsewhere
// the weights rounded to bf16 once per call and the generic kernels; instantiated on the default
// execution space.
#include "halo3d/kernels/ConvTranspose3dBf16.hpp"

#include "halo3d/core/KernelPath.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Float.hpp"
#include "halo3d/kernels/impl/Conv3dBf16Weights.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dBf16Generic.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dChecks.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dFilter.hpp"
#include "halo3d/kernels/impl/ConvTranspose3dGather.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels {

namespace {

// Forward and backward-data are the same gather (backward-data with the weights' channels swapped
// and no bias): on a host space with KernelPath::Fastest the float host kernel on float copies,
// elsewhere the generic bf16 kernel with the weights rounded once.
template <class ExecSpace, class MemorySpace, class Axes>
void gatherBf16(const ExecSpace& exec, const HaloTensor<bf16, MemorySpace>& src,
                const typename ConvTranspose3dViews<float, MemorySpace>::weights_type& w,
                const typename ConvTranspose3dViews<float, MemorySpace>::bias_type& bias,
                bool swap_channels, const HaloTensor<bf16, MemorySpace>& dst, const Box& dst_box,
                const Axes& axes, KernelPath path) {
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
      impl::GatherConv<float, MemorySpace> p;
      p.src = impl::widenToFloatView(exec, src);
      p.src_shift = impl::localShift(src);
      p.w = impl::bf16RoundedWeights(exec, w);
      p.bias = bias;
      p.swap_channels = swap_channels;
      const auto dst_float = impl::floatScratchLike(dst);
      p.dst = dst_float;
      p.dst_shift = impl::localShift(dst);
      p.dst_box = dst_box;
      p.axes = axes;
      impl::gatherConvHost(exec, p);
      return impl::narrowBoxToBf16(exec, dst_float, dst, dst_box);
    }
  }
  impl::GatherConvBf16<MemorySpace> p;
  p.src = src.view();
  p.src_shift = impl::localShift(src);
  p.w = impl::roundWeightsToBf16(exec, w);
  p.bias = bias;
  p.swap_channels = swap_channels;
  p.dst = dst.view();
  p.dst_shift = impl::localShift(dst);
  p.dst_box = dst_box;
  p.axes = axes;
  impl::gatherConvBf16(exec, p);
}

}  // namespace

template <class ExecSpace, class MemorySpace>
void convTranspose3dForwardBf16(
    const ExecSpace& exec, const HaloTensor<bf16, MemorySpace>& x,
    const typename ConvTranspose3dViews<float, MemorySpace>::weights_type& w,
    const typename ConvTranspose3dViews<float, MemorySpace>::bias_type& b,
    const ConvTranspose3dGeometry& g, const HaloTensor<bf16, MemorySpace>& y, const Box& out_box,
    KernelPath path) {
  impl::requireTransposedWindow("convTranspose3dForward", g, x, y, "weights", w, "bias", b,
                                out_box);
  if (out_box.empty()) return;
  gatherBf16(exec, x, w, b, false, y, out_box, impl::forwardAxes(g, x.block().globalExtents()),
             path);
}

template <class ExecSpace, class MemorySpace>
void convTranspose3dBackwardDataBf16(
    const ExecSpace& exec, const HaloTensor<bf16, MemorySpace>& dy,
    const typename ConvTranspose3dViews<float, MemorySpace>::weights_type& w,
    const ConvTranspose3dGeometry& g, const HaloTensor<bf16, MemorySpace>& dx, const Box& dx_box,
    const Box& dy_box, KernelPath path) {
  impl::requireTransposedBackwardData("convTranspose3dBackwardData", g, dx, dy, w, dx_box, dy_box);
  if (dx_box.empty()) return;
  gatherBf16(exec, dy, w, {}, true, dx, dx_box, impl::backwardDataAxes(g, dy_box), path);
}

template <class ExecSpace, class MemorySpace>
void convTranspose3dBackwardFilterBf16(
    const ExecSpace& exec, const HaloTensor<bf16, MemorySpace>& x,
    const HaloTensor<bf16, MemorySpace>& dy, const ConvTranspose3dGeometry& g,
    const typename ConvTranspose3dViews<float, MemorySpace>::weights_grad_type& dw,
    const typename ConvTranspose3dViews<float, MemorySpace>::bias_grad_type& db, const Box& out_box,
    bool accumulate, KernelPath path) {
  impl::requireTransposedWindow("convTranspose3dBackwardFilter", g, x, dy, "weight gradient", dw,
                                "bias gradient", db, out_box);
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
      impl::FilterGrad<float, MemorySpace> p;
      p.x = impl::widenToFloatView(exec, x);
      p.x_shift = impl::localShift(x);
      p.dy = impl::widenToFloatView(exec, dy);
      p.dy_shift = impl::localShift(dy);
      p.box = out_box;
      p.axes = impl::forwardAxes(g, x.block().globalExtents());
      p.dw = dw;
      p.db = db;
      p.accumulate = accumulate;
      return impl::filterGradHost(exec, p);
    }
  }
  impl::FilterGradBf16<MemorySpace> p;
  p.x = x.view();
  p.x_shift = impl::localShift(x);
  p.dy = dy.view();
  p.dy_shift = impl::localShift(dy);
  p.box = out_box;
  p.axes = impl::forwardAxes(g, x.block().globalExtents());
  p.dw = dw;
  p.db = db;
  p.accumulate = accumulate;
  impl::filterGradBf16(exec, p);
}

HALO3D_CONV_TRANSPOSE3D_BF16_INSTANTIATE(, Kokkos::DefaultExecutionSpace)

}  // namespace halo3d::kernels
