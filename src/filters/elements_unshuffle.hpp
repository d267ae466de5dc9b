// SPDX-License-Identifier: BSD-3-Clause
// A run of a shuffled block's elements, unshuffled: n elements whose byte b sits at plane b's k-th byte (k < n)
// written to dst one element after another. The planes are given by an accessor, plane(b) -> const uint8_t*
// (back to back in one buffer, or each on its own: a stream stored as it is stays in its chunk). What a read that wants a few rows of a block does instead
// of unshuffling the whole block (the table's kernels, shuffle.hpp, take whole blocks only). Header-only so the
// per-row calls inline; the vector paths are each target's baseline (SSE2 on x86-64, NEON on aarch64 and armv7
// built with it), the scalar loop everything else.
#pragma once
#include <stddef.h>
#include <stdint.h>

#if defined(TESSERA_HAVE_SSE2) && defined(__SSE2__)
#include <emmintrin.h>
#define TESSERA_ELEMENTS_SSE2 1
#elif defined(TESSERA_HAVE_NEON) && defined(__ARM_NEON)
#include <arm_neon.h>
#define TESSERA_ELEMENTS_NEON 1
#endif

namespace tessera::detail {

template <class Planes>
void elements_unshuffle_scalar(size_t typesize, const Planes& plane, size_t n, uint8_t* dst) noexcept {
  for (size_t k = 0; k < n; ++k)
    for (size_t b = 0; b < typesize; ++b) *dst++ = plane(b)[k];
}

#if defined(TESSERA_ELEMENTS_SSE2)
// 16 elements of 2, 4 or 8 bytes from i: the planes' bytes interleaved by unpacking, bytes then pairs then quads.
template <class Planes>
void elements_unshuffle16_sse2(size_t typesize, const Planes& plane, size_t i, uint8_t* dst) noexcept {
  auto load = [&](size_t b) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane(b) + i)); };
  auto store = [&](size_t k, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i * typesize + 16 * k), v); };
  if (typesize == 2) {
    const __m128i a = load(0), b = load(1);
    store(0, _mm_unpacklo_epi8(a, b));
    store(1, _mm_unpackhi_epi8(a, b));
    return;
  }
  // Four planes from plane b0: 16 elements' 4 bytes side by side in q[0..3].
  auto quads = [&](size_t b0, __m128i* q) {
    const __m128i a = load(b0), b = load(b0 + 1), c = load(b0 + 2), d = load(b0 + 3);
    const __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
    const __m128i cd0 = _mm_unpacklo_epi8(c, d), cd1 = _mm_unpackhi_epi8(c, d);
    q[0] = _mm_unpacklo_epi16(ab0, cd0);
    q[1] = _mm_unpackhi_epi16(ab0, cd0);
    q[2] = _mm_unpacklo_epi16(ab1, cd1);
    q[3] = _mm_unpackhi_epi16(ab1, cd1);
  };
  __m128i q[4];
  quads(0, q);
  if (typesize == 4) {
    for (size_t k = 0; k < 4; ++k) store(k, q[k]);
    return;
  }
  // 8 bytes: the high four planes the same way, then each element's two quads side by side.
  __m128i r[4];
  quads(4, r);
  for (size_t k = 0; k < 4; ++k) {
    store(2 * k, _mm_unpacklo_epi32(q[k], r[k]));
    store(2 * k + 1, _mm_unpackhi_epi32(q[k], r[k]));
  }
}
#endif

template <class Planes>
void elements_unshuffle_with(size_t typesize, const Planes& plane, size_t n, uint8_t* dst) noexcept {
#if defined(TESSERA_ELEMENTS_SSE2)
  if (n >= 16 && (typesize == 2 || typesize == 4 || typesize == 8)) {
    // 16 at a time; the last group overlaps the one before it rather than going scalar.
    for (size_t i = 0;; i += 16) {
      if (i + 16 > n) i = n - 16;
      elements_unshuffle16_sse2(typesize, plane, i, dst);
      if (i + 16 == n) return;
    }
  }
#elif defined(TESSERA_ELEMENTS_NEON)
  if (n >= 16 && (typesize == 2 || typesize == 4)) {
    for (size_t i = 0;; i += 16) {
      if (i + 16 > n) i = n - 16;
      if (typesize == 2) {
        const uint8x16x2_t v = {{vld1q_u8(plane(0) + i), vld1q_u8(plane(1) + i)}};
        vst2q_u8(dst + 2 * i, v);
      } else {
        const uint8x16x4_t v = {{vld1q_u8(plane(0) + i), vld1q_u8(plane(1) + i), vld1q_u8(plane(2) + i),
                                 vld1q_u8(plane(3) + i)}};
        vst4q_u8(dst + 4 * i, v);
      }
      if (i + 16 == n) return;
    }
  }
#endif
  elements_unshuffle_scalar(typesize, plane, n, dst);
}

// The planes back to back, stride bytes apart (plane b at planes + b * stride).
inline void elements_unshuffle(size_t typesize, const uint8_t* planes, size_t stride, size_t n, uint8_t* dst) noexcept {
  elements_unshuffle_with(typesize, [=](size_t b) { return planes + b * stride; }, n, dst);
}

// Each plane on its own: plane b's element k at planes[b][k0 + k].
inline void elements_unshuffle(size_t typesize, const uint8_t* const* planes, size_t k0, size_t n, uint8_t* dst) noexcept {
  elements_unshuffle_with(typesize, [=](size_t b) { return planes[b] + k0; }, n, dst);
}

}  // namespace tessera::detail
