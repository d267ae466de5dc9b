// SPDX-License-Identifier: BSD-3-Clause
// ZFP, c-blosc2's registered codecs 33 (fixed accuracy), 34 (fixed precision) and 35 (fixed rate), through
// Debian's libzfp (1.0.0). Written from the reference's behaviour (c-blosc2 3.3.2, plugins/codecs/zfp), not
// its code. A block is one ZFP stream without a header: the block's items, float32 (typesize 4) or float64
// (typesize 8), as a 1- to 4-dimensional zfp field of the b2nd block shape (the field's x is the block's last
// dimension), in the mode and parameter the chunk's compcode_meta gives:
//
//   33 accuracy   tolerance 10^m, m = the meta as a signed byte (-128..127)
//   34 precision  meta + 2 * ndim + 3 bit planes, at most 64
//   35 rate       meta / 100 * typesize * 8 bits per item (zfp_stream_set_rate, not word-aligned)
//
// The encoder refuses (unsupported) what the reference refuses: no geometry, ndim outside 1..4, a block edge
// below 4, items of other than 4 or 8 bytes; a stream that is not a whole block (split streams) or does not
// shrink is stored verbatim. The decoder checks the geometry against the block and reads the stream from a
// copy padded with zeros to the most any stream of that geometry may read (libzfp's reader has no bound), so
// a damaged stream is an error or wrong numbers, never a read outside the chunk; a stream that reads past
// its size is corrupt.
//
// libzfp allocates with malloc, so its wrapper is not in the freestanding core: it is the library
// tessera_zfp (src/codecs/zfp_codec.cpp), which the core links when CMake finds libzfp (TESSERA_WITH_ZFP) and
// calls through the two functions below. A build without it reports codec_unavailable for ZFP chunks.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/chunk.hpp"
#include "tessera/error.hpp"
#include "tessera/span.hpp"

namespace tessera::detail {

inline constexpr uint8_t kZfpAccuracyId = 33;
inline constexpr uint8_t kZfpPrecisionId = 34;
inline constexpr uint8_t kZfpRateId = 35;

[[nodiscard]] constexpr bool zfp_id(uint8_t id) noexcept { return id >= kZfpAccuracyId && id <= kZfpRateId; }

// Whether this build has libzfp (tessera_zfp).
[[nodiscard]] constexpr bool zfp_built() noexcept {
#if defined(TESSERA_HAVE_ZFP)
  return true;
#else
  return false;
#endif
}

#if defined(TESSERA_HAVE_ZFP)
// Decodes one stream of codec `id` (33..35) into all of out: errors unsupported (geometry, typesize or id
// ZFP cannot take), corrupt (a stream that reads past its end or that libzfp refuses).
[[nodiscard]] status zfp_decompress(uint8_t id, uint8_t meta, size_t typesize, const chunk_nd_geometry& g,
                                    bytes_view in, bytes_mut out) noexcept;
// Compresses one stream into out (at most out.size() bytes) and returns its size, or 0 when it does not
// shrink, does not fit, or is not a whole block (stored verbatim). Errors: unsupported (see above).
[[nodiscard]] result<size_t> zfp_compress(uint8_t id, uint8_t meta, size_t typesize, const chunk_nd_geometry& g,
                                          bytes_view in, bytes_mut out) noexcept;
#endif

}  // namespace tessera::detail
