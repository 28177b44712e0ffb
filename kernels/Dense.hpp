#pragma once
// Dense (fully connected) layers, as PyTorch's Linear: y = x w^T + b. Up to 16 samples they run as
// contiguous row kernels (Kokkos Kernels' native gemm is ~50x slower at a handful of rows); above
// that, through KokkosBlas::gemm. x is (N, in), w is (out, in), b is (out) or of extent 0 for no
// bias, y is (N, out); all LayoutRight Views in the memory space of the execution space. Dense
// layers run on Sample-distributed activations, so every sum here is over this rank's samples; the
// gradient allreduce adds the other ranks'.
//
// One path: the row kernels are plain range kernels, the same code on the host and on a device
// (the choice between them and gemm depends on the sample count, not on the backend), so these
// kernels take no KernelPath.

#include <Kokkos_Core.hpp>

#include "halo3d/kernels/KernelTypes.hpp"

namespace halo3d::kernels {

// y = x w^T + b.
template <class ExecSpace, class T>
void denseForward(const ExecSpace& exec, const NonDeduced<Matrix<const T, ExecSpace>>& x,
                  const NonDeduced<Matrix<const T, ExecSpace>>& w,
                  const NonDeduced<Vector<const T, ExecSpace>>& b, const Matrix<T, ExecSpace>& y);
// dx = dy w. dy is (N, out), dx is (N, in).
template <class ExecSpace, class T>
void denseBackwardData(const ExecSpace& exec, const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                       const NonDeduced<Matrix<const T, ExecSpace>>& w,
                       const Matrix<T, ExecSpace>& dx);
// dw = [dw if accumulate] + dy^T x. dw is (out, in).
template <class ExecSpace, class T>
void denseBackwardWeights(const ExecSpace& exec, const NonDeduced<Matrix<const T, ExecSpace>>& x,
                          const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                          const Matrix<T, ExecSpace>& dw, bool accumulate = false);
// db = [db if accumulate] + sum over samples of dy. db is (out).
template <class ExecSpace, class T>
void denseBackwardBias(const ExecSpace& exec, const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                       const Vector<T, ExecSpace>& db, bool accumulate = false);

// The same on the default execution-space instance.
template <class T>
void denseForward(const NonDeduced<Matrix<const T, DefaultExec>>& x,
                  const NonDeduced<Matrix<const T, DefaultExec>>& w,
                  const NonDeduced<Vector<const T, DefaultExec>>& b,
                  const Matrix<T, DefaultExec>& y) {
  denseForward(DefaultExec(), x, w, b, y);
}
template <class T>
void denseBackwardData(const NonDeduced<Matrix<const T, DefaultExec>>& dy,
                       const NonDeduced<Matrix<const T, DefaultExec>>& w,
                       const Matrix<T, DefaultExec>& dx) {
  denseBackwardData(DefaultExec(), dy, w, dx);
}
template <class T>
void denseBackwardWeights(const NonDeduced<Matrix<const T, DefaultExec>>& x,
                          const NonDeduced<Matrix<const T, DefaultExec>>& dy,
                          const Matrix<T, DefaultExec>& dw, bool accumulate = false) {
  denseBackwardWeights(DefaultExec(), x, dy, dw, accumulate);
}
template <class T>
void denseBackwardBias(const NonDeduced<Matrix<const T, DefaultExec>>& dy,
                       const Vector<T, DefaultExec>& db, bool accumulate = false) {
  denseBackwardBias(DefaultExec(), dy, db, accumulate);
}

#define HALO3D_KERNELS_DENSE(PREFIX, E, T)                                                        \
  PREFIX template void denseForward<E, T>(const E&, const Matrix<const T, E>&,                    \
                                          const Matrix<const T, E>&, const Vector<const T, E>&,   \
                                          const Matrix<T, E>&);                                   \
  PREFIX template void denseBackwardData<E, T>(const E&, const Matrix<const T, E>&,               \
                                               const Matrix<const T, E>&, const Matrix<T, E>&);   \
  PREFIX template void denseBackwardWeights<E, T>(                                                \
      const E&, const Matrix<const T, E>&, const Matrix<const T, E>&, const Matrix<T, E>&, bool); \
  PREFIX template void denseBackwardBias<E, T>(const E&, const Matrix<const T, E>&,               \
                                               const Vector<T, E>&, bool);

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_DENSE, extern)

}  // namespace halo3d::kernels
