// Dense layers; see Dense.hpp for the contracts.
#include "halo3d/kernels/Dense.hpp"

#include <KokkosBlas3_gemm.hpp>

#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels {

namespace {

// C = alpha op(A) op(B) + beta C on `exec`. Kokkos Kernels takes an execution-space instance
// from 4.1; before that gemm runs on the default instance, so the fences order it with the work
// queued on `exec`.
template <class ExecSpace, class A, class B, class C>
void gemm(const ExecSpace& exec, const char* trans_a, const char* trans_b,
          typename C::const_value_type alpha, const A& a, const B& b,
          typename C::const_value_type beta, const C& c) {
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40100
  KokkosBlas::gemm(exec, trans_a, trans_b, alpha, a, b, beta, c);
#else
  fence(exec, "dense: inputs ready for gemm on the default instance");
  KokkosBlas::gemm(trans_a, trans_b, alpha, a, b, beta, c);
  fence(Kokkos::DefaultExecutionSpace(), "dense: gemm done before work on the caller's instance");
#endif
}

// Up to this many samples the three products run as row kernels below instead of gemm. Kokkos
// Kernels' native gemm (no vendor BLAS) spends ~1.5 ms on a (2 x 512) x (512 x 512) product, 300x
// the arithmetic; a CNN's dense head sees a handful of samples per rank, where one contiguous row
// loop per output is both simpler and faster.
constexpr index_t kRowKernelMaxSamples = 16;
// Row chunk of the backward-data kernel; lanes of the per-thread accumulators.
constexpr index_t kChunk = 64, kLanes = 16;

// sum_i a[i] b[i] over contiguous rows, in kLanes independent partial sums (vectorisable without
// reassociation flags, and a fixed order: the result does not depend on the thread count).
template <class T>
KOKKOS_INLINE_FUNCTION T rowDot(const T* a, const T* b, index_t n) {
  T acc[kLanes] = {};
  index_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (index_t l = 0; l < kLanes; ++l)
      acc[l] += a[i + l] * b[i + l];
  for (index_t l = 0; i + l < n; ++l)
    acc[l] += a[i + l] * b[i + l];
  T sum = T(0);
  for (index_t l = 0; l < kLanes; ++l)
    sum += acc[l];
  return sum;
}

}  // namespace

template <class ExecSpace, class T>
void denseForward(const ExecSpace& exec, const NonDeduced<Matrix<const T, ExecSpace>>& x,
                  const NonDeduced<Matrix<const T, ExecSpace>>& w,
                  const NonDeduced<Vector<const T, ExecSpace>>& b, const Matrix<T, ExecSpace>& y) {
  const char* kernel = "denseForward";
  impl::requireExtent(kernel, w, 1, index_t(x.extent(1)), "in of x (N, in)");
  impl::requireExtent(kernel, y, 0, index_t(x.extent(0)), "N of x (N, in)");
  impl::requireExtent(kernel, y, 1, index_t(w.extent(0)), "out of w (out, in)");
  impl::requireBiasShape(kernel, "bias", b, index_t(w.extent(0)));
  if (index_t(x.extent(0)) <= kRowKernelMaxSamples && x.span_is_contiguous() &&
      w.span_is_contiguous()) {
    const index_t outputs = index_t(y.extent(1)), inputs = index_t(x.extent(1));
    const bool bias = b.extent(0) != 0;
    Kokkos::parallel_for(
        "halo3d::denseForward rows",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, index_t(y.size())),
        KOKKOS_LAMBDA(index_t k) {
          const index_t n = k / outputs, o = k % outputs;
          y(n, o) = rowDot(&x(n, 0), &w(o, 0), inputs) + (bias ? b(o) : T(0));
        });
    return;
  }
  gemm(exec, "N", "T", T(1), x, w, T(0), y);
  if (b.extent(0) == 0) return;
  const index_t outputs = index_t(y.extent(1));
  Kokkos::parallel_for(
      "halo3d::denseForward bias",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, index_t(y.size())),
      KOKKOS_LAMBDA(index_t i) { y(i / outputs, i % outputs) += b(i % outputs); });
}

