// SPDX-License-Identifier: BSD-3-Clause
// Zlib decoding (inflate) through zlib, one state per codec context made by prepare on the caller's thread and
// reset between streams.
#include "codecs/codec_link.hpp"
#include "codecs/zlib_stream.hpp"

TESSERA_CODEC_LINK_ANCHORS(zlib_decoder)

namespace tessera::detail {

#ifndef TESSERA_HAVE_ZLIB  // a build without zlib
extern const codec_decoder_impl zlib_decoder_impl = kCodecDecoderUnavailable;
#else

namespace {

status prepare(codec_context& c) noexcept {
  if (c.zlib_inflate != nullptr) return ok_status();
  z_stream* s = zlib_stream_new(c);
  if (s == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("zlib: allocator refused the stream"));
  c.zlib_may_allocate = true;
  const int rc = inflateInit(s);
  c.zlib_may_allocate = false;
  if (rc != Z_OK) {
    zlib_stream_delete(c, s);
    return make_error(errc::out_of_memory, TESSERA_MSG("zlib: inflateInit failed"));
  }
  c.zlib_inflate = s;
  return ok_status();
}

status decompress(codec_context& c, bytes_view in, bytes_mut out, bytes_view, size_t) noexcept {
  // GCOVR_EXCL_BR_START: streams are parts of a chunk (int32 sizes); the chunk decoder prepares the stream, and
  // inflateReset fails only on a stream that is not one.
  if (in.size() > kZlibUIntMax || out.size() > kZlibUIntMax) return make_error(errc::malformed, TESSERA_MSG("zlib: stream too large"));
  auto* s = static_cast<z_stream*>(c.zlib_inflate);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("zlib: decoder state not prepared"));
  if (inflateReset(s) != Z_OK) return make_error(errc::corrupt, TESSERA_MSG("zlib: inflateReset failed"));
  // GCOVR_EXCL_BR_STOP
  s->next_in = const_cast<Bytef*>(in.data());
  s->avail_in = static_cast<uInt>(in.size());
  s->next_out = out.data();
  s->avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(s, Z_FINISH);
  // Z_MEM_ERROR: the stream did not end within out (inflate wanted its window), so it decodes to a wrong size.
  if (rc != Z_STREAM_END) return make_error(errc::corrupt, TESSERA_MSG("zlib: invalid, truncated or oversized compressed stream"));
  if (s->total_out != out.size()) return make_error(errc::corrupt, TESSERA_MSG("zlib: stream decodes to a wrong size"));
  return ok_status();
}


void release(codec_context& c) noexcept {
  if (auto* s = static_cast<z_stream*>(c.zlib_inflate)) {
    inflateEnd(s);
    zlib_stream_delete(c, s);
  }
  c.zlib_inflate = nullptr;
}

// The inflate state (about 7 KiB) and its 32 KiB window, with slack for the size prefixes.
size_t state_estimate() noexcept { return sizeof(z_stream) + 8 * 1024 + 32 * 1024 + 256; }

}  // namespace

extern const codec_decoder_impl zlib_decoder_impl = {true, prepare, decompress, release, state_estimate};

#endif  // TESSERA_HAVE_ZLIB

}  // namespace tessera::detail
