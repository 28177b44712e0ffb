// Element-wise kernels; see Elementwise.hpp for the contracts.
#include "halo3d/kernels/Elementwise.hpp"

#include "halo3d/kernels/impl/ElementwiseLoops.hpp"
#include "halo3d/kernels/impl/ElementwiseReduce.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels {

namespace {

template <class ExecSpace>
Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>> flatPolicy(const ExecSpace& exec,
                                                                      std::size_t n) {
  return Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, index_t(n));
}

template <class X, class Y>
void requireSameExtent(const char* kernel, const X& x, const Y& y) {
  impl::requireExtent(kernel, x, 0, index_t(y.extent(0)),
                      concat("the extent of '", y.label(), "'").c_str());
}

}  // namespace

template <class ExecSpace, class T>
void fill(const ExecSpace& exec, NonDeduced<T> value, const Tensor<T, ExecSpace>& y, const Box& box,
          KernelPath path) {
  impl::requireAllocated("fill", y, box, "box");
  const auto yc = impl::writeCells(y);
  impl::forEachRow(
      exec, "halo3d::fill", y.block().localSamples(), y.block().channels(), box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w0, index_t w1) {
        T* y = yc.row(n, c, d, h, w0);
        const T v = value;
        for (index_t i = 0; i < w1 - w0; ++i)
          y[i] = v;
      },
      path);
}

template <class ExecSpace, class T>
void copy(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, const Tensor<T, ExecSpace>& y,
          const Box& box, KernelPath path) {
  impl::requireCellwise("copy", y, box, x);
  const auto xc = impl::readCells(x);
  const auto yc = impl::writeCells(y);
  impl::forEachRow(
      exec, "halo3d::copy", y.block().localSamples(), y.block().channels(), box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w0, index_t w1) {
        const T* x = xc.row(n, c, d, h, w0);
        T* y = yc.row(n, c, d, h, w0);
        for (index_t i = 0; i < w1 - w0; ++i)
          y[i] = x[i];
      },
      path);
}

template <class ExecSpace, class T>
void scale(const ExecSpace& exec, NonDeduced<T> alpha, const Tensor<T, ExecSpace>& y,
           const Box& box, KernelPath path) {
  impl::requireOwned("scale", y, box);
  const auto yc = impl::writeCells(y);
  impl::forEachRow(
      exec, "halo3d::scale", y.block().localSamples(), y.block().channels(), box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w0, index_t w1) {
        T* y = yc.row(n, c, d, h, w0);
        const T s = alpha;
        for (index_t i = 0; i < w1 - w0; ++i)
          y[i] *= s;
      },
      path);
}

template <class ExecSpace, class T>
void add(const ExecSpace& exec, const Tensor<T, ExecSpace>& a, const Tensor<T, ExecSpace>& b,
         const Tensor<T, ExecSpace>& y, const Box& box, KernelPath path) {
  impl::requireCellwise("add", y, box, a, b);
  const auto ac = impl::readCells(a);
  const auto bc = impl::readCells(b);
  const auto yc = impl::writeCells(y);
  impl::forEachRow(
      exec, "halo3d::add", y.block().localSamples(), y.block().channels(), box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w0, index_t w1) {
        const T* a_row = ac.row(n, c, d, h, w0);
        const T* b_row = bc.row(n, c, d, h, w0);
        T* y = yc.row(n, c, d, h, w0);
        for (index_t i = 0; i < w1 - w0; ++i)
          y[i] = a_row[i] + b_row[i];
      },
      path);
}

