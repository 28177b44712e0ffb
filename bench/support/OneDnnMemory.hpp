#pragma once
// The oneDNN memory set-up the convolution comparisons share: plain float buffers filled with
// deterministic values, reordered (and converted, for bf16) once into the layout a primitive chose,
// outside the timed region. Include only where oneDNN is found.
#include <dnnl.hpp>

#include <cstddef>
#include <cstdint>

namespace halo3d::bench {

// A oneDNN memory in the primitive's layout, filled from a plain-layout memory by a reorder.
inline dnnl::memory toPrimitive(const dnnl::engine& eng, dnnl::stream& strm, dnnl::memory& plain,
                                const dnnl::memory::desc& md) {
  if (plain.get_desc() == md) return plain;
  dnnl::memory m(md, eng);
  dnnl::reorder(plain, m).execute(strm, plain, m);
  return m;
}

// Every float of a plain memory from its index, in [-1, 1].
inline void fillPlain(dnnl::memory& m, std::uint32_t seed) {
  float* p = static_cast<float*>(m.get_data_handle());
  const std::size_t n = m.get_desc().get_size() / sizeof(float);
  for (std::size_t k = 0; k < n; ++k)
    p[k] = float((k * 2654435761u ^ seed) % 2001) / 1000.0f - 1.0f;
}

}  // namespace halo3d::bench
