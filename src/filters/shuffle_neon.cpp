// NEON kernels (aarch64, and armv7 built with -mfpu=neon).
// - shuffle: typesizes 2, 4, 8 and 16 transpose 16 elements at a time in registers: vld2/vld4 deinterleave the
//   bytes, then rounds of unzips finish the transpose (each unzip round rotates the bits of the byte index by
//   one, so log2(typesize) rounds in all turn index i * typesize + j into j * 16 + i). Unshuffle runs it
//   backwards with zips and vst2/vst4. A tail of n % 16 elements is done by transposing the last 16 elements
//   again (overlapping; the bytes written are the same).
// - bitshuffle: the byte shuffle of the first n8 elements (into scratch), then each byte row is bit-transposed:
//   128 row bytes are gathered into 8 vectors w[m][k] = row[8k + m] (the typesize-8 transpose), and an 8x8 bit
//   transpose across those vectors, made of per-byte shifts and selects, leaves bit plane b in w[b].
// Other typesizes, and buffers too small for one vector block, go through the scalar table.
#if !defined(__ARM_NEON) && !defined(__ARM_NEON__)
#error "shuffle_neon.cpp needs NEON: aarch64, or armv7 with -mfpu=neon (set by the toolchain)"
#endif

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "shuffle_kernels.hpp"

