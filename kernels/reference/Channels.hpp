#pragma once
// Naive references of channel concatenation and slicing (Channels.hpp): plain host loops, same
// signatures.

#include "halo3d/kernels/reference/Elementwise.hpp"

namespace halo3d::kernels::reference {

namespace detail {

// dst(c + dst_c0) = src(c + src_c0) for channels c in [0, channels) on `box`.
template <class MemorySpace, class T>
void copyChannels(const HaloTensor<T, MemorySpace>& src, index_t src_c0,
                  const HaloTensor<T, MemorySpace>& dst, index_t dst_c0, index_t channels,
                  const Box& box) {
  requireHostSpace<MemorySpace>();
  const auto sc = impl::readCells(src);
  const auto dc = impl::writeCells(dst);
  forEachCell(src.block().localSamples(), channels, box,
              [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
                dc(n, dst_c0 + c, d, h, w) = sc(n, src_c0 + c, d, h, w);
              });
}

}  // namespace detail

template <class ExecSpace, class T>
void concatChannels(const ExecSpace&, const Tensor<T, ExecSpace>& a, const Tensor<T, ExecSpace>& b,
                    const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::copyChannels(a, 0, y, 0, a.block().channels(), box);
  detail::copyChannels(b, 0, y, a.block().channels(), b.block().channels(), box);
}

template <class ExecSpace, class T>
void sliceChannels(const ExecSpace&, const Tensor<T, ExecSpace>& y, index_t c0,
                   const Tensor<T, ExecSpace>& x, const Box& box) {
  detail::copyChannels(y, c0, x, 0, x.block().channels(), box);
}

template <class ExecSpace, class T>
void insertChannels(const ExecSpace&, const Tensor<T, ExecSpace>& x, index_t c0,
                    const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::copyChannels(x, 0, y, c0, x.block().channels(), box);
}

}  // namespace halo3d::kernels::reference
