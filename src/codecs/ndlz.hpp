// SPDX-License-Identifier: BSD-3-Clause
// NDLZ, c-blosc2's registered codec 32 (plugins/codecs/ndlz): a 2-D block of bytes coded cell by cell (cells of
// 4x4 or 8x8 bytes, the codec meta). Written from the reference's format and behaviour (c-blosc2 3.3.2), not its
// code. A stream is
//
//   ndim (1 byte, 2) | blockshape[0] (int32 LE) | blockshape[1] (int32 LE) | one token per cell, C order
//
// where a cell at the block's right or bottom edge holds only the items inside the block (its padding), and
// each token is followed by what it needs (offsets are uint16 LE, counted back from the token's position, to
// bytes earlier in the stream: literal rows of an earlier cell):
//
//   0        literal: the cell's bytes, row after row
//   64       the whole cell is one byte (1 byte follows)
//   192      the cell equals earlier literal bytes (offset)
//   4x4 only (rows numbered 0..3):
//   224..255 three rows from earlier bytes, the fourth literal (offset + 3, wrapping at 16 bits)
//   128..191 two rows from earlier bytes, the other two literal (offset + 3, wrapping)
//   40..63   rows 0 and j from earlier bytes, the other two from other earlier bytes (two offsets + 5, wrapping)
//   8x8 only (rows 0..7, r = token & 7):
//   168..175 rows r..r+2 from earlier bytes, the other five literal (offset)
//   136..143 rows r, r+1 from earlier bytes, the other six literal (offset)
//
// The encoder looks matches up in three hash tables of 4096 uint32 positions (cells, row triples, row pairs;
// XXH32 with seed 1, top 12 bits) and writes the reference's bytes exactly, but for one case: a 4x4 row match
// whose offset the decoder's + 3 (+ 5) wraps in 16 bits, which the reference writes and then reads back wrong,
// is not taken. The decoder accepts what the reference's decoder accepts (every token value it decodes, the
// 16-bit wrap of the 4x4 offsets included) and checks every read against the stream: a damaged stream is an
// error, never a read outside it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "codec.hpp"  // TESSERA_CODEC_LINK (relative: tests include this header without src/ on their path)
#include "tessera/chunk.hpp"
#include "tessera/error.hpp"
#include "tessera/span.hpp"

namespace tessera::detail {

inline constexpr uint8_t kNdlzId = 32;  // the codec id (udcodec) and compcode
inline constexpr size_t kNdlzTableEntries = size_t{1} << 12;
// The encoder's workspace: three tables of uint32 positions, plus alignment slack.
inline constexpr size_t kNdlzWorkspace = 3 * kNdlzTableEntries * sizeof(uint32_t) + alignof(uint32_t) - 1;

// Decodes one stream into all of `out` (the stream's decoded size; its block shape must say so). meta is the
// chunk's compcode_meta (the cell edge). Errors: unsupported (meta not 4 or 8, a stream whose ndim is not 2),
// corrupt (anything else that is not a whole NDLZ stream of out.size() bytes).
[[nodiscard]] TESSERA_CODEC_LINK status ndlz_decompress(bytes_view in, bytes_mut out, uint8_t meta) noexcept;

// Compresses one stream into out (at most out.size() bytes: the reference's maxout) and returns its size, or 0
// when it does not shrink or does not fit (the caller stores it raw). Refuses what the reference's encoder
// refuses (unsupported, naming which): meta not 4 or 8, a geometry that is not 2-D, a stream that is not
// prod(g.blockshape) bytes. workspace holds at least kNdlzWorkspace bytes (else invalid_argument).
[[nodiscard]] TESSERA_CODEC_LINK result<size_t> ndlz_compress(bytes_view in, bytes_mut out, uint8_t meta,
                                                              const chunk_nd_geometry& g,
                                                              bytes_mut workspace) noexcept;

// Whether the program links NDLZ's decoder, or its encoder (on bare metal: whether it called
// codec_link_ndlz_decoder, codec_link_ndlz_encoder; hosts: always).
[[nodiscard]] inline bool ndlz_decoder_linked() noexcept {
#if TESSERA_CODECS_ON_DEMAND
  return &ndlz_decompress != nullptr;
#else
  return true;
#endif
}
[[nodiscard]] inline bool ndlz_encoder_linked() noexcept {
#if TESSERA_CODECS_ON_DEMAND
  return &ndlz_compress != nullptr;
#else
  return true;
#endif
}

}  // namespace tessera::detail
