// SPDX-License-Identifier: BSD-3-Clause
// NEON kernels (aarch64, and armv7 built with -mfpu=neon): the algorithms of simd_shuffle.hpp over NEON registers.
// - shuffle: typesizes 2, 4, 8 and 16 by blocks of 16 elements; vld2/vld4 deinterleave the bytes (the first two
//   unzip rounds), further unzip rounds finish the transpose. Unshuffle runs it backwards with zips and vst2/vst4.
// - bitshuffle: the byte shuffle into rows, then each row's bit planes by bit_rows (per-byte shifts and selects).
// Other typesizes, and buffers too small for one vector block, use the scalar loops.
#if !defined(__ARM_NEON) && !defined(__ARM_NEON__)
#error "shuffle_neon.cpp needs NEON: aarch64, or armv7 with -mfpu=neon (set by the toolchain)"
#endif

#include <arm_neon.h>

#include "filters/simd_shuffle.hpp"

namespace tessera::detail {
namespace {

struct neon_ops {
  using vec = uint8x16_t;
  static constexpr simd::transpose_by kTranspose = simd::transpose_by::native;
  static vec load(const uint8_t* p) noexcept { return vld1q_u8(p); }
  static void store(uint8_t* p, vec v) noexcept { vst1q_u8(p, v); }
  static vec zip_lo(vec a, vec b) noexcept { return vzipq_u8(a, b).val[0]; }
  static vec zip_hi(vec a, vec b) noexcept { return vzipq_u8(a, b).val[1]; }
  static vec unzip_even(vec a, vec b) noexcept { return vuzpq_u8(a, b).val[0]; }
  static vec unzip_odd(vec a, vec b) noexcept { return vuzpq_u8(a, b).val[1]; }
  static vec splat(uint8_t x) noexcept { return vdupq_n_u8(x); }
  template <int S>
  static void bits_swap(vec& a, vec& b, vec low) noexcept {
    const vec a0 = a;
    a = vbslq_u8(low, a0, vshlq_n_u8(b, S));
    b = vbslq_u8(low, vshrq_n_u8(a0, S), b);
  }
  template <size_t TS>
  static void load_transposed(const uint8_t* p, vec* v) noexcept {
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
      simd::zip_rounds<neon_ops, TS, simd::log2_of(TS) - 2, true>(v);
    }
  }
  template <size_t TS>
  static void store_interleaved(vec* v, uint8_t* p) noexcept {
    if constexpr (TS == 2) {
      uint8x16x2_t x;
      x.val[0] = v[0];
      x.val[1] = v[1];
      vst2q_u8(p, x);
    } else {
      simd::zip_rounds<neon_ops, TS, simd::log2_of(TS) - 2>(v);
#pragma GCC unroll 4
      for (size_t c = 0; c < TS / 4; ++c) {
        uint8x16x4_t x;
#pragma GCC unroll 4
        for (size_t j = 0; j < 4; ++j) x.val[j] = v[j * (TS / 4) + c];
        vst4q_u8(p + 64 * c, x);
      }
    }
  }
};

constexpr auto shuffle_neon = byte_shuffle_run<false, simd::vector_elements<neon_ops, false, false>>;
constexpr auto unshuffle_neon = byte_shuffle_run<true, simd::vector_elements<neon_ops, true, false>>;

}  // namespace

const shuffle_kernels kShuffleNeon = {simd_level::neon, shuffle_neon, unshuffle_neon,
                                      bit_shuffle_run<simd::bits_by_rows<neon_ops, false, shuffle_neon>>,
                                      bit_shuffle_run<simd::bits_by_rows<neon_ops, true, unshuffle_neon>>};

}  // namespace tessera::detail
