// Altivec/VSX kernels (ppc64le power8; big-endian ppc64 built with -maltivec, best with -mvsx).
// - shuffle: typesizes 2, 4, 8 and 16 transpose 16 elements at a time in registers with log2(typesize) rounds
//   of unzips (each round rotates the bits of the byte index by one, so the rounds together turn index
//   i * typesize + j into j * 16 + i). Unshuffle runs it backwards with zips. A tail of n % 16 elements is
//   done by transposing the last 16 elements again (overlapping; the bytes written are the same).
// - bitshuffle: the byte shuffle of the first n8 elements (into scratch), then each byte row is bit-transposed:
//   128 row bytes are gathered into 8 vectors w[m][k] = row[8k + m] (the typesize-8 transpose), and an 8x8 bit
//   transpose across those vectors, made of per-byte shifts and selects, leaves bit plane b in w[b].
// Endianness: vectors are loaded and stored with array semantics (element i is byte i in memory, vec_xl /
// vec_xst, or memcpy without VSX), and every permute is written with vec_perm on element indices, which GCC
// and clang keep element-ordered on little-endian too; the bit work is per byte. So the same bytes come out
// on ppc64 and ppc64le. Other typesizes, and buffers too small for one vector block, use the scalar table.
#if !defined(__ALTIVEC__)
#error "shuffle_altivec.cpp needs Altivec: build with -maltivec (or -mcpu=power8, set by the toolchain)"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "shuffle_kernels.hpp"

// Last: in GNU modes altivec.h defines vector, pixel and bool as macros, which must not reach other headers.
#include <altivec.h>
#undef vector
#undef pixel
#undef bool

