#pragma once
// The loop shape shared by the element-wise, normalisation, dropout and loss kernels: every W row
// of a box of global cells, for all local samples and a number of channels.
//
// forEachRow calls f(n, c, d, h, w_begin, w_end), which processes the cells [w_begin, w_end) of row
// (n, c, d, h): n is the local sample, c the channel, (d, h, w) global coordinates. The host code
// (KernelPath::Fastest on a host space) covers a whole row per call, so the functor hoists what
// depends only on the row (a channel's scale) and its inner loop vectorises; a thread takes a chunk
// of consecutive rows and steps through them without dividing. The device code covers one cell per
// call, so neighbouring threads touch neighbouring addresses.

#include <Kokkos_Core.hpp>

#include <string>
#include <utility>

#include "halo3d/core/IndexSpace.hpp"
#include "halo3d/core/KernelPath.hpp"
#include "halo3d/kernels/KernelTypes.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"

namespace halo3d::kernels::impl {

// Row r of a box over samples x channels -> (n, c, d, h): H fastest, then D, channel, sample.
struct RowIndexer {
  index_t channels = 1, d_extent = 1, h_extent = 1, d0 = 0, h0 = 0;

  RowIndexer() = default;
  RowIndexer(index_t channels_, const Box& box)
      : channels(channels_),
        d_extent(box.extent(0)),
        h_extent(box.extent(1)),
        d0(box.min(0)),
        h0(box.min(1)) {}

  index_t rows(index_t samples) const { return samples * channels * d_extent * h_extent; }

  KOKKOS_INLINE_FUNCTION void operator()(index_t r, index_t& n, index_t& c, index_t& d,
                                         index_t& h) const {
    h = h0 + r % h_extent;
    r /= h_extent;
    d = d0 + r % d_extent;
    r /= d_extent;
    c = r % channels;
    n = r / channels;
  }

  // The row after (n, c, d, h): a 64-bit division costs as much as a short row of work.
  KOKKOS_INLINE_FUNCTION void next(index_t& n, index_t& c, index_t& d, index_t& h) const {
    if (++h < h0 + h_extent) return;
    h = h0;
    if (++d < d0 + d_extent) return;
    d = d0;
    if (++c < channels) return;
    c = 0;
    ++n;
  }
};

// Rows per chunk of a host thread: about kRowChunkCells cells, so that the chunk's one division and
// its scheduling are amortised.
inline constexpr index_t kRowChunkCells = 4096;
inline index_t rowsPerChunk(index_t width) {
  return width > 0 ? (kRowChunkCells + width - 1) / width : 1;
}

template <class ExecSpace, class F>
void forEachRow(const ExecSpace& exec, const std::string& label, index_t samples, index_t channels,
                const Box& box, const F& f, KernelPath path) {
  const RowIndexer rows(channels, box);
  const index_t row_count = rows.rows(samples);
  const index_t w0 = box.min(2), w1 = box.max(2), width = box.extent(2);
  if (row_count == 0 || width == 0) return;
  using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>;
  if constexpr (kRunsOnHost<ExecSpace>) {
    if (path == KernelPath::Fastest) {
      const index_t per_chunk = rowsPerChunk(width);
      Kokkos::parallel_for(
          label, Policy(exec, 0, (row_count + per_chunk - 1) / per_chunk),
          KOKKOS_LAMBDA(index_t chunk) {
            const index_t r0 = chunk * per_chunk;
            const index_t r1 = r0 + per_chunk < row_count ? r0 + per_chunk : row_count;
            index_t n, c, d, h;
            rows(r0, n, c, d, h);
            for (index_t r = r0; r < r1; ++r, rows.next(n, c, d, h))
              f(n, c, d, h, w0, w1);
          });
      return;
    }
  }
  Kokkos::parallel_for(
      label, Policy(exec, 0, row_count * width), KOKKOS_LAMBDA(index_t i) {
        index_t n, c, d, h;
        rows(i / width, n, c, d, h);
        const index_t w = w0 + i % width;
        f(n, c, d, h, w, w + 1);
      });
}

// The cell (n, c, d, h, w) is unused when there are no inputs.
template <class F, class Y, class Cells, std::size_t... K>
KOKKOS_INLINE_FUNCTION void callOnRows(const F& f, index_t width, Y* y, const Cells& in,
                                       [[maybe_unused]] index_t n, [[maybe_unused]] index_t c,
                                       [[maybe_unused]] index_t d, [[maybe_unused]] index_t h,
                                       [[maybe_unused]] index_t w, std::index_sequence<K...>) {
  f(width, y, in[K].row(n, c, d, h, w)...);
}

// The cell-wise kernels, y = f(inputs) on `box`: f(width, y_row, input_rows...) for every W row of
// y, the inputs' rows at the same cells (all of y's element type), `width` cells long. f loops over
// the row pointers, so that the loop vectorises (GlobalCells::row).
template <class ExecSpace, class T, class F, class... In>
void forEachCellRow(const ExecSpace& exec, const std::string& label, const Tensor<T, ExecSpace>& y,
                    const Box& box, KernelPath path, const F& f, const In&... inputs) {
  using Cells = GlobalCells<const T, typename ExecSpace::memory_space>;
  const auto yc = writeCells(y);
  const Kokkos::Array<Cells, sizeof...(In)> xc{readCells(inputs)...};
  forEachRow(
      exec, label, y.block().localSamples(), y.block().channels(), box,
      KOKKOS_LAMBDA(index_t n, index_t c, index_t d, index_t h, index_t w0, index_t w1) {
        callOnRows(f, w1 - w0, yc.row(n, c, d, h, w0), xc, n, c, d, h, w0,
                   std::make_index_sequence<sizeof...(In)>());
      },
      path);
}

}  // namespace halo3d::kernels::impl
