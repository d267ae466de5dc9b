// SPDX-License-Identifier: BSD-3-Clause
// AVX2 shuffle kernels (x86; compiled with -mavx2, chosen at run time when cpuid and the OS allow it).
//
// The byte (un)shuffle methods of simd_shuffle.hpp (zip rounds, 16 x 16 tiles) on 32-byte registers whose two 128-bit lanes carry two
// independent blocks of 16 elements (unpack works within lanes): lane 0 elements i..i+15, lane 1 elements
// i+16..i+31, so a shuffled row of 32 elements is one store. Typesizes 2 and 4 shuffle with fewer shuffles:
// pshufb groups each register's bytes by plane, rotated by the register's index, so that dword blends pick
// every plane's pieces from the registers and one pshufd puts the pieces in order.
// Bit shuffle: byte shuffle, then movemask per byte row. Bit unshuffle: delta-swap bit transposes in registers,
// then a byte unshuffle of typesize 8 * ts. (Measured on 256 KiB blocks, whose rows are a power of two apart,
// these two beat the other combinations.)
#include <immintrin.h>

#include "filters/simd_shuffle.hpp"

namespace tessera::detail {
namespace {

struct avx2_ops : simd::generic_ops<32> {
  static vec zip_lo(vec a, vec b) noexcept { return _mm256_unpacklo_epi8(a, b); }
  static vec zip_hi(vec a, vec b) noexcept { return _mm256_unpackhi_epi8(a, b); }
};

using vec = __m256i;
inline vec load(const uint8_t* p) noexcept { return avx2_ops::load(p); }
inline void store(uint8_t* p, vec v) noexcept { avx2_ops::store(p, v); }
// Lane 0 from lo, lane 1 from hi.
inline vec load_lanes(const uint8_t* lo, const uint8_t* hi) noexcept {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(lo))),
                                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(hi)), 1);
}
inline void store_lo(uint8_t* p, vec v) noexcept {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(v));
}
inline void store_hi(uint8_t* p, vec v) noexcept {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_extracti128_si256(v, 1));
}

// pshufb control for register k of a typesize-ts block (ts 2 or 4): piece q of each lane (16 / ts bytes, one
// byte per element) holds plane (q - k) mod ts.
inline vec rotated_plane_mask(size_t ts, size_t k) noexcept {
  alignas(32) uint8_t m[32];
  const size_t per = 16 / ts;
  for (size_t idx = 0; idx < 32; ++idx) {
    const size_t q = (idx & 15) / per, e = (idx & 15) % per;
    m[idx] = static_cast<uint8_t>(e * ts + ((q + ts - k) % ts));
  }
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(m));
}

// --- byte shuffle ---------------------------------------------------------------------------------------------

// Each returns how many elements it handled (a multiple of 32); the caller finishes the rest.
size_t shuffle2(size_t n, const uint8_t* src, uint8_t* dst) noexcept {
  const vec m0 = rotated_plane_mask(2, 0), m1 = rotated_plane_mask(2, 1);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const uint8_t* s = src + 2 * i;
    const vec r0 = _mm256_shuffle_epi8(load_lanes(s, s + 32), m0);
    const vec r1 = _mm256_shuffle_epi8(load_lanes(s + 16, s + 48), m1);
    store(dst + i, _mm256_blend_epi32(r0, r1, 0xCC));
    store(dst + n + i, _mm256_shuffle_epi32(_mm256_blend_epi32(r1, r0, 0xCC), 0x4E));
  }
  return i;
}

size_t shuffle4(size_t n, const uint8_t* src, uint8_t* dst) noexcept {
  const vec m0 = rotated_plane_mask(4, 0), m1 = rotated_plane_mask(4, 1), m2 = rotated_plane_mask(4, 2),
            m3 = rotated_plane_mask(4, 3);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const uint8_t* s = src + 4 * i;
    const vec r0 = _mm256_shuffle_epi8(load_lanes(s, s + 64), m0);
    const vec r1 = _mm256_shuffle_epi8(load_lanes(s + 16, s + 80), m1);
    const vec r2 = _mm256_shuffle_epi8(load_lanes(s + 32, s + 96), m2);
    const vec r3 = _mm256_shuffle_epi8(load_lanes(s + 48, s + 112), m3);
    // Plane p: dword q from register (q - p) mod 4, then rotated so that dword k comes from register k.
    const vec p0 = _mm256_blend_epi32(_mm256_blend_epi32(r0, r1, 0x22), _mm256_blend_epi32(r2, r3, 0x88), 0xCC);
    const vec p1 = _mm256_blend_epi32(_mm256_blend_epi32(r3, r0, 0x22), _mm256_blend_epi32(r1, r2, 0x88), 0xCC);
    const vec p2 = _mm256_blend_epi32(_mm256_blend_epi32(r2, r3, 0x22), _mm256_blend_epi32(r0, r1, 0x88), 0xCC);
    const vec p3 = _mm256_blend_epi32(_mm256_blend_epi32(r1, r2, 0x22), _mm256_blend_epi32(r3, r0, 0x88), 0xCC);
    store(dst + i, p0);
    store(dst + n + i, _mm256_shuffle_epi32(p1, 0x39));
    store(dst + 2 * n + i, _mm256_shuffle_epi32(p2, 0x4E));
    store(dst + 3 * n + i, _mm256_shuffle_epi32(p3, 0x93));
  }
  return i;
}

