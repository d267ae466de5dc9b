// SSE2 shuffle kernels (x86; compiled with -msse2, chosen at run time).
//
// Byte shuffle: blocks of 16 elements are transposed in registers by stages of unpacklo/hi_epi8. One stage over
// R registers pairs register i with i + R/2 and rotates the address of every byte (register index, then byte
// index in the register) left by one bit; element e, byte b of a block of typesize 2^m sits at (e, b) and must
// reach (b, e): 4 stages for shuffle, m for unshuffle. Other typesizes transpose 16 x 16 byte tiles.
//
// Bit shuffle: a byte shuffle of typesize 8 * typesize gathers, for each byte j and each element m of the groups
// of 8 elements, one row of bytes; 8 such rows (m = 0..7) are 8x8 bit matrices, one per group, transposed in
// registers by delta swaps into the 8 bit planes of byte j. Bit unshuffle runs the same steps backwards.
#include <emmintrin.h>

#include <cstring>

#include "filters/shuffle_kernels.hpp"

namespace tessera::detail {
namespace {

using vec = __m128i;

inline vec load(const uint8_t* p) noexcept { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline void store(uint8_t* p, vec v) noexcept { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }

template <size_t R, unsigned Stages>
inline void interleave(vec (&r)[R]) noexcept {
#pragma GCC unroll 4
  for (unsigned s = 0; s < Stages; ++s) {
    vec t[R];
#pragma GCC unroll 16
    for (size_t i = 0; i < R / 2; ++i) {
      t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + R / 2]);
      t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + R / 2]);
    }
#pragma GCC unroll 16
    for (size_t i = 0; i < R; ++i) r[i] = t[i];
  }
}

constexpr unsigned log2_of(size_t v) noexcept { return v <= 1 ? 0 : 1 + log2_of(v / 2); }

inline uint64_t bits_transpose_8x8(uint64_t x) noexcept {
  uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  x ^= t ^ (t << 28);
  return x;
}

// --- byte shuffle ---------------------------------------------------------------------------------------------

// Each returns how many elements it handled (a multiple of 16); the caller finishes the rest.
template <size_t TS>
size_t shuffle_pow2(size_t n, const uint8_t* src, uint8_t* dst) noexcept {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    vec r[TS];
#pragma GCC unroll 16
    for (size_t k = 0; k < TS; ++k) r[k] = load(src + i * TS + 16 * k);
    interleave<TS, 4>(r);
#pragma GCC unroll 16
    for (size_t b = 0; b < TS; ++b) store(dst + b * n + i, r[b]);
  }
  return i;
}

template <size_t TS>
size_t unshuffle_pow2(size_t n, const uint8_t* src, uint8_t* dst) noexcept {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    vec r[TS];
#pragma GCC unroll 16
    for (size_t b = 0; b < TS; ++b) r[b] = load(src + b * n + i);
    interleave<TS, log2_of(TS)>(r);
#pragma GCC unroll 16
    for (size_t k = 0; k < TS; ++k) store(dst + i * TS + 16 * k, r[k]);
  }
  return i;
}

// Any typesize: 16 x 16 tiles (16 elements by 16 bytes of them). Typesizes above 16 take their last tile at
// ts - 16, overlapping the previous one; below 16 a tile holds whole elements plus bytes past them, so the
// loop stops while the last element's 16 bytes still lie inside the buffer.
inline size_t tile_offset(size_t ts, size_t off) noexcept { return off + 16 <= ts ? off : (ts < 16 ? 0 : ts - 16); }
inline bool tile_fits(size_t ts, size_t size, size_t i) noexcept {
  return (i + 15) * ts + (ts < 16 ? 16 : ts) <= size;
}

size_t shuffle_tiles(size_t ts, size_t n, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  const size_t rows = ts < 16 ? ts : 16;
  size_t i = 0;
  for (; tile_fits(ts, size, i); i += 16) {
    for (size_t off = 0; off < ts; off += 16) {
      const size_t o = tile_offset(ts, off);
      vec r[16];
#pragma GCC unroll 16
      for (size_t k = 0; k < 16; ++k) r[k] = load(src + (i + k) * ts + o);
      interleave<16, 4>(r);
      for (size_t k = 0; k < rows; ++k) store(dst + (o + k) * n + i, r[k]);
    }
  }
  return i;
}

