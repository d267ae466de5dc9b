// SPDX-License-Identifier: BSD-3-Clause
// LZ4 (and LZ4HC, the same format) decoding through liblz4: stateless, so nothing is allocated.
#include <limits.h>

#include "codecs/codec_link.hpp"
#include "codecs/lz4_block.hpp"

#ifdef TESSERA_HAVE_LZ4
#include <lz4.h>
#endif

TESSERA_CODEC_LINK_ANCHORS(lz4_decoder)

namespace tessera::detail {

#ifndef TESSERA_HAVE_LZ4  // a build without liblz4
extern const codec_decoder_impl lz4_decoder_impl = kCodecDecoderUnavailable;
#else

namespace {

constexpr size_t kIntMax = static_cast<size_t>(INT_MAX);

status lz4_decompress(bytes_view in, bytes_mut out, bytes_view dict) noexcept {
  if (in.size() > kIntMax || out.size() > kIntMax || dict.size() > kIntMax)  // GCOVR_EXCL_BR_LINE: streams are parts of a chunk, whose sizes are int32
    return make_error(errc::malformed, TESSERA_MSG("lz4: stream larger than 2 GiB"));  // GCOVR_EXCL_LINE
  const auto* src = reinterpret_cast<const char*>(in.data());
  auto* dst = reinterpret_cast<char*>(out.data());
  int n;
  if (!dict.empty()) {
    n = LZ4_decompress_safe_usingDict(src, dst, static_cast<int>(in.size()), static_cast<int>(out.size()),
                                      reinterpret_cast<const char*>(dict.data()), static_cast<int>(dict.size()));
  } else {
    n = LZ4_decompress_safe(src, dst, static_cast<int>(in.size()), static_cast<int>(out.size()));
  }
  if (n < 0) return make_error(errc::corrupt, TESSERA_MSG("lz4: invalid compressed stream"));
  if (static_cast<size_t>(n) != out.size()) return make_error(errc::corrupt, TESSERA_MSG("lz4: stream decodes to a wrong size"));
  return ok_status();
}

#ifndef __OPTIMIZE_SIZE__
status lz4_decompress_prefix(bytes_view in, bytes_mut out, size_t want) noexcept {
  if (want >= out.size()) return lz4_decompress(in, out, bytes_view{});
  // GCOVR_EXCL_BR_START: streams are parts of a chunk, whose sizes are int32.
  if (in.size() > kIntMax || out.size() > kIntMax) return make_error(errc::malformed, TESSERA_MSG("lz4: stream larger than 2 GiB"));
  // GCOVR_EXCL_BR_STOP
  const int n = LZ4_decompress_safe_partial(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()),
                                            static_cast<int>(in.size()), static_cast<int>(want),
                                            static_cast<int>(out.size()));
  if (n < 0) return make_error(errc::corrupt, TESSERA_MSG("lz4: invalid compressed stream"));
  if (static_cast<size_t>(n) < want) return make_error(errc::corrupt, TESSERA_MSG("lz4: stream shorter than the block"));
  // The rest of the stream is walked (lz4_block.hpp), so that a broken tail does not pass unseen.
  if (!lz4_block_walk(in, lz4_block_position{}, out.size()))
    return make_error(errc::corrupt, TESSERA_MSG("lz4: the stream's tail is broken or decodes to a wrong size"));
  return ok_status();
}
#endif  // __OPTIMIZE_SIZE__

status lz4_decode(codec_context&, bytes_view in, bytes_mut out, bytes_view dict, size_t want) noexcept {
#ifndef __OPTIMIZE_SIZE__  // a speed path: a size build decodes whole blocks (small ones, on a firmware)
  if (want < out.size() && dict.empty()) return lz4_decompress_prefix(in, out, want);
#else
  (void)want;
#endif
  return lz4_decompress(in, out, dict);
}

}  // namespace

extern const codec_decoder_impl lz4_decoder_impl = {true, nullptr, lz4_decode, nullptr, nullptr};

#endif  // TESSERA_HAVE_LZ4

}  // namespace tessera::detail
