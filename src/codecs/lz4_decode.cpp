// LZ4 (and LZ4HC, the same format) decoding through liblz4: stateless, so nothing is allocated.
#include <limits>

#include "codecs/codec_link.hpp"

#ifdef TESSERA_HAVE_LZ4
#include <lz4.h>
#endif

TESSERA_CODEC_LINK_ANCHORS(lz4_decoder)

namespace tessera::detail {

#ifndef TESSERA_HAVE_LZ4  // a build without liblz4
extern const codec_decoder_impl lz4_decoder_impl = kCodecDecoderUnavailable;
#else

namespace {

constexpr size_t kIntMax = static_cast<size_t>(std::numeric_limits<int>::max());

status lz4_decompress(bytes_view in, bytes_mut out, bytes_view dict) noexcept {
  if (in.size() > kIntMax || out.size() > kIntMax || dict.size() > kIntMax)
    return make_error(errc::malformed, TESSERA_MSG("lz4: stream larger than 2 GiB"));
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
// Walks an LZ4 block's sequences without copying anything (the block format: a token, literal length, literals,
// then a 2-byte offset and match length, except in the last sequence) and checks that the stream ends exactly
// at its input's end, decodes to exactly `size` bytes and never refers before its start. A partial decode reads
// only the front of a stream; this keeps a broken tail from passing unseen, at the cost of a parse, not a decode.
bool lz4_stream_well_formed(bytes_view in, size_t size) noexcept {
  const uint8_t* p = in.data();
  const uint8_t* const end = p + in.size();
  size_t pos = 0;  // bytes the sequences so far decode to, never above size
  // A length field's extension bytes added to n (each checked against size, so n cannot wrap).
  auto extend = [&](size_t& n) noexcept -> bool {
    unsigned b;
    do {
      if (p == end) return false;
      b = *p++;
      n += b;
      if (n > size) return false;
    } while (b == 255);
    return true;
  };
  // The sequence-to-sequence chain (token, literal length, next token) is the cost: the checks stay off it.
  while (p < end) {
    const unsigned token = *p++;
    size_t lit = token >> 4;
    if (__builtin_expect(lit == 15, 0) && !extend(lit)) return false;
    if (lit > size - pos || lit > static_cast<size_t>(end - p)) return false;
    pos += lit;
    p += lit;
    if (p == end) return pos == size;  // the last sequence: literals only
    if (end - p < 2) return false;
    const size_t offset = static_cast<size_t>(p[0]) | static_cast<size_t>(p[1]) << 8;
    p += 2;
    if (offset - 1 >= pos) return false;  // 0 (wraps) or before the stream's start
    size_t match = (token & 15) + 4;
    if (__builtin_expect(match == 19, 0) && !extend(match)) return false;
    if (match > size - pos) return false;
    pos += match;
  }
  return false;  // an empty stream, or one that ends with a match
}

status lz4_decompress_prefix(bytes_view in, bytes_mut out, size_t want) noexcept {
  if (want >= out.size()) return lz4_decompress(in, out, bytes_view{});
  if (in.size() > kIntMax || out.size() > kIntMax) return make_error(errc::malformed, TESSERA_MSG("lz4: stream larger than 2 GiB"));
  const int n = LZ4_decompress_safe_partial(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()),
                                            static_cast<int>(in.size()), static_cast<int>(want),
                                            static_cast<int>(out.size()));
  if (n < 0) return make_error(errc::corrupt, TESSERA_MSG("lz4: invalid compressed stream"));
  if (static_cast<size_t>(n) < want) return make_error(errc::corrupt, TESSERA_MSG("lz4: stream shorter than the block"));
  if (!lz4_stream_well_formed(in, out.size()))
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
