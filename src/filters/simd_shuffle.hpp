// SPDX-License-Identifier: BSD-3-Clause
// The SIMD shuffle algorithms, written once over a per-ISA ops struct O that each kernel file defines and
// compiles with its own flags (the approach of highway). O provides, on O::vec (W = sizeof(O::vec) bytes):
//   load(p), store(p, v)          unaligned W bytes
//   zip_lo(a, b), zip_hi(a, b)    bytes of the low / high halves of a and b interleaved (per 128-bit lane)
//   splat(byte)                   every byte = byte
//   bits_swap<S>(a, b, low)       a's S-bit groups outside `low` swap with b's groups inside it (shifted by S)
//   kTranspose                    how 16-element blocks are transposed (transpose_by, 16-byte vectors only)
//   unzip_even(a, b), unzip_odd(a, b)                          with transpose_by::unzips
//   load_transposed<TS>(p, v), store_interleaved<TS>(v, p)     with transpose_by::native
// generic_ops below gives load, store, splat and bits_swap from the compiler's vector extensions.
//
// Byte transposes: a zip round over R registers pairs register i with i + R/2 and rotates the address of every
// byte (register index, then byte index in the register) left by one bit, an unzip round rotates it right; the
// address of byte j of element e of a block of 16 elements of typesize 2^m is (e, j) and must become (j, e):
// 4 zip rounds or m unzip rounds to shuffle, m zip rounds to unshuffle.
#pragma once

#include "filters/shuffle_common.hpp"

