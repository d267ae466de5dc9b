// SPDX-License-Identifier: BSD-3-Clause
// Altivec/VSX kernels (ppc64le power8; big-endian ppc64 built with -maltivec, best with -mvsx): the algorithms of
// simd_shuffle.hpp over Altivec registers.
// - shuffle: typesizes 2, 4, 8 and 16 by blocks of 16 elements, log2(typesize) unzip rounds; unshuffle zips.
// - bitshuffle: the byte shuffle into rows, then each row's bit planes by bit_rows (per-byte shifts and selects).
// Endianness: vectors are loaded and stored with array semantics (element i is byte i in memory, vec_xl /
// vec_xst, or memcpy without VSX), and every permute is written with vec_perm on element indices, which GCC
// and clang keep element-ordered on little-endian too; the bit work is per byte. So the same bytes come out
// on ppc64 and ppc64le. Other typesizes, and buffers too small for one vector block, use the scalar loops.
#if !defined(__ALTIVEC__)
#error "shuffle_altivec.cpp needs Altivec: build with -maltivec (or -mcpu=power8, set by the toolchain)"
#endif

#include "filters/simd_shuffle.hpp"

// Last: in GNU modes altivec.h defines vector, pixel and bool as macros, which must not reach other headers.
#include <altivec.h>
#undef vector
#undef pixel
#undef bool

namespace tessera::detail {
namespace {

struct altivec_ops {
  using vec = __vector unsigned char;
  static constexpr simd::transpose_by kTranspose = simd::transpose_by::unzips;
  static vec load(const uint8_t* p) noexcept {
#if defined(__VSX__)
    return vec_xl(0, p);
#else
    vec v;
    memcpy(&v, p, sizeof v);
    return v;
#endif
  }
  static void store(uint8_t* p, vec v) noexcept {
#if defined(__VSX__)
    vec_xst(v, 0, p);
#else
    memcpy(p, &v, sizeof v);
#endif
  }
  // vec_perm controls: element indices into the 32 bytes of (a, b).
  static vec zip_lo(vec a, vec b) noexcept {
    return vec_perm(a, b, vec{0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23});
  }
  static vec zip_hi(vec a, vec b) noexcept {
    return vec_perm(a, b, vec{8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31});
  }
  static vec unzip_even(vec a, vec b) noexcept {
    return vec_perm(a, b, vec{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30});
  }
  static vec unzip_odd(vec a, vec b) noexcept {
    return vec_perm(a, b, vec{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31});
  }
  static vec splat(uint8_t x) noexcept { return vec_splats(static_cast<unsigned char>(x)); }
  // vec_sel(x, y, mask) takes y where mask bits are set.
  template <int S>
  static void bits_swap(vec& a, vec& b, vec low) noexcept {
    const vec shift = vec_splats(static_cast<unsigned char>(S));
    const vec a0 = a;
    a = vec_sel(vec_sl(b, shift), a0, low);
    b = vec_sel(b, vec_sr(a0, shift), low);
  }
};

constexpr auto shuffle_altivec = byte_shuffle_run<false, simd::vector_elements<altivec_ops, false, false>>;
constexpr auto unshuffle_altivec = byte_shuffle_run<true, simd::vector_elements<altivec_ops, true, false>>;

}  // namespace

const shuffle_kernels kShuffleAltivec = {
    simd_level::altivec, shuffle_altivec, unshuffle_altivec,
    bit_shuffle_run<simd::bits_by_rows<altivec_ops, false, shuffle_altivec>>,
    bit_shuffle_run<simd::bits_by_rows<altivec_ops, true, unshuffle_altivec>>};

}  // namespace tessera::detail
