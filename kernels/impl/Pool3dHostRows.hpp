#pragma once
// Host rows of the pooling kernels for the common windows (dilation 1 along W, stride S and W taps
// KW of 1 to 3, known at compile time): plain loops over the cells of a row with constant-stride
// accesses, which the compiler vectorises across cells (-O3 -march=native) without gathers.
// Each function gives every cell the same bits as the per-cell code of Pool3dImpl.hpp: the max
// sees the taps in window order under the same rule, and the sums add the same terms in the same
// order (a term that is absent adds +0, which changes no sum that starts at +0).
//
// Host-only: included by Pool3dImpl.hpp, called from the bodies' hostRow, which only host
// execution spaces instantiate.

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "halo3d/core/Types.hpp"
#include "halo3d/kernels/ComputeType.hpp"

namespace halo3d::kernels::impl {

// Calls f(std::integral_constant<int, S>(), std::integral_constant<int, KW>()) and returns true for
// the strides and widths the rows below cover, false otherwise.
template <class F>
bool withRowShape(index_t stride, index_t taps, index_t dilation, const F& f) {
  if (dilation != 1 || stride < 1 || stride > 3 || taps < 1 || taps > 3) return false;
  const auto with_taps = [&](auto s) {
    switch (taps) {
      case 1:
        f(s, std::integral_constant<int, 1>());
        break;
      case 2:
        f(s, std::integral_constant<int, 2>());
        break;
      default:
        f(s, std::integral_constant<int, 3>());
    }
  };
  switch (stride) {
    case 1:
      with_taps(std::integral_constant<int, 1>());
      break;
    case 2:
      with_taps(std::integral_constant<int, 2>());
      break;
    default:
      with_taps(std::integral_constant<int, 3>());
  }
  return true;
}

// Max pooling forward over `cells` cells of one output row whose W taps all lie in the volume: cell
// j pools x row r at positions first + S j + kw (kw < KW) for each window row r < nrows in window
// order. rows[r] points at global position 0 of window row r, bases[r] is that row's global linear
// index (the volume has fewer than 2^31 cells, so that the winners fit 32 bits in flight). bf16
// rows compare as float (exact) and store the winner back unchanged.
template <int S, int KW, class T>
void maxPoolRowInterior(const T* const* rows, const std::int32_t* bases, int nrows, index_t first,
                        index_t cells, T* y, index_t* argmax) {
  using Acc = ComputeType<T>;
  constexpr int kChunk = 64;
  for (index_t c0 = 0; c0 < cells; c0 += kChunk) {
    const int m = int(std::min<index_t>(kChunk, cells - c0));
    const index_t f = first + S * c0;
    Acc acc[kChunk];
    std::int32_t best[kChunk];
    {
      const T* p = rows[0] + f;
      const std::int32_t b = bases[0] + std::int32_t(f);
      for (int j = 0; j < m; ++j) {
        Acc a = Acc(p[S * j]);
        std::int32_t w = b + S * j;
        for (int kw = 1; kw < KW; ++kw) {
          const Acc v = Acc(p[S * j + kw]);
          // PyTorch's rule: a strictly greater value or a NaN takes over.
          const bool take = v > a || v != v;
          a = take ? v : a;
          w = take ? b + S * j + kw : w;
        }
        acc[j] = a;
        best[j] = w;
      }
    }
    for (int r = 1; r < nrows; ++r) {
      const T* p = rows[r] + f;
      const std::int32_t b = bases[r] + std::int32_t(f);
      for (int j = 0; j < m; ++j) {
        Acc a = acc[j];
        std::int32_t w = best[j];
        for (int kw = 0; kw < KW; ++kw) {
          const Acc v = Acc(p[S * j + kw]);
          const bool take = v > a || v != v;
          a = take ? v : a;
          w = take ? b + S * j + kw : w;
        }
        acc[j] = a;
        best[j] = w;
      }
    }
    for (int j = 0; j < m; ++j) {
      y[c0 + j] = T(acc[j]);
      argmax[c0 + j] = best[j];
    }
  }
}

// Average pooling forward over `cells` interior cells from a buffer of summed window rows: cell j
// is (sum over kw of b[S j + kw]) * scale, rounded once to the storage type Out.
template <int S, int KW, class T, class Out>
void avgPoolRowInterior(const T* b, index_t cells, T scale, Out* y) {
  for (index_t j = 0; j < cells; ++j) {
    T acc = T(0);
    for (int kw = 0; kw < KW; ++kw)
      acc += b[S * j + kw];
    y[j] = Out(acc * scale);
  }
}

// The backward rows spread output values over the input positions of their W taps through S
// residue buffers: position `base` + q S + r is slot (r, q) of `slots` (r * len + q), so that each
// tap kw of the outputs is one contiguous pass. Passes run from the last tap to the first, which
// adds the outputs over one input cell in ascending order, as the per-cell code does.
template <int S, int KW, class T>
struct SpreadRow {
  T* slots;
  index_t len;   // slots per residue
  index_t lead;  // slot of the first output's tap 0 within its residue

  // Adds value(o, kw) at the position of tap kw of output o, for o < count.
  template <class Value>
  void add(index_t count, const Value& value) const {
    for (int kw = KW - 1; kw >= 0; --kw) {
      T* dst = slots + (kw % S) * len + lead + kw / S;
      for (index_t o = 0; o < count; ++o)
        dst[o] += value(o, kw);
    }
  }

  // out[i] = (slot of position i) * scale for the positions [from, from + count) (from base),
  // rounded once to the storage type Out (bf16 rows keep float slots).
  template <class Out>
  void write(index_t from, index_t count, T scale, Out* out, T* scratch) const {
    for (index_t q = 0; q < len; ++q)
      for (int r = 0; r < S; ++r)
        scratch[q * S + r] = slots[r * len + q];
    const T* src = scratch + from;
    for (index_t i = 0; i < count; ++i)
      out[i] = Out(src[i] * scale);
  }
};

}  // namespace halo3d::kernels::impl
