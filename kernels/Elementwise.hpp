#pragma once
// Element-wise maths on HaloTensors (on a box of global cells, all samples and channels) and on
// flat parameter Views (what layers and optimizers need: fill, copy, scale, axpy, axpby, sum of
// squares).
//
// Tensor kernels: every tensor holds the same global (N, C, D, H, W) and the same samples; the
// output box must lie in the output's owned cells (fill: in its allocation, so ghosts can be
// zeroed) and in every input's allocation. An output may be the same tensor as an input: each cell
// reads only itself. Flat kernels: Views of equal extent; T comes from the output View, inputs
// convert from View<T*>.
//
// The tensor kernels also take bf16 tensors: values load as float, the arithmetic is in float and
// each result rounds once to bf16 (for inputs that are bf16, the float result rounded); their
// scalars (value, alpha, beta) are ComputeType<T>, float for bf16 (ComputeType.hpp). The flat
// kernels are for parameters and exist for float and double only.
//
// Paths: the tensor kernels and sumOfSquares have host code (whole W rows, per-thread lanes) and
// device code (one thread per cell, one team per chunk of a reduction), chosen by `path`
// (core/KernelPath.hpp). The other flat kernels are one range kernel on every backend.

#include <Kokkos_Core.hpp>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/kernels/ComputeType.hpp"
#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

// y = value on `box`, ghosts allowed. y is (N, C, D, H, W).
template <class ExecSpace, class T>
void fill(const ExecSpace& exec, NonDeduced<ComputeType<T>> value, const Tensor<T, ExecSpace>& y,
          const Box& box, KernelPath path = KernelPath::Fastest);
// y = x on `box`. x and y are (N, C, D, H, W) with any ghost widths.
template <class ExecSpace, class T>
void copy(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, const Tensor<T, ExecSpace>& y,
          const Box& box, KernelPath path = KernelPath::Fastest);
// y *= alpha on `box`.
template <class ExecSpace, class T>
void scale(const ExecSpace& exec, NonDeduced<ComputeType<T>> alpha, const Tensor<T, ExecSpace>& y,
           const Box& box, KernelPath path = KernelPath::Fastest);
// y = a + b on `box` (a residual connection).
template <class ExecSpace, class T>
void add(const ExecSpace& exec, const Tensor<T, ExecSpace>& a, const Tensor<T, ExecSpace>& b,
         const Tensor<T, ExecSpace>& y, const Box& box, KernelPath path = KernelPath::Fastest);
// y = alpha x + beta y on `box`; beta == 0 assigns without reading y (BLAS convention).
template <class ExecSpace, class T>
void axpby(const ExecSpace& exec, NonDeduced<ComputeType<T>> alpha, const Tensor<T, ExecSpace>& x,
           NonDeduced<ComputeType<T>> beta, const Tensor<T, ExecSpace>& y, const Box& box,
           KernelPath path = KernelPath::Fastest);

// y(i) = value.
template <class ExecSpace, class T>
void fill(const ExecSpace& exec, NonDeduced<T> value, const Vector<T, ExecSpace>& y);
// y(i) = x(i).
template <class ExecSpace, class T>
void copy(const ExecSpace& exec, const NonDeduced<Vector<const T, ExecSpace>>& x,
          const Vector<T, ExecSpace>& y);
// y(i) *= alpha.
template <class ExecSpace, class T>
void scale(const ExecSpace& exec, NonDeduced<T> alpha, const Vector<T, ExecSpace>& y);
// y(i) += alpha x(i).
template <class ExecSpace, class T>
void axpy(const ExecSpace& exec, NonDeduced<T> alpha,
          const NonDeduced<Vector<const T, ExecSpace>>& x, const Vector<T, ExecSpace>& y);
// y(i) = alpha x(i) + beta y(i); beta == 0 assigns without reading y.
template <class ExecSpace, class T>
void axpby(const ExecSpace& exec, NonDeduced<T> alpha,
           const NonDeduced<Vector<const T, ExecSpace>>& x, NonDeduced<T> beta,
           const Vector<T, ExecSpace>& y);
// out(0) = [out(0) if accumulate] + sum_i x(i)^2, in double: a partial sum for a global norm. out
// has extent >= 1.
template <class ExecSpace, class T>
void sumOfSquares(const ExecSpace& exec, const Vector<T, ExecSpace>& x,
                  const Vector<double, ExecSpace>& out, bool accumulate = false,
                  KernelPath path = KernelPath::Fastest);

// The same on the default execution-space instance.
template <class T>
void fill(NonDeduced<ComputeType<T>> value, const Tensor<T, DefaultExec>& y, const Box& box) {
  fill(DefaultExec(), value, y, box);
}
template <class T>
void copy(const Tensor<T, DefaultExec>& x, const Tensor<T, DefaultExec>& y, const Box& box) {
  copy(DefaultExec(), x, y, box);
}
template <class T>
void scale(NonDeduced<ComputeType<T>> alpha, const Tensor<T, DefaultExec>& y, const Box& box) {
  scale(DefaultExec(), alpha, y, box);
}
template <class T>
void axpby(NonDeduced<ComputeType<T>> alpha, const Tensor<T, DefaultExec>& x,
           NonDeduced<ComputeType<T>> beta, const Tensor<T, DefaultExec>& y, const Box& box) {
  axpby(DefaultExec(), alpha, x, beta, y, box);
}
template <class T>
void add(const Tensor<T, DefaultExec>& a, const Tensor<T, DefaultExec>& b,
         const Tensor<T, DefaultExec>& y, const Box& box) {
  add(DefaultExec(), a, b, y, box);
}

#define HALO3D_KERNELS_ELEMENTWISE_TENSOR(PREFIX, E, T)                                           \
  PREFIX template void fill<E, T>(const E&, ComputeType<T>, const Tensor<T, E>&, const Box&,      \
                                  KernelPath);                                                    \
  PREFIX template void copy<E, T>(const E&, const Tensor<T, E>&, const Tensor<T, E>&, const Box&, \
                                  KernelPath);                                                    \
  PREFIX template void scale<E, T>(const E&, ComputeType<T>, const Tensor<T, E>&, const Box&,     \
                                   KernelPath);                                                   \
  PREFIX template void add<E, T>(const E&, const Tensor<T, E>&, const Tensor<T, E>&,              \
                                 const Tensor<T, E>&, const Box&, KernelPath);                    \
  PREFIX template void axpby<E, T>(const E&, ComputeType<T>, const Tensor<T, E>&, ComputeType<T>, \
                                   const Tensor<T, E>&, const Box&, KernelPath);
#define HALO3D_KERNELS_ELEMENTWISE(PREFIX, E, T)                                                   \
  HALO3D_KERNELS_ELEMENTWISE_TENSOR(PREFIX, E, T)                                                  \
  PREFIX template void fill<E, T>(const E&, T, const Vector<T, E>&);                               \
  PREFIX template void copy<E, T>(const E&, const Vector<const T, E>&, const Vector<T, E>&);       \
  PREFIX template void scale<E, T>(const E&, T, const Vector<T, E>&);                              \
  PREFIX template void axpy<E, T>(const E&, T, const Vector<const T, E>&, const Vector<T, E>&);    \
  PREFIX template void axpby<E, T>(const E&, T, const Vector<const T, E>&, T,                      \
                                   const Vector<T, E>&);                                           \
  PREFIX template void sumOfSquares<E, T>(const E&, const Vector<T, E>&, const Vector<double, E>&, \
                                          bool, KernelPath);

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_ELEMENTWISE, extern)
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_ELEMENTWISE_TENSOR, extern)

}  // namespace halo3d::kernels
