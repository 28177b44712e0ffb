// Channel concatenation and slicing; see Channels.hpp for the contracts.
#include "halo3d/kernels/Channels.hpp"

#include "halo3d/kernels/impl/ElementwiseLoops.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels {

namespace impl {

// dst[:, dst_c0 + k] = src[:, src_c0 + k] for k < count on `box`: the one routine behind concat,
// slice and insert. `kernel` names the caller in errors and profiles.
template <class ExecSpace, class T>
void copyChannels(const char* kernel, const ExecSpace& exec, const Tensor<T, ExecSpace>& src,
                  index_t src_c0, const Tensor<T, ExecSpace>& dst, index_t dst_c0, index_t count,
                  const Box& box, KernelPath path) {
  const Shape5& s = src.block().globalShape();
  const Shape5& d = dst.block().globalShape();
  require<ShapeError>(s[0] == d[0] && s[2] == d[2] && s[3] == d[3] && s[4] == d[4], kernel,
                      ": N, D, H, W differ between ", describe(src), " and ", describe(dst));
  requireSameSamples(kernel, src, dst);
  require<ShapeError>(src_c0 >= 0 && src_c0 + count <= s[1], kernel, ": channels [", src_c0, ", ",
                      src_c0 + count, ") are not inside the ", s[1], " channels of ",
                      describe(src));
  require<ShapeError>(dst_c0 >= 0 && dst_c0 + count <= d[1], kernel, ": channels [", dst_c0, ", ",
                      dst_c0 + count, ") are not inside the ", d[1], " channels of ",
                      describe(dst));
  requireOwned(kernel, dst, box);
  requireAllocated(kernel, src, box, "input box");
  const auto sc = readCells(src);
  const auto dc = writeCells(dst);
  forEachRow(
      exec, std::string("halo3d::") + kernel, dst.block().localSamples(), count, box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t z, index_t h, index_t w0, index_t w1) {
        const T* src_row = sc.row(n, src_c0 + c, z, h, w0);
        T* dst_row = dc.row(n, dst_c0 + c, z, h, w0);
        for (index_t i = 0; i < w1 - w0; ++i)
          dst_row[i] = src_row[i];
      },
      path);
}

}  // namespace impl

template <class ExecSpace, class T>
void concatChannels(const ExecSpace& exec, const Tensor<T, ExecSpace>& a,
                    const Tensor<T, ExecSpace>& b, const Tensor<T, ExecSpace>& y, const Box& box,
                    KernelPath path) {
  const index_t ca = a.block().channels(), cb = b.block().channels();
  require<ShapeError>(y.block().channels() == ca + cb, "concatChannels: ", impl::describe(y),
                      " has ", y.block().channels(), " channels but [a, b] has ", ca, " + ", cb);
  impl::copyChannels("concatChannels", exec, a, 0, y, 0, ca, box, path);
  impl::copyChannels("concatChannels", exec, b, 0, y, ca, cb, box, path);
}

template <class ExecSpace, class T>
void sliceChannels(const ExecSpace& exec, const Tensor<T, ExecSpace>& y, index_t c0,
                   const Tensor<T, ExecSpace>& x, const Box& box, KernelPath path) {
  impl::copyChannels("sliceChannels", exec, y, c0, x, 0, x.block().channels(), box, path);
}

template <class ExecSpace, class T>
void insertChannels(const ExecSpace& exec, const Tensor<T, ExecSpace>& x, index_t c0,
                    const Tensor<T, ExecSpace>& y, const Box& box, KernelPath path) {
  impl::copyChannels("insertChannels", exec, x, 0, y, c0, x.block().channels(), box, path);
}

HALO3D_KERNELS_FOR_REALS(HALO3D_KERNELS_CHANNELS, )
HALO3D_KERNELS_FOR_BF16(HALO3D_KERNELS_CHANNELS, )

}  // namespace halo3d::kernels
