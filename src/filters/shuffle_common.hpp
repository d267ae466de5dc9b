// SPDX-License-Identifier: BSD-3-Clause
// What every shuffle kernel table shares, scalar and SIMD: the scalar loops of the format (which also finish what
// the vector code leaves) and the drivers that split a buffer into whole elements, or groups of 8 elements for
// the bit shuffle, and a tail copied as it is.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "filters/shuffle_kernels.hpp"

namespace tessera::detail {
// Internal linkage here and in simd_shuffle.hpp: each ISA's object file keeps its own copies, compiled with its
// own flags, never one the linker took from another ISA's object (an AVX2 copy would fault on an SSE2 CPU).
namespace {  // NOLINT(cert-dcl59-cpp): internal linkage on purpose, as said above

// Transposes the 8x8 bit matrix held in x (bit c of byte r = element [r][c]) by three rounds of swaps of
// 4x4, 2x2 and 1x1 blocks (Hacker's Delight, "transpose8").
inline uint64_t bits_transpose_8x8(uint64_t x) noexcept {
  uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  x ^= t ^ (t << 28);
  return x;
}

// Byte shuffle of elements [from, n): byte j of element i goes to row j (n bytes long). Unshuffle is the reverse.
inline void shuffle_rest(size_t ts, size_t n, size_t from, const uint8_t* src, uint8_t* dst) noexcept {
  for (size_t j = 0; j < ts; ++j) {
    uint8_t* row = dst + j * n;
    const uint8_t* in = src + j;
    for (size_t i = from; i < n; ++i) row[i] = in[i * ts];
  }
}

inline void unshuffle_rest(size_t ts, size_t n, size_t from, const uint8_t* src, uint8_t* dst) noexcept {
  for (size_t j = 0; j < ts; ++j) {
    const uint8_t* row = src + j * n;
    uint8_t* out = dst + j;
    for (size_t i = from; i < n; ++i) out[i * ts] = row[i];
  }
}

// Returns how many of the n whole elements it (un)shuffled, from the first; 0 when it has nothing for ts.
using elements_fn = size_t (*)(size_t ts, size_t n, size_t size, const uint8_t* src, uint8_t* dst) noexcept;

inline size_t no_vector_elements(size_t, size_t, size_t, const uint8_t*, uint8_t*) noexcept { return 0; }

// A byte (un)shuffle kernel: Vector does a first part of the elements, the scalar loop the rest, and the bytes
// past the last whole element are copied last (vector stores may have spilled into them).
template <bool Un, elements_fn Vector>
void byte_shuffle_run(size_t ts, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  const size_t n = size / ts;
  size_t done = 0;
  if (ts > 1 && n != 0) {
    const size_t from = Vector(ts, n, size, src, dst);
    if constexpr (Un) {
      unshuffle_rest(ts, n, from, src, dst);
    } else {
      shuffle_rest(ts, n, from, src, dst);
    }
    done = n * ts;
  }
  if (size > done) memcpy(dst + done, src + done, size - done);
}

// Bit (un)shuffle of the first n8 elements (n8 a non-zero multiple of 8).
using bits_fn = void (*)(size_t ts, size_t n8, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept;

// A bit (un)shuffle kernel: Bits does the whole groups of 8 elements, the rest is copied.
template <bits_fn Bits>
void bit_shuffle_run(size_t ts, size_t size, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  const size_t n8 = size / ts / 8 * 8;
  if (n8 != 0) Bits(ts, n8, src, dst, scratch);
  const size_t done = n8 * ts;
  if (size > done) memcpy(dst + done, src + done, size - done);
}

// Bit plane (j, b) holds n8 / 8 bytes; bit m of its byte g is bit b of byte j of element 8g + m. Each group of
// 8 elements' byte j is one 8x8 bit matrix to transpose. Un: the reverse.
template <bool Un>
void bit_planes_scalar(size_t ts, size_t n8, const uint8_t* src, uint8_t* dst, uint8_t*) noexcept {
  const size_t groups = n8 / 8;
  for (size_t j = 0; j < ts; ++j) {
    for (size_t g = 0; g < groups; ++g) {
      const size_t e = g * 8 * ts + j, p = j * n8 + g;  // byte j of element 8g, byte g of plane (j, 0)
      uint64_t x = 0;
      if constexpr (Un) {
        for (unsigned b = 0; b < 8; ++b) x |= static_cast<uint64_t>(src[p + b * groups]) << (8 * b);
        x = bits_transpose_8x8(x);
        for (unsigned m = 0; m < 8; ++m) dst[e + m * ts] = static_cast<uint8_t>(x >> (8 * m));
      } else {
        for (unsigned m = 0; m < 8; ++m) x |= static_cast<uint64_t>(src[e + m * ts]) << (8 * m);
        x = bits_transpose_8x8(x);
        for (unsigned b = 0; b < 8; ++b) dst[p + b * groups] = static_cast<uint8_t>(x >> (8 * b));
      }
    }
  }
}

}  // namespace
}  // namespace tessera::detail
