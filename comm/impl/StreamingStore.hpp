#pragma once
// Host-only non-temporal (streaming) stores of whole 64-byte lines, for a buffer that another core
// reads next: the packed halo messages in the shared arena (impl::SharedArena).
//
// Why: the neighbour's unpack of the last round leaves the slice's lines in its cache. A plain
// store of the next round's pack must first take each line back from that core (a coherence round
// trip per line), which made packing into the slice run at a sixth of a local copy and the whole
// shared-memory route slower than one MPI single-copy transfer (docs/PERFORMANCE.md, issue 12,
// "Streaming stores"). A streaming store writes the line without reading it or owning it first.
//
// Only in host compilation of x86 code; elsewhere (device passes, other CPUs) plain copies, which
// give the same bytes.

#include <cstddef>
#include <cstring>

#if (defined(__AVX512F__) || defined(__SSE2__)) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__)
#define HALO3D_STREAMING_STORES 1
#include <immintrin.h>
#else
#define HALO3D_STREAMING_STORES 0
#endif

namespace halo3d::impl {

inline constexpr std::size_t kStreamLine = 64;

// Writes the 64 bytes at `src` (any alignment) to `dst` (64-byte aligned).
inline void streamLine(void* dst, const void* src) {
#if HALO3D_STREAMING_STORES && defined(__AVX512F__)
  _mm512_stream_si512(static_cast<__m512i*>(dst), _mm512_loadu_si512(src));
#elif HALO3D_STREAMING_STORES
  auto* d = static_cast<__m128i*>(dst);
  const auto* s = static_cast<const __m128i*>(src);
  for (int k = 0; k < 4; ++k)
    _mm_stream_si128(d + k, _mm_loadu_si128(s + k));
#else
  std::memcpy(dst, src, kStreamLine);
#endif
}

// Orders this thread's streaming stores before its later stores (they are weakly ordered): call it
// before anything may tell another core that the data is there.
inline void streamFence() {
#if HALO3D_STREAMING_STORES
  _mm_sfence();
#endif
}

}  // namespace halo3d::impl
