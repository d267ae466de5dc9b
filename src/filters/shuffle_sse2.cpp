// SPDX-License-Identifier: BSD-3-Clause
// SSE2 shuffle kernels (x86; compiled with -msse2, chosen at run time): the algorithms of simd_shuffle.hpp over
// SSE2 registers. Byte shuffle: blocks of 16 elements (typesizes 2, 4, 8, 16) transposed by 4 rounds of zips
// (SSE2 has no byte unzip), 16 x 16 tiles for the other typesizes. Bit shuffle: a byte shuffle of typesize
// 8 * typesize, then delta-swap bit transposes across rows (bit_planes_transpose). Bit unshuffle: the reverse.
#include <emmintrin.h>

#include "filters/simd_shuffle.hpp"

namespace tessera::detail {
namespace {

struct sse2_ops : simd::generic_ops<16> {
  static vec zip_lo(vec a, vec b) noexcept { return _mm_unpacklo_epi8(a, b); }
  static vec zip_hi(vec a, vec b) noexcept { return _mm_unpackhi_epi8(a, b); }
};

constexpr auto shuffle_sse2 = byte_shuffle_run<false, simd::vector_elements<sse2_ops, false, true>>;
constexpr auto unshuffle_sse2 = byte_shuffle_run<true, simd::vector_elements<sse2_ops, true, true>>;

}  // namespace

const shuffle_kernels kShuffleSse2 = {
    simd_level::sse2, shuffle_sse2, unshuffle_sse2,
    bit_shuffle_run<simd::bits_by_planes<sse2_ops, 1, false, shuffle_sse2>>,
    bit_shuffle_run<simd::bits_by_planes<sse2_ops, 1, true, unshuffle_sse2>>};

}  // namespace tessera::detail