// H blocks of 32 elements per step: with H = 2 every row gets whole 64-byte lines, which matters when the rows
// are a power of two apart and share one L1 set (eight or more rows would evict each other's half lines).
template <size_t TS, size_t H>
inline void shuffle_pow2_step(size_t n, size_t i, const uint8_t* src, uint8_t* dst) noexcept {
  vec r[H][TS];
#pragma GCC unroll 2
  for (size_t h = 0; h < H; ++h) {
    const uint8_t* s = src + (i + 32 * h) * TS;
#pragma GCC unroll 16
    for (size_t k = 0; k < TS; ++k) r[h][k] = load_lanes(s + 16 * k, s + 16 * TS + 16 * k);
    simd::zip_rounds<avx2_ops, TS, 4>(r[h]);
  }
#pragma GCC unroll 16
  for (size_t b = 0; b < TS; ++b)
#pragma GCC unroll 2
    for (size_t h = 0; h < H; ++h) store(dst + b * n + i + 32 * h, r[h][b]);
}

template <size_t TS, size_t H>
inline void unshuffle_pow2_step(size_t n, size_t i, const uint8_t* src, uint8_t* dst) noexcept {
  vec r[H][TS];
#pragma GCC unroll 16
  for (size_t b = 0; b < TS; ++b)
#pragma GCC unroll 2
    for (size_t h = 0; h < H; ++h) r[h][b] = load(src + b * n + i + 32 * h);
#pragma GCC unroll 2
  for (size_t h = 0; h < H; ++h) {
    simd::zip_rounds<avx2_ops, TS, simd::log2_of(TS)>(r[h]);
    uint8_t* d = dst + (i + 32 * h) * TS;
#pragma GCC unroll 16
    for (size_t k = 0; k < TS; ++k) {
      store_lo(d + 16 * k, r[h][k]);
      store_hi(d + 16 * TS + 16 * k, r[h][k]);
    }
  }
}

template <size_t TS, bool Un>
size_t pow2_blocks(size_t n, const uint8_t* src, uint8_t* dst) noexcept {
  constexpr auto step2 = Un ? unshuffle_pow2_step<TS, 2> : shuffle_pow2_step<TS, 2>;
  constexpr auto step1 = Un ? unshuffle_pow2_step<TS, 1> : shuffle_pow2_step<TS, 1>;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) step2(n, i, src, dst);
  if (i + 32 <= n) step1(n, i, src, dst), i += 32;
  return i;
}

// Any typesize: 16 x 16 tiles in each lane (see simd_shuffle.hpp), H blocks of 32 elements per step.
using simd::tile_fits;
using simd::tile_offset;

template <size_t H, bool Un>
void tiles_step(size_t ts, size_t n, size_t i, const uint8_t* src, uint8_t* dst) noexcept {
  for (size_t off = 0; off < ts; off += 16) {
    const size_t o = tile_offset(ts, off);
    vec r[H][16];
    if constexpr (Un) {
#pragma GCC unroll 16
      for (size_t k = 0; k < 16; ++k)
#pragma GCC unroll 2
        for (size_t h = 0; h < H; ++h) r[h][k] = load(src + (o + k < ts ? o + k : 0) * n + i + 32 * h);
      // In element order: with ts < 16 each store spills into the next element, which the next store fixes
      // (the last spill is fixed by the next tile or the scalar tail).
#pragma GCC unroll 2
      for (size_t h = 0; h < H; ++h) {
        simd::zip_rounds<avx2_ops, 16, 4>(r[h]);
        uint8_t* d = dst + (i + 32 * h) * ts + o;
#pragma GCC unroll 16
        for (size_t k = 0; k < 16; ++k) store_lo(d + k * ts, r[h][k]);
#pragma GCC unroll 16
        for (size_t k = 0; k < 16; ++k) store_hi(d + (16 + k) * ts, r[h][k]);
      }
    } else {
#pragma GCC unroll 2
      for (size_t h = 0; h < H; ++h) {
        const uint8_t* s = src + (i + 32 * h) * ts + o;
#pragma GCC unroll 16
        for (size_t k = 0; k < 16; ++k) r[h][k] = load_lanes(s + k * ts, s + (16 + k) * ts);
        simd::zip_rounds<avx2_ops, 16, 4>(r[h]);
      }
      for (size_t k = 0; k < (ts < 16 ? ts : 16); ++k)
#pragma GCC unroll 2
        for (size_t h = 0; h < H; ++h) store(dst + (o + k) * n + i + 32 * h, r[h][k]);
    }
  }
}

