#pragma once
// Naive references of channel concatenation and slicing (Channels.hpp): plain host loops, same
// signatures.

#include "halo3d/kernels/reference/Elementwise.hpp"

namespace halo3d::kernels::reference {

template <class ExecSpace, class T>
void concatChannels(const ExecSpace&, const Tensor<T, ExecSpace>& a, const Tensor<T, ExecSpace>& b,
                    const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const index_t ca = a.block().channels();
  const auto ac = impl::readCells(a);
  const auto bc = impl::readCells(b);
  const auto yc = impl::writeCells(y);
  detail::forEachCell(y, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    yc(n, c, d, h, w) = c < ca ? ac(n, c, d, h, w) : bc(n, c - ca, d, h, w);
  });
}

template <class ExecSpace, class T>
void sliceChannels(const ExecSpace&, const Tensor<T, ExecSpace>& y, index_t c0,
                   const Tensor<T, ExecSpace>& x, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const auto yc = impl::readCells(y);
  const auto xc = impl::writeCells(x);
  detail::forEachCell(x, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    xc(n, c, d, h, w) = yc(n, c0 + c, d, h, w);
  });
}

template <class ExecSpace, class T>
void insertChannels(const ExecSpace&, const Tensor<T, ExecSpace>& x, index_t c0,
                    const Tensor<T, ExecSpace>& y, const Box& box) {
  detail::requireHostMemory<ExecSpace>();
  const auto xc = impl::readCells(x);
  const auto yc = impl::writeCells(y);
  detail::forEachCell(x, box, [&](index_t n, index_t c, index_t d, index_t h, index_t w) {
    yc(n, c0 + c, d, h, w) = xc(n, c, d, h, w);
  });
}

}  // namespace halo3d::kernels::reference