size_t unshuffle_tiles(size_t ts, size_t n, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  size_t i = 0;
  for (; tile_fits(ts, size, i); i += 16) {
    for (size_t off = 0; off < ts; off += 16) {
      const size_t o = tile_offset(ts, off);
      vec r[16];
#pragma GCC unroll 16
      for (size_t k = 0; k < 16; ++k) r[k] = load(src + (o + k < ts ? o + k : 0) * n + i);
      interleave<16, 4>(r);
      // In element order: with ts < 16 each store spills into the next element, which the next store fixes
      // (the last spill is fixed by the next tile or the scalar tail).
#pragma GCC unroll 16
      for (size_t k = 0; k < 16; ++k) store(dst + (i + k) * ts + o, r[k]);
    }
  }
  return i;
}

void shuffle_rest(size_t ts, size_t n, size_t from, const uint8_t* src, uint8_t* dst) noexcept {
  for (size_t j = 0; j < ts; ++j)
    for (size_t i = from; i < n; ++i) dst[j * n + i] = src[i * ts + j];
}

void unshuffle_rest(size_t ts, size_t n, size_t from, const uint8_t* src, uint8_t* dst) noexcept {
  for (size_t j = 0; j < ts; ++j)
    for (size_t i = from; i < n; ++i) dst[i * ts + j] = src[j * n + i];
}

void shuffle_sse2(size_t ts, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  const size_t n = size / ts;
  if (ts == 1 || n == 0) {
    if (size != 0) std::memcpy(dst, src, size);
    return;
  }
  size_t done = 0;
  switch (ts) {
    case 2: done = shuffle_pow2<2>(n, src, dst); break;
    case 4: done = shuffle_pow2<4>(n, src, dst); break;
    case 8: done = shuffle_pow2<8>(n, src, dst); break;
    case 16: done = shuffle_pow2<16>(n, src, dst); break;
    default: done = shuffle_tiles(ts, n, size, src, dst); break;
  }
  shuffle_rest(ts, n, done, src, dst);
  if (size > n * ts) std::memcpy(dst + n * ts, src + n * ts, size - n * ts);
}

void unshuffle_sse2(size_t ts, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  const size_t n = size / ts;
  if (ts == 1 || n == 0) {
    if (size != 0) std::memcpy(dst, src, size);
    return;
  }
  size_t done = 0;
  switch (ts) {
    case 2: done = unshuffle_pow2<2>(n, src, dst); break;
    case 4: done = unshuffle_pow2<4>(n, src, dst); break;
    case 8: done = unshuffle_pow2<8>(n, src, dst); break;
    case 16: done = unshuffle_pow2<16>(n, src, dst); break;
    default: done = unshuffle_tiles(ts, n, size, src, dst); break;
  }
  unshuffle_rest(ts, n, done, src, dst);
  // Last: the tiles may have spilled past the elements.
  if (size > n * ts) std::memcpy(dst + n * ts, src + n * ts, size - n * ts);
}

// --- bit shuffle ----------------------------------------------------------------------------------------------

// Transposes the 8x8 bit matrices formed by byte g of x[0..7] (bit c of x[r] becomes bit r of x[c]) with three
// rounds of delta swaps between registers (blocks of 4, 2, 1 bits). Shifts are 16-bit: the bits that cross into
// the neighbouring byte are the ones the masks drop.
inline void bits_transpose_8x8(vec (&x)[8]) noexcept {
  const vec m4 = _mm_set1_epi8(0x0F), m2 = _mm_set1_epi8(0x33), m1 = _mm_set1_epi8(0x55);
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
    const vec t = _mm_and_si128(_mm_xor_si128(_mm_srli_epi16(x[r], 4), x[r + 4]), m4);
    x[r + 4] = _mm_xor_si128(x[r + 4], t);
    x[r] = _mm_xor_si128(x[r], _mm_slli_epi16(t, 4));
  }