template <bool Un>
size_t tiles(size_t ts, size_t n, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  size_t i = 0;
  for (; tile_fits(ts, size, i, 64); i += 64) tiles_step<2, Un>(ts, n, i, src, dst);
  if (tile_fits(ts, size, i, 32)) tiles_step<1, Un>(ts, n, i, src, dst), i += 32;
  return i;
}

// Each returns how many elements it handled (a multiple of 32); the scalar loop finishes the rest.
template <bool Un>
size_t vector_elements(size_t ts, size_t n, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  switch (ts) {
    case 2: return Un ? pow2_blocks<2, true>(n, src, dst) : shuffle2(n, src, dst);
    case 4: return Un ? pow2_blocks<4, true>(n, src, dst) : shuffle4(n, src, dst);
    case 8: return pow2_blocks<8, Un>(n, src, dst);
    case 16: return pow2_blocks<16, Un>(n, src, dst);
    default: return tiles<Un>(ts, n, size, src, dst);
  }
}

constexpr auto shuffle_avx2 = byte_shuffle_run<false, vector_elements<false>>;
constexpr auto unshuffle_avx2 = byte_shuffle_run<true, vector_elements<true>>;

// --- bit shuffle ----------------------------------------------------------------------------------------------

inline uint64_t movemask64(vec lo, vec hi) noexcept {
  return static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(lo))) |
         static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(hi))) << 32;
}

// Bit shuffle, second step: one byte row of `groups` 8-byte groups (byte j of 8 consecutive elements each)
// into its 8 bit planes at out + b * groups: movemask takes the top bit of every byte, doubling brings the
// next bit up. (Less sensitive than the delta swaps below to rows a power of two apart, the usual case.)
void row_to_bit_planes(const uint8_t* in, size_t groups, uint8_t* out) noexcept {
  size_t g = 0;
  for (; g + 16 <= groups; g += 16) {
    vec x0 = load(in + 8 * g), x1 = load(in + 8 * g + 32), x2 = load(in + 8 * g + 64), x3 = load(in + 8 * g + 96);
    for (unsigned b = 8; b-- > 0;) {
      const uint64_t m0 = movemask64(x0, x1), m1 = movemask64(x2, x3);
      memcpy(out + b * groups + g, &m0, 8);
      memcpy(out + b * groups + g + 8, &m1, 8);
      x0 = _mm256_add_epi8(x0, x0);
      x1 = _mm256_add_epi8(x1, x1);
      x2 = _mm256_add_epi8(x2, x2);
      x3 = _mm256_add_epi8(x3, x3);
    }
  }
  for (; g + 4 <= groups; g += 4) {
    vec x = load(in + 8 * g);
    for (unsigned b = 8; b-- > 0;) {
      const uint32_t m = static_cast<uint32_t>(_mm256_movemask_epi8(x));
      memcpy(out + b * groups + g, &m, 4);
      x = _mm256_add_epi8(x, x);
    }
  }
  for (; g < groups; ++g) {
    uint64_t x;
    memcpy(&x, in + 8 * g, 8);
    x = bits_transpose_8x8(x);
    for (unsigned b = 0; b < 8; ++b) out[b * groups + g] = static_cast<uint8_t>(x >> (8 * b));
  }
}

// Bit shuffle: the byte shuffle puts byte j of all elements in row j, then each row gives 8 planes.
void bits_by_movemask(size_t ts, size_t n8, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  const uint8_t* rows = src;
  if (ts != 1) {
    shuffle_avx2(ts, n8 * ts, src, scratch);
    rows = scratch;
  }
  for (size_t j = 0; j < ts; ++j) row_to_bit_planes(rows + j * n8, n8 / 8, dst + j * n8);
}

}  // namespace

// Bit unshuffle: delta-swap bit transposes (simd::bit_planes_transpose, 64 groups a step), then a byte unshuffle
// of typesize 8 * ts.
const shuffle_kernels kShuffleAvx2 = {simd_level::avx2, shuffle_avx2, unshuffle_avx2,
                                      bit_shuffle_run<bits_by_movemask>,
                                      bit_shuffle_run<simd::bits_by_planes<avx2_ops, 2, true, unshuffle_avx2>>};

}  // namespace tessera::detail
