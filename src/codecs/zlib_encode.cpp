// SPDX-License-Identifier: BSD-3-Clause
// Zlib encoding (deflate) through zlib, one state per codec context made by prepare on the caller's thread at
// the level asked for and reset between streams.
#include "codecs/codec_link.hpp"
#include "codecs/zlib_stream.hpp"

TESSERA_CODEC_LINK_ANCHORS(zlib_encoder)

namespace tessera::detail {

#ifndef TESSERA_HAVE_ZLIB  // a build without zlib
extern const codec_encoder_impl zlib_encoder_impl = kCodecEncoderUnavailable;
#else

namespace {

status prepare(codec_context& c, int level, size_t) noexcept {
  auto* s = static_cast<z_stream*>(c.zlib_deflate);
  if (s != nullptr && c.zlib_deflate_level == level) return ok_status();
  if (s != nullptr) {
    deflateEnd(s);
    zlib_stream_delete(c, s);
    c.zlib_deflate = nullptr;
    c.zlib_deflate_level = -1;
  }
  s = zlib_stream_new(c);
  if (s == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("zlib: allocator refused the stream"));
  c.zlib_may_allocate = true;
  const int rc = deflateInit(s, level);
  c.zlib_may_allocate = false;
  if (rc != Z_OK) {
    zlib_stream_delete(c, s);
    return make_error(errc::out_of_memory, TESSERA_MSG("zlib: deflateInit failed"));
  }
  c.zlib_deflate = s;
  c.zlib_deflate_level = level;
  return ok_status();
}

result<size_t> compress(codec_context& c, bytes_view in, bytes_mut out, int clevel, bytes_view) noexcept {
  if (in.size() > kZlibUIntMax) return make_error(errc::invalid_argument, TESSERA_MSG("zlib: input too large"));  // GCOVR_EXCL_BR_LINE: blocks are at most kChunkMaxBlocksize
  auto* s = static_cast<z_stream*>(c.zlib_deflate);
  // GCOVR_EXCL_BR_START: the chunk encoder prepares the stream for its level first; deflateReset fails only
  // on a stream that is not one.
  if (s == nullptr || c.zlib_deflate_level != clevel)
    return make_error(errc::invalid_argument, TESSERA_MSG("zlib: encoder state not prepared for this level"));  // GCOVR_EXCL_LINE
  if (deflateReset(s) != Z_OK) return make_error(errc::invalid_argument, TESSERA_MSG("zlib: deflateReset failed"));
  // GCOVR_EXCL_BR_STOP
  s->next_in = const_cast<Bytef*>(in.data());
  s->avail_in = static_cast<uInt>(in.size());
  s->next_out = out.data();
  s->avail_out = static_cast<uInt>(out.size() > kZlibUIntMax ? kZlibUIntMax : out.size());
  const int rc = deflate(s, Z_FINISH);
  if (rc == Z_MEM_ERROR) return make_error(errc::out_of_memory, TESSERA_MSG("zlib: deflate asked for memory"));
  if (rc != Z_STREAM_END) return size_t{0};  // does not fit: stored verbatim
  return static_cast<size_t>(s->total_out);
}


void release(codec_context& c) noexcept {
  if (auto* s = static_cast<z_stream*>(c.zlib_deflate)) {
    deflateEnd(s);
    zlib_stream_delete(c, s);
  }
  c.zlib_deflate = nullptr;
  c.zlib_deflate_level = -1;
}

// The deflate state with the default window (15 bits) and memLevel 8: 64 KiB window twice, 128 KiB of hash
// and 64 KiB of pending buffer at most, plus the state itself and the size prefixes.
size_t state_estimate(int, size_t) noexcept { return sizeof(z_stream) + 6 * 1024 + 320 * 1024 + 512; }

}  // namespace

extern const codec_encoder_impl zlib_encoder_impl = {true, prepare, compress, release, state_estimate};

#endif  // TESSERA_HAVE_ZLIB

}  // namespace tessera::detail