namespace tessera::detail::simd {
namespace {  // NOLINT(cert-dcl59-cpp): internal linkage on purpose, see shuffle_common.hpp

constexpr size_t log2_of(size_t v) noexcept { return v <= 1 ? 0 : 1 + log2_of(v / 2); }

// Rounds of zips, or of unzips (O::unzip_even / unzip_odd: the even / odd bytes of the 32 bytes of (a, b)), the
// inverse of a zip round.
template <class O, size_t R, size_t Rounds, bool Unzip = false>
inline void zip_rounds(typename O::vec* v) noexcept {
#pragma GCC unroll 4
  for (size_t s = 0; s < Rounds; ++s) {
    typename O::vec t[R];
#pragma GCC unroll 16
    for (size_t i = 0; i < R / 2; ++i) {
      if constexpr (Unzip) {
        t[i] = O::unzip_even(v[2 * i], v[2 * i + 1]);
        t[i + R / 2] = O::unzip_odd(v[2 * i], v[2 * i + 1]);
      } else {
        t[2 * i] = O::zip_lo(v[i], v[i + R / 2]);
        t[2 * i + 1] = O::zip_hi(v[i], v[i + R / 2]);
      }
    }
#pragma GCC unroll 16
    for (size_t i = 0; i < R; ++i) v[i] = t[i];
  }
}

// How an ISA's 16-element blocks are transposed: loads then 4 zip rounds (shuffle) and log2(TS) zip rounds then
// stores (unshuffle); loads then log2(TS) unzip rounds (shuffle); or its own O::load_transposed<TS>(p, v) and
// O::store_interleaved<TS>(v, p).
enum class transpose_by { zips, unzips, native };

// v[j] byte i = p[i * TS + j]: the 16 elements of TS bytes at p, transposed.
template <class O, size_t TS>
inline void load_transposed(const uint8_t* p, typename O::vec* v) noexcept {
  if constexpr (O::kTranspose == transpose_by::native) {
    O::template load_transposed<TS>(p, v);
  } else {
#pragma GCC unroll 16
    for (size_t k = 0; k < TS; ++k) v[k] = O::load(p + 16 * k);
    if constexpr (O::kTranspose == transpose_by::unzips) {
      zip_rounds<O, TS, log2_of(TS), true>(v);
    } else {
      zip_rounds<O, TS, 4>(v);
    }
  }
}

// The inverse of load_transposed.
template <class O, size_t TS>
inline void store_interleaved(typename O::vec* v, uint8_t* p) noexcept {
  if constexpr (O::kTranspose == transpose_by::native) {
    O::template store_interleaved<TS>(v, p);
  } else {
    zip_rounds<O, TS, log2_of(TS)>(v);
#pragma GCC unroll 16
    for (size_t k = 0; k < TS; ++k) O::store(p + 16 * k, v[k]);
  }
}

// Vectors of W bytes as 64-bit lanes (i64: the type generic_ops works on) and as bytes.
template <size_t W>
struct lanes;
template <>
struct lanes<16> {
  typedef long long i64 __attribute__((vector_size(16)));  // as the compilers' x86 intrinsic types
  typedef unsigned long long u64 __attribute__((vector_size(16)));
  typedef uint8_t u8 __attribute__((vector_size(16)));
};
template <>
struct lanes<32> {
  typedef long long i64 __attribute__((vector_size(32)));  // as the compilers' x86 intrinsic types
  typedef unsigned long long u64 __attribute__((vector_size(32)));
  typedef uint8_t u8 __attribute__((vector_size(32)));
};

// Load, store, splat and the bit swap from the GCC / clang vector extensions alone, for ISAs whose compilers turn
// them into the plain instructions (x86: movdqu, psrlq, pand, pxor); an ISA's ops add zip_lo and zip_hi.
template <size_t W>
struct generic_ops {
  using vec = typename lanes<W>::i64;
  using u64 = typename lanes<W>::u64;  // logical shifts
  static constexpr transpose_by kTranspose = transpose_by::zips;
  static vec load(const uint8_t* p) noexcept {
    vec v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(uint8_t* p, vec v) noexcept { memcpy(p, &v, sizeof v); }
  static vec splat(uint8_t x) noexcept { return reinterpret_cast<vec>(typename lanes<W>::u8{} + x); }
  // Delta swap: the bits that cross into the neighbouring byte are the ones `low` drops.
  template <int S>
  static void bits_swap(vec& a, vec& b, vec low) noexcept {
    const vec t = (reinterpret_cast<vec>(reinterpret_cast<u64>(a) >> S) ^ b) & low;
    b ^= t;
    a ^= reinterpret_cast<vec>(reinterpret_cast<u64>(t) << S);
  }
};

// --- byte shuffle, 16-byte vectors ------------------------------------------------------------------------------

// Typesizes 2, 4, 8, 16: blocks of 16 elements, the last block overlapping its predecessor when n % 16 != 0 (the
// bytes written twice are the same). Returns n, or 0 when n < 16.
template <class O, size_t TS, bool Un>
inline void block(size_t n, size_t i, const uint8_t* src, uint8_t* dst) noexcept {
  typename O::vec v[TS];
  if constexpr (Un) {
#pragma GCC unroll 16
    for (size_t j = 0; j < TS; ++j) v[j] = O::load(src + j * n + i);
    store_interleaved<O, TS>(v, dst + i * TS);
  } else {
    load_transposed<O, TS>(src + i * TS, v);
#pragma GCC unroll 16
    for (size_t j = 0; j < TS; ++j) O::store(dst + j * n + i, v[j]);
  }
}

template <class O, size_t TS, bool Un>
size_t blocks(size_t n, const uint8_t* src, uint8_t* dst) noexcept {
  if (n < 16) return 0;
  for (size_t i = 0; i + 16 <= n; i += 16) block<O, TS, Un>(n, i, src, dst);
  if (n % 16 != 0) block<O, TS, Un>(n, n - 16, src, dst);
  return n;
}

// Any typesize: 16 x 16 tiles (16 elements by 16 bytes of them) of `count` elements. Typesizes above 16 take
// their last tile at ts - 16, overlapping the previous one; below 16 a tile holds whole elements plus bytes past
// them, so the tiles stop while the last element's 16 bytes still lie inside the buffer.
inline size_t tile_offset(size_t ts, size_t off) noexcept { return off + 16 <= ts ? off : (ts < 16 ? 0 : ts - 16); }
inline bool tile_fits(size_t ts, size_t size, size_t i, size_t count) noexcept {
  return (i + count - 1) * ts + (ts < 16 ? 16 : ts) <= size;
}

template <class O, bool Un>
size_t tiles(size_t ts, size_t n, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  size_t i = 0;
  for (; tile_fits(ts, size, i, 16); i += 16) {
    for (size_t off = 0; off < ts; off += 16) {
      const size_t o = tile_offset(ts, off);
      typename O::vec r[16];
      if constexpr (Un) {
#pragma GCC unroll 16
        for (size_t k = 0; k < 16; ++k) r[k] = O::load(src + (o + k < ts ? o + k : 0) * n + i);
        zip_rounds<O, 16, 4>(r);
        // In element order: with ts < 16 each store spills into the next element, which the next store fixes
        // (the last spill is fixed by the next tile or the scalar tail).
#pragma GCC unroll 16
        for (size_t k = 0; k < 16; ++k) O::store(dst + (i + k) * ts + o, r[k]);
      } else {
#pragma GCC unroll 16
        for (size_t k = 0; k < 16; ++k) r[k] = O::load(src + (i + k) * ts + o);
        zip_rounds<O, 16, 4>(r);
        for (size_t k = 0; k < (ts < 16 ? ts : 16); ++k) O::store(dst + (o + k) * n + i, r[k]);
      }
    }
  }
  return i;
}

// The elements_fn of a 16-byte ISA: blocks for typesizes 2, 4, 8, 16; tiles for the others when Tiles, else
// nothing (the scalar loop does them).
template <class O, bool Un, bool Tiles>
size_t vector_elements(size_t ts, size_t n, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  switch (ts) {
    case 2: return blocks<O, 2, Un>(n, src, dst);
    case 4: return blocks<O, 4, Un>(n, src, dst);
    case 8: return blocks<O, 8, Un>(n, src, dst);
    case 16: return blocks<O, 16, Un>(n, src, dst);
    default:
      if constexpr (Tiles) return tiles<O, Un>(ts, n, size, src, dst);
      return 0;
  }
}

// --- bit shuffle ------------------------------------------------------------------------------------------------

// Transposes the 8x8 bit matrices formed by byte k of x[0..7] (bit c of x[r] becomes bit r of x[c]) with three
// rounds of swaps between registers (blocks of 4, 2, 1 bits). Its own inverse.
template <class O, int S>
inline void bits_stage(typename O::vec* x, uint8_t low_bits) noexcept {
  const typename O::vec low = O::splat(low_bits);
#pragma GCC unroll 8
  for (int m = 0; m < 8; ++m) {
    if ((m & S) == 0) O::template bits_swap<S>(x[m], x[m + S], low);
  }
}

template <class O>
inline void bit_matrices_transpose(typename O::vec* x) noexcept {
  bits_stage<O, 4>(x, 0x0F);
  bits_stage<O, 2>(x, 0x33);
  bits_stage<O, 1>(x, 0x55);
}

// Bit shuffle by rows (16-byte vectors): row j (len bytes: byte j of every element) gives its 8 bit planes
// (len / 8 bytes each) at out + j * len. 128 row bytes are gathered into 8 vectors w[m] byte k = row[8k + m]
// (the typesize-8 transpose) whose bit transpose leaves plane b in w[b]; the last block overlaps. Un: the reverse.
template <class O, bool Un>
inline void bit_block(const uint8_t* in, size_t k, uint8_t* out, size_t plane_len) noexcept {
  typename O::vec w[8];
  if constexpr (Un) {
#pragma GCC unroll 8
    for (size_t b = 0; b < 8; ++b) w[b] = O::load(in + b * plane_len + k);
    bit_matrices_transpose<O>(w);
    store_interleaved<O, 8>(w, out + 8 * k);
  } else {
    load_transposed<O, 8>(in + 8 * k, w);
    bit_matrices_transpose<O>(w);
#pragma GCC unroll 8
    for (size_t b = 0; b < 8; ++b) O::store(out + b * plane_len + k, w[b]);
  }
}

template <class O, bool Un>
void bit_rows(size_t nrows, size_t len, const uint8_t* in, uint8_t* out) noexcept {
  const size_t plane_len = len / 8;
  for (size_t j = 0; j < nrows; ++j) {
    const uint8_t* i_row = in + j * len;
    uint8_t* o_row = out + j * len;
    for (size_t k = 0; k + 16 <= plane_len; k += 16) bit_block<O, Un>(i_row, k, o_row, plane_len);
    if (plane_len % 16 != 0) bit_block<O, Un>(i_row, plane_len - 16, o_row, plane_len);
  }
}

using byte_kernel = void (*)(size_t ts, size_t size, const uint8_t* src, uint8_t* dst) noexcept;

// The bits_fn of bit_rows: byte (un)shuffle of typesize ts between the elements and the rows (in scratch; none
// for ts 1). Rows under 128 bytes, too short for one block, use the scalar loops.
template <class O, bool Un, byte_kernel Bytes>
void bits_by_rows(size_t ts, size_t n8, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  if (n8 < 8 * 16) return bit_planes_scalar<Un>(ts, n8, src, dst, scratch);
  if constexpr (Un) {
    bit_rows<O, true>(ts, n8, src, ts > 1 ? scratch : dst);
    if (ts > 1) Bytes(ts, n8 * ts, scratch, dst);
  } else {
    if (ts > 1) Bytes(ts, n8 * ts, src, scratch);
    bit_rows<O, false>(ts, n8, ts > 1 ? scratch : src, dst);
  }
}

// U steps of W groups at a time: for each byte j and group g of 8 elements, the 8 bytes in[(r * r_step + j *
// in_j_step) * groups + g] (r = 0..7) form an 8x8 bit matrix whose transpose goes to out[(c * c_step + j *
// out_j_step) * groups + g] (c = 0..7). With U * W = 64 every row gets whole 64-byte lines, which matters when
// the rows are a power of two apart and share one L1 set.
template <class O, size_t U>
inline void bit_planes_step(const uint8_t* row, size_t rs, uint8_t* col, size_t cs) noexcept {
  constexpr size_t W = sizeof(typename O::vec);
  typename O::vec x[U][8];
#pragma GCC unroll 8
  for (size_t r = 0; r < 8; ++r)
#pragma GCC unroll 2
    for (size_t u = 0; u < U; ++u) x[u][r] = O::load(row + r * rs + u * W);
#pragma GCC unroll 2
  for (size_t u = 0; u < U; ++u) bit_matrices_transpose<O>(x[u]);
#pragma GCC unroll 8
  for (size_t c = 0; c < 8; ++c)
#pragma GCC unroll 2
    for (size_t u = 0; u < U; ++u) O::store(col + c * cs + u * W, x[u][c]);
}

template <class O, size_t U>
void bit_planes_transpose(size_t ts, size_t groups, size_t r_step, size_t in_j_step, size_t c_step,
                          size_t out_j_step, const uint8_t* in, uint8_t* out) noexcept {
  constexpr size_t W = sizeof(typename O::vec);
  const size_t rs = r_step * groups, cs = c_step * groups;
  for (size_t j = 0; j < ts; ++j) {
    const uint8_t* row = in + j * in_j_step * groups;
    uint8_t* col = out + j * out_j_step * groups;
    size_t g = 0;
    for (; g + U * W <= groups; g += U * W) bit_planes_step<O, U>(row + g, rs, col + g, cs);
    if constexpr (U > 1) {
      for (; g + W <= groups; g += W) bit_planes_step<O, 1>(row + g, rs, col + g, cs);
    }
    for (; g < groups; ++g) {
      uint64_t x = 0;
      for (unsigned r = 0; r < 8; ++r) x |= static_cast<uint64_t>(row[r * rs + g]) << (8 * r);
      x = bits_transpose_8x8(x);
      for (unsigned c = 0; c < 8; ++c) col[c * cs + g] = static_cast<uint8_t>(x >> (8 * c));
    }
  }
}

// The bits_fn of bit_planes_transpose: a byte shuffle of typesize 8 * ts puts byte j of element 8g + m at
// scratch[(m * ts + j) * groups + g]; the bit transposes of those 8 rows give planes 8j + b. Un: the reverse.
template <class O, size_t U, bool Un, byte_kernel Bytes>
void bits_by_planes(size_t ts, size_t n8, const uint8_t* src, uint8_t* dst, uint8_t* scratch) noexcept {
  if constexpr (Un) {
    bit_planes_transpose<O, U>(ts, n8 / 8, 1, 8, ts, 1, src, scratch);
    Bytes(8 * ts, n8 * ts, scratch, dst);
  } else {
    Bytes(8 * ts, n8 * ts, src, scratch);
    bit_planes_transpose<O, U>(ts, n8 / 8, ts, 1, 1, 8, scratch, dst);
  }
}

}  // namespace
}  // namespace tessera::detail::simd