template <class ExecSpace, class T>
void axpby(const ExecSpace& exec, NonDeduced<T> alpha, const Tensor<T, ExecSpace>& x,
           NonDeduced<T> beta, const Tensor<T, ExecSpace>& y, const Box& box, KernelPath path) {
  impl::requireCellwise("axpby", y, box, x);
  const auto xc = impl::readCells(x);
  const auto yc = impl::writeCells(y);
  const bool read_y = beta != T(0);
  impl::forEachRow(
      exec, "halo3d::axpby", y.block().localSamples(), y.block().channels(), box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w0, index_t w1) {
        const T* x = xc.row(n, c, d, h, w0);
        T* y = yc.row(n, c, d, h, w0);
        const T a = alpha, b = beta;
        if (read_y) {
          for (index_t i = 0; i < w1 - w0; ++i)
            y[i] = a * x[i] + b * y[i];
        } else {
          for (index_t i = 0; i < w1 - w0; ++i)
            y[i] = a * x[i];
        }
      },
      path);
}

template <class ExecSpace, class T>
void fill(const ExecSpace& exec, NonDeduced<T> value, const Vector<T, ExecSpace>& y) {
  Kokkos::parallel_for(
      "halo3d::fill", flatPolicy(exec, y.extent(0)), KOKKOS_LAMBDA(index_t i) { y(i) = value; });
}

template <class ExecSpace, class T>
void copy(const ExecSpace& exec, const NonDeduced<Vector<const T, ExecSpace>>& x,
          const Vector<T, ExecSpace>& y) {
  requireSameExtent("copy", x, y);
  Kokkos::parallel_for(
      "halo3d::copy", flatPolicy(exec, y.extent(0)), KOKKOS_LAMBDA(index_t i) { y(i) = x(i); });
}

template <class ExecSpace, class T>
void scale(const ExecSpace& exec, NonDeduced<T> alpha, const Vector<T, ExecSpace>& y) {
  Kokkos::parallel_for(
      "halo3d::scale", flatPolicy(exec, y.extent(0)), KOKKOS_LAMBDA(index_t i) { y(i) *= alpha; });
}

template <class ExecSpace, class T>
void axpy(const ExecSpace& exec, NonDeduced<T> alpha,
          const NonDeduced<Vector<const T, ExecSpace>>& x, const Vector<T, ExecSpace>& y) {
  requireSameExtent("axpy", x, y);
  Kokkos::parallel_for(
      "halo3d::axpy", flatPolicy(exec, y.extent(0)),
      KOKKOS_LAMBDA(index_t i) { y(i) += alpha * x(i); });
}

template <class ExecSpace, class T>
void axpby(const ExecSpace& exec, NonDeduced<T> alpha,
           const NonDeduced<Vector<const T, ExecSpace>>& x, NonDeduced<T> beta,
           const Vector<T, ExecSpace>& y) {
  requireSameExtent("axpby", x, y);
  const bool read_y = beta != T(0);
  Kokkos::parallel_for(
      "halo3d::axpby", flatPolicy(exec, y.extent(0)), KOKKOS_LAMBDA(index_t i) {
        const T ax = alpha * x(i);
        y(i) = read_y ? ax + beta * y(i) : ax;
      });
}

template <class ExecSpace, class T>
void sumOfSquares(const ExecSpace& exec, const Vector<T, ExecSpace>& x,
                  const Vector<double, ExecSpace>& out, bool accumulate, KernelPath path) {
  require<ShapeError>(out.extent(0) >= 1, "sumOfSquares: output View '", out.label(),
                      "' is empty; it needs 1 slot");
  // Rows of a fixed length make the reduction's chunks, whatever x's extent.
  const index_t row = 1024;
  const index_t n = index_t(x.extent(0));
  impl::reduceRows<1>(
      exec, "halo3d::sumOfSquares", 1, (n + row - 1) / row, n < row ? n : row,
      KOKKOS_LAMBDA(index_t, index_t r, index_t i) {
        const index_t k = r * row + i;
        const double v = k < n ? double(x(k)) : 0.0;
        return impl::sums(v * v);
      },
      out, accumulate, path);
}

HALO3D_KERNELS_ELEMENTWISE(, Kokkos::DefaultExecutionSpace, float)
HALO3D_KERNELS_ELEMENTWISE(, Kokkos::DefaultExecutionSpace, double)

}  // namespace halo3d::kernels
