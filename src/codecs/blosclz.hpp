// SPDX-License-Identifier: BSD-3-Clause
// BloscLZ, the FastLZ-derived codec native to Blosc (compcode 0), written from the format facts of c-blosc2's
// blosclz.c (2.5.x, as shipped in c-blosc2 3.x).
//
// Stream format (one block; tokens until the input ends):
//   literal run  ctrl = 000nnnnn          : copy n + 1 (1..32) bytes from the stream
//   short match  ctrl = LLLhhhhh, lo      : L in 1..6, copy L + 2 bytes from `distance` back
//   long match   ctrl = 111hhhhh, x.., lo : copy 9 + sum(x) bytes; the x bytes continue while x == 255
//   near distance = (h << 8 | lo) + 1 (1..8191); when h == 31 and lo == 255 two more bytes follow, big-endian,
//   and distance = that + 8192 (far match). The first token is always a literal run; its top three bits are a
//   marker (the reference sets 001) that decoders ignore.
//
// The compressor follows the reference's algorithm step for step (same hash, hash-table sizes, match
// extension, entropy probe and give-up rules), with little-endian loads on every host, so its output is the
// bytes the reference writes on little-endian machines, and it gives up (returns 0) exactly when the
// reference does.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/error.hpp"
#include "tessera/span.hpp"

namespace tessera::detail {

inline constexpr int kBlosclzMinLevel = 1;
inline constexpr int kBlosclzMaxLevel = 9;
// The largest workspace any clevel needs (a 2^14-entry table of uint32 offsets, plus alignment slack).
inline constexpr size_t kBlosclzWorkspaceMax = (size_t{1} << 14) * sizeof(uint32_t) + alignof(uint32_t) - 1;

// The smallest and largest match tables: 2^8 and 2^14 entries of 4 bytes.
inline constexpr unsigned kBlosclzHashLogMin = 8;
inline constexpr unsigned kBlosclzHashLogMax = 14;

// Bytes of scratch blosclz_compress needs at `clevel` (16 KiB, 32 KiB, then 64 KiB, plus alignment slack);
// 0 when clevel is outside 1..9. The workspace may have any alignment.
[[nodiscard]] size_t blosclz_workspace_size(int clevel) noexcept;
// A workspace for a match table of 2^hash_log entries (kBlosclzHashLogMin..Max), plus alignment slack.
[[nodiscard]] constexpr size_t blosclz_workspace_size_for_log(unsigned hash_log) noexcept {
  return (size_t{1} << hash_log) * sizeof(uint32_t) + alignof(uint32_t) - 1;
}

// Compresses `in` into `out` (at most out.size() bytes: the reference's maxout) at `clevel` 1..9.
// Returns the compressed size, or 0 when the block does not compress into out, is shorter than 16 bytes,
// out is shorter than 66 bytes, or the entropy probe finds the block not worth compressing: the caller then
// stores the block verbatim. Contents of out are unspecified when 0 is returned.
// The match table is the reference's for the clevel (so are the bytes out) when the workspace holds it; a
// smaller workspace (at least blosclz_workspace_size_for_log(kBlosclzHashLogMin)) gets the largest table it
// holds: valid streams any decoder reads, not the reference's bytes, and a little less compression.
// Errors: invalid_argument for a clevel outside 1..9, a workspace smaller than the smallest table, or an input
// larger than INT32_MAX bytes (the reference's limit). in, out and workspace must not overlap.
[[nodiscard]] result<size_t> blosclz_compress(int clevel, bytes_view in, bytes_mut out,
                                              bytes_mut workspace) noexcept;

// Decodes one stream into `out` and returns the number of bytes written (the caller compares it with the
// block size it expects). Never reads past `in` nor writes past `out`, whatever the input:
// - truncated: the stream is empty or ends inside a token, or ends with a match (valid streams end with a
//   literal run);
// - corrupt: a match reaches before the start of the output, or the output would exceed out.size().
// Bytes of out past the returned size may be overwritten (wide copies run ahead).
[[nodiscard]] result<size_t> blosclz_decompress(bytes_view in, bytes_mut out) noexcept;

// Decodes at least the first `want` bytes of a stream into `out` (a slice that needs only the start of a block)
// and returns how many it wrote, >= want. The same checks as blosclz_decompress on what it decodes; want >=
// out.size() is blosclz_decompress.
[[nodiscard]] result<size_t> blosclz_decompress_prefix(bytes_view in, bytes_mut out, size_t want) noexcept;

}  // namespace tessera::detail
