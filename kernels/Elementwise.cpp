// Element-wise kernels; see Elementwise.hpp for the contracts.
#include "halo3d/kernels/Elementwise.hpp"

#include "halo3d/kernels/impl/ElementwiseLoops.hpp"
#include "halo3d/kernels/impl/ElementwiseReduce.hpp"
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
void fill(const ExecSpace& exec, NonDeduced<ComputeType<T>> value, const Tensor<T, ExecSpace>& y,
          const Box& box, KernelPath path) {
  impl::requireAllocated("fill", y, box, "box");
  const T stored = T(value);
  impl::forEachCellRow(
      exec, "halo3d::fill", y, box, path, KOKKOS_LAMBDA(index_t width, T * y) {
        const T v = stored;
        for (index_t i = 0; i < width; ++i)
          y[i] = v;
      });
}

template <class ExecSpace, class T>
void copy(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, const Tensor<T, ExecSpace>& y,
          const Box& box, KernelPath path) {
  impl::requireCellwise("copy", y, box, x);
  impl::forEachCellRow(
      exec, "halo3d::copy", y, box, path,
      KOKKOS_LAMBDA(index_t width, T * y, const T* x) {
        for (index_t i = 0; i < width; ++i)
          y[i] = x[i];
      },
      x);
}

template <class ExecSpace, class T>
void scale(const ExecSpace& exec, NonDeduced<ComputeType<T>> alpha, const Tensor<T, ExecSpace>& y,
           const Box& box, KernelPath path) {
  using C = ComputeType<T>;
  impl::requireOwned("scale", y, box);
  impl::forEachCellRow(
      exec, "halo3d::scale", y, box, path, KOKKOS_LAMBDA(index_t width, T * y) {
        const C s = alpha;
        for (index_t i = 0; i < width; ++i)
          y[i] = T(C(y[i]) * s);
      });
}

template <class ExecSpace, class T>
void add(const ExecSpace& exec, const Tensor<T, ExecSpace>& a, const Tensor<T, ExecSpace>& b,
         const Tensor<T, ExecSpace>& y, const Box& box, KernelPath path) {
  using C = ComputeType<T>;
  impl::requireCellwise("add", y, box, a, b);
  impl::forEachCellRow(
      exec, "halo3d::add", y, box, path,
      KOKKOS_LAMBDA(index_t width, T * y, const T* a_row, const T* b_row) {
        for (index_t i = 0; i < width; ++i)
          y[i] = T(C(a_row[i]) + C(b_row[i]));
      },
      a, b);
}

template <class ExecSpace, class T>
void axpby(const ExecSpace& exec, NonDeduced<ComputeType<T>> alpha, const Tensor<T, ExecSpace>& x,
           NonDeduced<ComputeType<T>> beta, const Tensor<T, ExecSpace>& y, const Box& box,
           KernelPath path) {
  using C = ComputeType<T>;
  impl::requireCellwise("axpby", y, box, x);
  const bool read_y = beta != C(0);
  impl::forEachCellRow(
      exec, "halo3d::axpby", y, box, path,
      KOKKOS_LAMBDA(index_t width, T * y, const T* x) {
        const C a = alpha, b = beta;
        if (read_y) {
          for (index_t i = 0; i < width; ++i)
            y[i] = T(a * C(x[i]) + b * C(y[i]));
        } else {
          for (index_t i = 0; i < width; ++i)
            y[i] = T(a * C(x[i]));
        }
      },
      x);
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
  impl::reduceFlat<1>(
      exec, "halo3d::sumOfSquares", index_t(x.extent(0)),
      KOKKOS_LAMBDA(index_t k) {
        const double v = double(x(k));
        return impl::sums(v * v);
      },
      out, accumulate, path);
}

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_ELEMENTWISE, )
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_ELEMENTWISE_TENSOR, )

}  // namespace halo3d::kernels