namespace tessera::detail {
namespace {

constexpr size_t kBlock = 16;  // elements per vector block

template <size_t TS>
constexpr size_t log2_of() noexcept {
  return TS == 2 ? 1 : TS == 4 ? 2 : TS == 8 ? 3 : 4;
}

// One unzip round over TS vectors: v[q] = even bytes of (v[2q], v[2q+1]), v[q + TS/2] = the odd bytes.
template <size_t TS>
inline void unzip_round(uint8x16_t* v) noexcept {
  uint8x16_t t[TS];
#pragma GCC unroll 16
  for (size_t q = 0; q < TS / 2; ++q) {
    const uint8x16x2_t u = vuzpq_u8(v[2 * q], v[2 * q + 1]);
    t[q] = u.val[0];
    t[q + TS / 2] = u.val[1];
  }
#pragma GCC unroll 16
  for (size_t i = 0; i < TS; ++i) v[i] = t[i];
}

// The inverse of unzip_round.
template <size_t TS>
inline void zip_round(uint8x16_t* v) noexcept {
  uint8x16_t t[TS];
#pragma GCC unroll 16
  for (size_t q = 0; q < TS / 2; ++q) {
    const uint8x16x2_t z = vzipq_u8(v[q], v[q + TS / 2]);
    t[2 * q] = z.val[0];
    t[2 * q + 1] = z.val[1];
  }
#pragma GCC unroll 16
  for (size_t i = 0; i < TS; ++i) v[i] = t[i];
}

// Loads 16 elements of TS bytes from p and transposes them: v[j][i] = p[i * TS + j].
template <size_t TS>
inline void load_transposed(const uint8_t* p, uint8x16_t* v) noexcept {
  if constexpr (TS == 2) {
    const uint8x16x2_t x = vld2q_u8(p);
    v[0] = x.val[0];
    v[1] = x.val[1];
  } else {
    // vld4 does the first two rounds: block c gives v[j * TS/4 + c], the layout two unzip rounds would leave.
#pragma GCC unroll 4
    for (size_t c = 0; c < TS / 4; ++c) {
      const uint8x16x4_t x = vld4q_u8(p + 64 * c);
#pragma GCC unroll 4
      for (size_t j = 0; j < 4; ++j) v[j * (TS / 4) + c] = x.val[j];
    }
    for (size_t r = 2; r < log2_of<TS>(); ++r) unzip_round<TS>(v);
  }
}

// The inverse of load_transposed: p[i * TS + j] = v[j][i].
template <size_t TS>
inline void store_interleaved(uint8x16_t* v, uint8_t* p) noexcept {
  if constexpr (TS == 2) {
    uint8x16x2_t x;
    x.val[0] = v[0];
    x.val[1] = v[1];
    vst2q_u8(p, x);
  } else {
    for (size_t r = 2; r < log2_of<TS>(); ++r) zip_round<TS>(v);
#pragma GCC unroll 4
    for (size_t c = 0; c < TS / 4; ++c) {
      uint8x16x4_t x;
#pragma GCC unroll 4
      for (size_t j = 0; j < 4; ++j) x.val[j] = v[j * (TS / 4) + c];
      vst4q_u8(p + 64 * c, x);
    }
  }
}

template <size_t TS>
inline void shuffle_block(size_t n, size_t i, const uint8_t* src, uint8_t* dst) noexcept {
  uint8x16_t v[TS];
  load_transposed<TS>(src + i * TS, v);
#pragma GCC unroll 16
  for (size_t j = 0; j < TS; ++j) vst1q_u8(dst + j * n + i, v[j]);
}

template <size_t TS>
inline void unshuffle_block(size_t n, size_t i, const uint8_t* src, uint8_t* dst) noexcept {
  uint8x16_t v[TS];
#pragma GCC unroll 16
  for (size_t j = 0; j < TS; ++j) v[j] = vld1q_u8(src + j * n + i);
  store_interleaved<TS>(v, dst + i * TS);
}

template <size_t TS>
void shuffle_fixed(size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  const size_t n = size / TS;
  if (n < kBlock) {
    kShuffleScalar.shuffle(TS, size, src, dst);
    return;
  }
  for (size_t i = 0; i + kBlock <= n; i += kBlock) shuffle_block<TS>(n, i, src, dst);
  if (n % kBlock != 0) shuffle_block<TS>(n, n - kBlock, src, dst);
  std::memcpy(dst + n * TS, src + n * TS, size - n * TS);
}

template <size_t TS>
void unshuffle_fixed(size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  const size_t n = size / TS;
  if (n < kBlock) {
    kShuffleScalar.unshuffle(TS, size, src, dst);
    return;
  }
  for (size_t i = 0; i + kBlock <= n; i += kBlock) unshuffle_block<TS>(n, i, src, dst);
  if (n % kBlock != 0) unshuffle_block<TS>(n, n - kBlock, src, dst);
  std::memcpy(dst + n * TS, src + n * TS, size - n * TS);
}

void shuffle_neon(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  switch (typesize) {
    case 1: if (size != 0) std::memcpy(dst, src, size); return;
    case 2: shuffle_fixed<2>(size, src, dst); return;
    case 4: shuffle_fixed<4>(size, src, dst); return;
    case 8: shuffle_fixed<8>(size, src, dst); return;
    case 16: shuffle_fixed<16>(size, src, dst); return;
    default: kShuffleScalar.shuffle(typesize, size, src, dst); return;
  }
}

void unshuffle_neon(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  switch (typesize) {
    case 1: if (size != 0) std::memcpy(dst, src, size); return;
    case 2: unshuffle_fixed<2>(size, src, dst); return;
    case 4: unshuffle_fixed<4>(size, src, dst); return;
    case 8: unshuffle_fixed<8>(size, src, dst); return;
    case 16: unshuffle_fixed<16>(size, src, dst); return;
    default: kShuffleScalar.unshuffle(typesize, size, src, dst); return;
  }
}

// One stage of the 8x8 bit transpose: rows m and m + S swap the S-wide bit groups that lie off the diagonal.
template <int S>
inline void bit_stage(uint8x16_t* w, uint8_t low_bits) noexcept {
  const uint8x16_t low = vdupq_n_u8(low_bits);
#pragma GCC unroll 8
  for (int m = 0; m < 8; ++m) {
    if ((m & S) != 0) continue;
    const uint8x16_t a = w[m];
    const uint8x16_t b = w[m + S];
    w[m] = vbslq_u8(low, a, vshlq_n_u8(b, S));
    w[m + S] = vbslq_u8(low, vshrq_n_u8(a, S), b);
  }
}

// Bit b of byte k of w[m] becomes bit m of byte k of w[b] (its own inverse).
inline void bit_transpose8(uint8x16_t* w) noexcept {
  bit_stage<4>(w, 0x0F);
  bit_stage<2>(w, 0x33);
  bit_stage<1>(w, 0x55);
}

// 128 bytes of a row (from row byte 8 * k0) into bytes k0..k0+15 of the 8 bit planes at out (plane_len apart).
inline void bit_block(const uint8_t* row, size_t k0, uint8_t* out, size_t plane_len) noexcept {
  uint8x16_t w[8];
  load_transposed<8>(row + 8 * k0, w);
  bit_transpose8(w);
#pragma GCC unroll 8
  for (size_t b = 0; b < 8; ++b) vst1q_u8(out + b * plane_len + k0, w[b]);
}

inline void unbit_block(const uint8_t* planes, size_t k0, uint8_t* row, size_t plane_len) noexcept {
  uint8x16_t w[8];
#pragma GCC unroll 8
  for (size_t b = 0; b < 8; ++b) w[b] = vld1q_u8(planes + b * plane_len + k0);
  bit_transpose8(w);
  store_interleaved<8>(w, row + 8 * k0);
}

// nrows rows of len bytes each (len a multiple of 8, at least 128): row j's 8 bit planes of len/8 bytes go to
// out + j * len.
void bit_transpose_rows(size_t nrows, size_t len, const uint8_t* in, uint8_t* out) noexcept {
  const size_t plane_len = len / 8;
  for (size_t j = 0; j < nrows; ++j) {
    const uint8_t* row = in + j * len;
    uint8_t* o = out + j * len;
    for (size_t k0 = 0; k0 + kBlock <= plane_len; k0 += kBlock) bit_block(row, k0, o, plane_len);
    if (plane_len % kBlock != 0) bit_block(row, plane_len - kBlock, o, plane_len);
  }
}

void bit_untranspose_rows(size_t nrows, size_t len, const uint8_t* in, uint8_t* out) noexcept {
  const size_t plane_len = len / 8;
  for (size_t j = 0; j < nrows; ++j) {
    const uint8_t* planes = in + j * len;
    uint8_t* row = out + j * len;
    for (size_t k0 = 0; k0 + kBlock <= plane_len; k0 += kBlock) unbit_block(planes, k0, row, plane_len);
    if (plane_len % kBlock != 0) unbit_block(planes, plane_len - kBlock, row, plane_len);
  }
}

constexpr size_t kMinBitElems = 8 * kBlock;  // one bit block per row

void bitshuffle_neon(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  const size_t n = size / typesize;
  const size_t n8 = n - n % 8;
  if (n8 < kMinBitElems) {
    kShuffleScalar.bitshuffle(typesize, size, src, dst, scratch);
    return;
  }
  const size_t bytes = n8 * typesize;
  const uint8_t* rows = src;
  if (typesize > 1) {
    shuffle_neon(typesize, bytes, src, scratch);  // row j = byte j of every element
    rows = scratch;
  }
  bit_transpose_rows(typesize, n8, rows, dst);
  std::memcpy(dst + bytes, src + bytes, size - bytes);
}

void bitunshuffle_neon(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  const size_t n = size / typesize;
  const size_t n8 = n - n % 8;
  if (n8 < kMinBitElems) {
    kShuffleScalar.bitunshuffle(typesize, size, src, dst, scratch);
    return;
  }
  const size_t bytes = n8 * typesize;
  uint8_t* rows = typesize > 1 ? scratch : dst;
  bit_untranspose_rows(typesize, n8, src, rows);
  if (typesize > 1) unshuffle_neon(typesize, bytes, scratch, dst);
  std::memcpy(dst + bytes, src + bytes, size - bytes);
}

}  // namespace

const shuffle_kernels kShuffleNeon = {simd_level::neon, shuffle_neon, unshuffle_neon, bitshuffle_neon,
                                      bitunshuffle_neon};

}  // namespace tessera::detail