template <class ExecSpace, class T>
void denseBackwardData(const ExecSpace& exec, const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                       const NonDeduced<Matrix<const T, ExecSpace>>& w,
                       const Matrix<T, ExecSpace>& dx) {
  const char* kernel = "denseBackwardData";
  impl::requireExtent(kernel, dy, 1, index_t(w.extent(0)), "out of w (out, in)");
  impl::requireExtent(kernel, dx, 0, index_t(dy.extent(0)), "N of dy (N, out)");
  impl::requireExtent(kernel, dx, 1, index_t(w.extent(1)), "in of w (out, in)");
  if (index_t(dy.extent(0)) <= kRowKernelMaxSamples && w.span_is_contiguous()) {
    // dx(n, i) = sum_o dy(n, o) w(o, i): each item owns a chunk of one dx row and adds the w rows
    // into it.
    const index_t inputs = index_t(dx.extent(1)), outputs = index_t(w.extent(0));
    const index_t chunks = (inputs + kChunk - 1) / kChunk;
    Kokkos::parallel_for(
        "halo3d::denseBackwardData rows",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0,
                                                                   index_t(dx.extent(0)) * chunks),
        KOKKOS_LAMBDA(index_t k) {
          const index_t n = k / chunks, i0 = (k % chunks) * kChunk;
          const index_t len = inputs - i0 < kChunk ? inputs - i0 : kChunk;
          T acc[kChunk] = {};
          for (index_t o = 0; o < outputs; ++o) {
            const T g = dy(n, o);
            const T* wr = &w(o, i0);
            for (index_t i = 0; i < len; ++i)
              acc[i] += g * wr[i];
          }
          for (index_t i = 0; i < len; ++i)
            dx(n, i0 + i) = acc[i];
        });
    return;
  }
  gemm(exec, "N", "N", T(1), dy, w, T(0), dx);
}

template <class ExecSpace, class T>
void denseBackwardWeights(const ExecSpace& exec, const NonDeduced<Matrix<const T, ExecSpace>>& x,
                          const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                          const Matrix<T, ExecSpace>& dw, bool accumulate) {
  const char* kernel = "denseBackwardWeights";
  impl::requireExtent(kernel, dy, 0, index_t(x.extent(0)), "N of x (N, in)");
  impl::requireExtent(kernel, dw, 0, index_t(dy.extent(1)), "out of dy (N, out)");
  impl::requireExtent(kernel, dw, 1, index_t(x.extent(1)), "in of x (N, in)");
  if (index_t(x.extent(0)) <= kRowKernelMaxSamples && x.span_is_contiguous() &&
      dw.span_is_contiguous()) {
    // dw(o, :) = [dw(o, :)] + sum_n dy(n, o) x(n, :): one contiguous row per item.
    const index_t inputs = index_t(x.extent(1)), samples = index_t(x.extent(0));
    Kokkos::parallel_for(
        "halo3d::denseBackwardWeights rows",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, index_t(dw.extent(0))),
        KOKKOS_LAMBDA(index_t o) {
          T* row = &dw(o, 0);
          if (!accumulate)
            for (index_t i = 0; i < inputs; ++i)
              row[i] = T(0);
          for (index_t n = 0; n < samples; ++n) {
            const T g = dy(n, o);
            const T* xr = &x(n, 0);
            for (index_t i = 0; i < inputs; ++i)
              row[i] += g * xr[i];
          }
        });
    return;
  }
  gemm(exec, "T", "N", T(1), dy, x, accumulate ? T(1) : T(0), dw);
}

template <class ExecSpace, class T>
void denseBackwardBias(const ExecSpace& exec, const NonDeduced<Matrix<const T, ExecSpace>>& dy,
                       const Vector<T, ExecSpace>& db, bool accumulate) {
  impl::requireExtent("denseBackwardBias", db, 0, index_t(dy.extent(1)), "out of dy (N, out)");
  const index_t samples = index_t(dy.extent(0));
  Kokkos::parallel_for(
      "halo3d::denseBackwardBias",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, index_t(db.extent(0))),
      KOKKOS_LAMBDA(index_t o) {
        T sum = accumulate ? db(o) : T(0);
        for (index_t n = 0; n < samples; ++n)
          sum += dy(n, o);
        db(o) = sum;
      });
}

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_DENSE, )

}  // namespace halo3d::kernels