namespace tessera::detail {
namespace {

using vu8 = __vector unsigned char;

constexpr size_t kBlock = 16;  // elements per vector block

inline vu8 load16(const uint8_t* p) noexcept {
#if defined(__VSX__)
  return vec_xl(0, p);
#else
  vu8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}

inline void store16(uint8_t* p, vu8 v) noexcept {
#if defined(__VSX__)
  vec_xst(v, 0, p);
#else
  std::memcpy(p, &v, sizeof v);
#endif
}

// vec_perm controls, element indices into the 32 bytes of (a, b).
inline vu8 unzip_even(vu8 a, vu8 b) noexcept {
  const vu8 c = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
  return vec_perm(a, b, c);
}
inline vu8 unzip_odd(vu8 a, vu8 b) noexcept {
  const vu8 c = {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};
  return vec_perm(a, b, c);
}
inline vu8 zip_low(vu8 a, vu8 b) noexcept {
  const vu8 c = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};
  return vec_perm(a, b, c);
}
inline vu8 zip_high(vu8 a, vu8 b) noexcept {
  const vu8 c = {8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  return vec_perm(a, b, c);
}

template <size_t TS>
constexpr size_t log2_of() noexcept {
  return TS == 2 ? 1 : TS == 4 ? 2 : TS == 8 ? 3 : 4;
}

// One unzip round over TS vectors: v[q] = even bytes of (v[2q], v[2q+1]), v[q + TS/2] = the odd bytes.
template <size_t TS>
inline void unzip_round(vu8* v) noexcept {
  vu8 t[TS];
#pragma GCC unroll 16
  for (size_t q = 0; q < TS / 2; ++q) {
    t[q] = unzip_even(v[2 * q], v[2 * q + 1]);
    t[q + TS / 2] = unzip_odd(v[2 * q], v[2 * q + 1]);
  }
#pragma GCC unroll 16
  for (size_t i = 0; i < TS; ++i) v[i] = t[i];
}

// The inverse of unzip_round.
template <size_t TS>
inline void zip_round(vu8* v) noexcept {
  vu8 t[TS];
#pragma GCC unroll 16
  for (size_t q = 0; q < TS / 2; ++q) {
    t[2 * q] = zip_low(v[q], v[q + TS / 2]);
    t[2 * q + 1] = zip_high(v[q], v[q + TS / 2]);
  }
#pragma GCC unroll 16
  for (size_t i = 0; i < TS; ++i) v[i] = t[i];
}

// Loads 16 elements of TS bytes from p and transposes them: v[j][i] = p[i * TS + j].
template <size_t TS>
inline void load_transposed(const uint8_t* p, vu8* v) noexcept {
#pragma GCC unroll 16
  for (size_t i = 0; i < TS; ++i) v[i] = load16(p + 16 * i);
  for (size_t r = 0; r < log2_of<TS>(); ++r) unzip_round<TS>(v);
}

// The inverse of load_transposed: p[i * TS + j] = v[j][i].
template <size_t TS>
inline void store_interleaved(vu8* v, uint8_t* p) noexcept {
  for (size_t r = 0; r < log2_of<TS>(); ++r) zip_round<TS>(v);
#pragma GCC unroll 16
  for (size_t i = 0; i < TS; ++i) store16(p + 16 * i, v[i]);
}

template <size_t TS>
inline void shuffle_block(size_t n, size_t i, const uint8_t* src, uint8_t* dst) noexcept {
  vu8 v[TS];
  load_transposed<TS>(src + i * TS, v);
#pragma GCC unroll 16
  for (size_t j = 0; j < TS; ++j) store16(dst + j * n + i, v[j]);
}

template <size_t TS>
inline void unshuffle_block(size_t n, size_t i, const uint8_t* src, uint8_t* dst) noexcept {
  vu8 v[TS];
#pragma GCC unroll 16
  for (size_t j = 0; j < TS; ++j) v[j] = load16(src + j * n + i);
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

void shuffle_altivec(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  switch (typesize) {
    case 1: if (size != 0) std::memcpy(dst, src, size); return;
    case 2: shuffle_fixed<2>(size, src, dst); return;
    case 4: shuffle_fixed<4>(size, src, dst); return;
    case 8: shuffle_fixed<8>(size, src, dst); return;
    case 16: shuffle_fixed<16>(size, src, dst); return;
    default: kShuffleScalar.shuffle(typesize, size, src, dst); return;
  }
}

void unshuffle_altivec(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
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
// vec_sel(x, y, mask) takes y where mask bits are set.
template <int S>
inline void bit_stage(vu8* w, unsigned char low_bits) noexcept {
  const vu8 low = vec_splats(low_bits);
  const vu8 shift = vec_splats(static_cast<unsigned char>(S));
#pragma GCC unroll 8
  for (int m = 0; m < 8; ++m) {
    if ((m & S) != 0) continue;
    const vu8 a = w[m];
    const vu8 b = w[m + S];
    w[m] = vec_sel(vec_sl(b, shift), a, low);
    w[m + S] = vec_sel(b, vec_sr(a, shift), low);
  }
}

// Bit b of byte k of w[m] becomes bit m of byte k of w[b] (its own inverse).
inline void bit_transpose8(vu8* w) noexcept {
  bit_stage<4>(w, 0x0F);
  bit_stage<2>(w, 0x33);
  bit_stage<1>(w, 0x55);
}

// 128 bytes of a row (from row byte 8 * k0) into bytes k0..k0+15 of the 8 bit planes at out (plane_len apart).
inline void bit_block(const uint8_t* row, size_t k0, uint8_t* out, size_t plane_len) noexcept {
  vu8 w[8];
  load_transposed<8>(row + 8 * k0, w);
  bit_transpose8(w);
#pragma GCC unroll 8
  for (size_t b = 0; b < 8; ++b) store16(out + b * plane_len + k0, w[b]);
}

inline void unbit_block(const uint8_t* planes, size_t k0, uint8_t* row, size_t plane_len) noexcept {
  vu8 w[8];
#pragma GCC unroll 8
  for (size_t b = 0; b < 8; ++b) w[b] = load16(planes + b * plane_len + k0);
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

void bitshuffle_altivec(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst,
                        uint8_t* scratch) noexcept {
  const size_t n = size / typesize;
  const size_t n8 = n - n % 8;
  if (n8 < kMinBitElems) {
    kShuffleScalar.bitshuffle(typesize, size, src, dst, scratch);
    return;
  }
  const size_t bytes = n8 * typesize;
  const uint8_t* rows = src;
  if (typesize > 1) {
    shuffle_altivec(typesize, bytes, src, scratch);  // row j = byte j of every element
    rows = scratch;
  }
  bit_transpose_rows(typesize, n8, rows, dst);
  std::memcpy(dst + bytes, src + bytes, size - bytes);
}

void bitunshuffle_altivec(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst,
                          uint8_t* scratch) noexcept {
  const size_t n = size / typesize;
  const size_t n8 = n - n % 8;
  if (n8 < kMinBitElems) {
    kShuffleScalar.bitunshuffle(typesize, size, src, dst, scratch);
    return;
  }
  const size_t bytes = n8 * typesize;
  uint8_t* rows = typesize > 1 ? scratch : dst;
  bit_untranspose_rows(typesize, n8, src, rows);
  if (typesize > 1) unshuffle_altivec(typesize, bytes, scratch, dst);
  std::memcpy(dst + bytes, src + bytes, size - bytes);
}

}  // namespace

const shuffle_kernels kShuffleAltivec = {simd_level::altivec, shuffle_altivec, unshuffle_altivec,
                                         bitshuffle_altivec, bitunshuffle_altivec};

}  // namespace tessera::detail
