// Zlib through the zlib library, with zalloc/zfree routed to the caller's allocator. One inflate (and one
// deflate) state per codec context, made by prepare on the caller's thread and reset between streams.
#include <cstring>
#include <limits>
#include <new>

#include "codecs/codec.hpp"

#ifdef TESSERA_HAVE_ZLIB
#include <zlib.h>
#endif

namespace tessera::detail {

#ifdef TESSERA_HAVE_ZLIB

namespace {

// zlib allocates its state in inflateInit/deflateInit (inside prepare, on the caller's thread) and inflate's
// window only when a stream does not end in one call, which a valid Blosc stream always does: outside prepare
// every request is refused, so a task never reaches the caller's allocator.
voidpf zlib_alloc(voidpf opaque, uInt items, uInt size) {
  const auto* c = static_cast<const codec_context*>(opaque);
  if (!c->zlib_may_allocate) return Z_NULL;
  if (size != 0 && items > std::numeric_limits<size_t>::max() / size) return Z_NULL;
  return sized_allocate(c->alloc, static_cast<size_t>(items) * size);
}

void zlib_free(voidpf opaque, voidpf address) { sized_deallocate(static_cast<const codec_context*>(opaque)->alloc, address); }

z_stream* zlib_stream_new(codec_context& c) noexcept {
  void* p = allocator_allocate(c.alloc, sizeof(z_stream), alignof(z_stream));
  if (p == nullptr) return nullptr;
  auto* s = new (p) z_stream;
  std::memset(s, 0, sizeof *s);
  s->zalloc = zlib_alloc;
  s->zfree = zlib_free;
  s->opaque = &c;
  return s;
}

void zlib_stream_delete(codec_context& c, z_stream* s) noexcept {
  allocator_deallocate(c.alloc, s, sizeof(z_stream), alignof(z_stream));
}

constexpr size_t kUIntMax = std::numeric_limits<uInt>::max();

}  // namespace

bool zlib_available() noexcept { return true; }

status zlib_decoder_prepare(codec_context& c) noexcept {
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

status zlib_decompress(codec_context& c, bytes_view in, bytes_mut out) noexcept {
  if (in.size() > kUIntMax || out.size() > kUIntMax) return make_error(errc::malformed, TESSERA_MSG("zlib: stream too large"));
  auto* s = static_cast<z_stream*>(c.zlib_inflate);
  if (s == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("zlib: decoder state not prepared"));
  if (inflateReset(s) != Z_OK) return make_error(errc::corrupt, TESSERA_MSG("zlib: inflateReset failed"));
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

status zlib_encoder_prepare(codec_context& c, int level) noexcept {
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

result<size_t> zlib_compress(codec_context& c, bytes_view in, bytes_mut out, int clevel) noexcept {
  if (in.size() > kUIntMax) return make_error(errc::invalid_argument, TESSERA_MSG("zlib: input too large"));
  auto* s = static_cast<z_stream*>(c.zlib_deflate);
  if (s == nullptr || c.zlib_deflate_level != clevel)
    return make_error(errc::invalid_argument, TESSERA_MSG("zlib: encoder state not prepared for this level"));
  if (deflateReset(s) != Z_OK) return make_error(errc::invalid_argument, TESSERA_MSG("zlib: deflateReset failed"));
  s->next_in = const_cast<Bytef*>(in.data());
  s->avail_in = static_cast<uInt>(in.size());
  s->next_out = out.data();
  s->avail_out = static_cast<uInt>(out.size() > kUIntMax ? kUIntMax : out.size());
  const int rc = deflate(s, Z_FINISH);
  if (rc == Z_MEM_ERROR) return make_error(errc::out_of_memory, TESSERA_MSG("zlib: deflate asked for memory"));
  if (rc != Z_STREAM_END) return size_t{0};  // does not fit: stored verbatim
  return static_cast<size_t>(s->total_out);
}

void zlib_context_release(codec_context& c) noexcept {
  if (auto* s = static_cast<z_stream*>(c.zlib_inflate)) {
    inflateEnd(s);
    zlib_stream_delete(c, s);
  }
  if (auto* s = static_cast<z_stream*>(c.zlib_deflate)) {
    deflateEnd(s);
    zlib_stream_delete(c, s);
  }
  c.zlib_inflate = nullptr;
  c.zlib_deflate = nullptr;
  c.zlib_deflate_level = -1;
}

// The deflate state with the default window (15 bits) and memLevel 8: 64 KiB window twice, 128 KiB of hash
// and 64 KiB of pending buffer at most, plus the state itself and the size prefixes.
size_t zlib_encoder_state_estimate(int) noexcept { return sizeof(z_stream) + 6 * 1024 + 320 * 1024 + 512; }

// The inflate state (about 7 KiB) and its 32 KiB window, with slack for the size prefixes.
size_t zlib_decoder_state_estimate() noexcept { return sizeof(z_stream) + 8 * 1024 + 32 * 1024 + 256; }

#else  // no zlib

bool zlib_available() noexcept { return false; }
status zlib_decoder_prepare(codec_context&) noexcept { return ok_status(); }
status zlib_encoder_prepare(codec_context&, int) noexcept { return ok_status(); }
status zlib_decompress(codec_context&, bytes_view, bytes_mut) noexcept {
  return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs the Zlib codec, which this build does not include"));
}
result<size_t> zlib_compress(codec_context&, bytes_view, bytes_mut, int) noexcept {
  return make_error(errc::codec_unavailable, TESSERA_MSG("Zlib is not included in this build"));
}
void zlib_context_release(codec_context&) noexcept {}
size_t zlib_decoder_state_estimate() noexcept { return 0; }
size_t zlib_encoder_state_estimate(int) noexcept { return 0; }

#endif

}  // namespace tessera::detail
