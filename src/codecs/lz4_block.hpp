// SPDX-License-Identifier: BSD-3-Clause
// The LZ4 block format (lz4's doc/lz4_Block_format.md) read in-house: a walk over a block's sequences that
// copies nothing (a partial decode checks the rest of a stream with it), and on x86-64 hosts with AVX2 a decoder
// that is faster than liblz4's on the streams Blosc makes of numbers: byte planes and bit planes of shuffled
// blocks, whose matches are mostly short and close (offsets 1 and 2 are common), where liblz4 branches. On other
// data (machine code, tessera_bench_lz4) the two are about as fast (0.99 - 1.00), so the chunk decoder uses this
// one only for shuffled blocks.
//
// A block is a run of sequences: a token (literal length in its high nibble, match length - 4 in its low one,
// 15 meaning more length bytes follow, each added, while they are 255), the literals, then a little-endian
// 2-byte offset (1..65535 back from the current end of the output) and the match. The last sequence has
// literals only and ends the input. Accepted here: every block whose sequences stay inside the input, whose
// matches refer inside the output written so far (offset 0 is invalid and refused, as the format says) and that
// decodes to exactly the expected size. The format's end-of-block conditions (the last 5 bytes are literals,
// the last match starts 12 bytes before the end) are not enforced: a conformant decoder may refuse blocks that
// break them but need not, and liblz4 accepts some that do. Both decoders give the same bytes for every block
// they both accept.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/error.hpp"
#include "tessera/span.hpp"

namespace tessera::detail {

// Where a decode stopped: input bytes read and output bytes written, at a sequence boundary.
struct lz4_block_position {
  size_t in = 0;
  size_t out = 0;
};

// Walks the sequences of in from `at` without copying: true when they end exactly at in's end, decode to
// exactly `size` bytes in all and never refer before the output's start.
[[nodiscard]] bool lz4_block_walk(bytes_view in, lz4_block_position at, size_t size) noexcept;

// Whether lz4_block_decode runs here: an x86-64 build with the AVX2 decoder, on a CPU with AVX2, unless the
// SIMD level was forced lower (simd_level_force: tests compare the two decoders that way).
[[nodiscard]] bool lz4_block_decode_available() noexcept;

// Decodes in into out (exactly out.size() bytes), or when want < out.size() at least out's first `want`
// bytes, the rest of the stream then only walked (lz4_block_walk), so that a broken tail fails as in a whole
// decode. Bytes of out past those decoded are unspecified. Never reads outside in nor writes outside out.
// corrupt for a stream that is not a valid block of out.size() bytes; unsupported unless
// lz4_block_decode_available().
[[nodiscard]] status lz4_block_decode(bytes_view in, bytes_mut out, size_t want) noexcept;

// The AVX2 decoder (lz4_block_avx2.cpp): sequences of in from the start until at least `want` bytes are out
// or the input ends; *at says where it stopped. false for a sequence that would read past in, write past out
// or refer before out's start.
[[nodiscard]] bool lz4_block_decode_avx2(bytes_view in, bytes_mut out, size_t want, lz4_block_position* at) noexcept;

}  // namespace tessera::detail