#pragma GCC unroll 4
  for (int r = 0; r < 8; r += (r & 1) ? 3 : 1) {  // 0, 1, 4, 5
    const vec t = _mm_and_si128(_mm_xor_si128(_mm_srli_epi16(x[r], 2), x[r + 2]), m2);
    x[r + 2] = _mm_xor_si128(x[r + 2], t);
    x[r] = _mm_xor_si128(x[r], _mm_slli_epi16(t, 2));
  }
#pragma GCC unroll 4
  for (int r = 0; r < 8; r += 2) {
    const vec t = _mm_and_si128(_mm_xor_si128(_mm_srli_epi16(x[r], 1), x[r + 1]), m1);
    x[r + 1] = _mm_xor_si128(x[r + 1], t);
    x[r] = _mm_xor_si128(x[r], _mm_slli_epi16(t, 1));
  }
}

// For each byte j and each group g of 8 elements: the 8 bytes in[(r * r_step + j * in_j_step) * groups + g]
// (r = 0..7) form an 8x8 bit matrix whose transpose goes to out[(c * c_step + j * out_j_step) * groups + g]
// (c = 0..7). Bit shuffle reads the rows m * ts + j and writes the planes 8j + b; bit unshuffle the reverse.
void bit_planes_transpose(size_t ts, size_t groups, size_t r_step, size_t in_j_step, size_t c_step,
                          size_t out_j_step, const uint8_t* in, uint8_t* out) noexcept {
  const size_t rs = r_step * groups, cs = c_step * groups;
  for (size_t j = 0; j < ts; ++j) {
    const uint8_t* row = in + j * in_j_step * groups;
    uint8_t* col = out + j * out_j_step * groups;
    size_t g = 0;
    for (; g + 16 <= groups; g += 16) {
      vec x[8];
#pragma GCC unroll 8
      for (size_t r = 0; r < 8; ++r) x[r] = load(row + r * rs + g);
      bits_transpose_8x8(x);
#pragma GCC unroll 8
      for (size_t c = 0; c < 8; ++c) store(col + c * cs + g, x[c]);
    }
    for (; g < groups; ++g) {
      uint64_t x = 0;
      for (unsigned r = 0; r < 8; ++r) x |= static_cast<uint64_t>(row[r * rs + g]) << (8 * r);
      x = bits_transpose_8x8(x);
      for (unsigned c = 0; c < 8; ++c) col[c * cs + g] = static_cast<uint8_t>(x >> (8 * c));
    }
  }
}

// Bit shuffle: a byte shuffle of typesize 8 * ts puts byte j of element 8g + m at scratch[(m * ts + j) * groups
// + g]; the bit transpose of those 8 rows gives planes 8j + b.
void bitshuffle_sse2(size_t ts, size_t size, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  const size_t n8 = size / ts / 8 * 8;
  const size_t bytes = n8 * ts;
  if (n8 != 0) {
    shuffle_sse2(8 * ts, bytes, src, scratch);
    bit_planes_transpose(ts, n8 / 8, ts, 1, 1, 8, scratch, dst);
  }
  if (size > bytes) std::memcpy(dst + bytes, src + bytes, size - bytes);
}

void bitunshuffle_sse2(size_t ts, size_t size, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  const size_t n8 = size / ts / 8 * 8;
  const size_t bytes = n8 * ts;
  if (n8 != 0) {
    bit_planes_transpose(ts, n8 / 8, 1, 8, ts, 1, src, scratch);
    unshuffle_sse2(8 * ts, bytes, scratch, dst);
  }
  if (size > bytes) std::memcpy(dst + bytes, src + bytes, size - bytes);
}

}  // namespace

const shuffle_kernels kShuffleSse2 = {simd_level::sse2, shuffle_sse2, unshuffle_sse2, bitshuffle_sse2,
                                      bitunshuffle_sse2};

}  // namespace tessera::detail
