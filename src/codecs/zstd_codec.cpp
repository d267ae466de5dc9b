// Zstd through libzstd, with ZSTD_customMem routed to the caller's allocator. One DCtx (and one CCtx) per codec
// context, reused across streams. Dictionaries are given raw, as the chunk stores them.
#include "codecs/codec.hpp"

#ifdef TESSERA_HAVE_ZSTD
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_customMem, ZSTD_createDCtx_advanced, ZSTD_estimateDCtxSize
#include <zstd.h>
#include <zstd_errors.h>
#endif

namespace tessera::detail {

#ifdef TESSERA_HAVE_ZSTD

namespace {

void* zstd_alloc(void* opaque, size_t size) { return sized_allocate(*static_cast<const allocator*>(opaque), size); }
void zstd_free(void* opaque, void* address) { sized_deallocate(*static_cast<const allocator*>(opaque), address); }

ZSTD_customMem zstd_mem(codec_context& c) noexcept {
  ZSTD_customMem m;
  m.customAlloc = zstd_alloc;
  m.customFree = zstd_free;
  m.opaque = &c.alloc;
  return m;
}

}  // namespace

bool zstd_available() noexcept { return true; }

status zstd_decompress(codec_context& c, bytes_view in, bytes_mut out, bytes_view dict) noexcept {
  if (c.zstd_dctx == nullptr) {
    c.zstd_dctx = ZSTD_createDCtx_advanced(zstd_mem(c));
    if (c.zstd_dctx == nullptr) return make_error(errc::out_of_memory, "zstd: allocator refused the DCtx");
  }
  auto* dctx = static_cast<ZSTD_DCtx*>(c.zstd_dctx);
  size_t n;
  if (!dict.empty()) {
    n = ZSTD_decompress_usingDict(dctx, out.data(), out.size(), in.data(), in.size(), dict.data(), dict.size());
  } else {
    n = ZSTD_decompressDCtx(dctx, out.data(), out.size(), in.data(), in.size());
  }
  if (ZSTD_isError(n)) {
    if (ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation)
      return make_error(errc::out_of_memory, "zstd: allocator refused decompression memory");
    return make_error(errc::corrupt, "zstd: invalid compressed stream");
  }
  if (n != out.size()) return make_error(errc::corrupt, "zstd: stream decodes to a wrong size");
  return ok_status();
}

result<size_t> zstd_compress(codec_context& c, bytes_view in, bytes_mut out, int clevel) noexcept {
  if (c.zstd_cctx == nullptr) {
    c.zstd_cctx = ZSTD_createCCtx_advanced(zstd_mem(c));
    if (c.zstd_cctx == nullptr) return make_error(errc::out_of_memory, "zstd: allocator refused the CCtx");
  }
  const size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(c.zstd_cctx), out.data(), out.size(), in.data(),
                                     in.size(), clevel);
  if (ZSTD_isError(n)) {
    if (ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation)
      return make_error(errc::out_of_memory, "zstd: allocator refused compression memory");
    return size_t{0};  // does not fit: stored verbatim
  }
  return n;
}

int zstd_max_level() noexcept { return ZSTD_maxCLevel(); }

void zstd_context_release(codec_context& c) noexcept {
  if (c.zstd_dctx != nullptr) ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(c.zstd_dctx));
  if (c.zstd_cctx != nullptr) ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(c.zstd_cctx));
  c.zstd_dctx = nullptr;
  c.zstd_cctx = nullptr;
}

size_t zstd_decoder_state_estimate() noexcept { return ZSTD_estimateDCtxSize() + 1024; }
// The CCtx for inputs of at most max_src bytes (zstd sizes its tables from the input size it is given).
size_t zstd_encoder_state_estimate(int level, size_t max_src) noexcept {
  return ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level, max_src, 0)) + 4096;
}

#else  // no libzstd

bool zstd_available() noexcept { return false; }
status zstd_decompress(codec_context&, bytes_view, bytes_mut, bytes_view) noexcept {
  return make_error(errc::codec_unavailable, "the chunk needs the Zstd codec, which this build does not include");
}
result<size_t> zstd_compress(codec_context&, bytes_view, bytes_mut, int) noexcept {
  return make_error(errc::codec_unavailable, "Zstd is not included in this build");
}
int zstd_max_level() noexcept { return 22; }
void zstd_context_release(codec_context&) noexcept {}
size_t zstd_decoder_state_estimate() noexcept { return 0; }
size_t zstd_encoder_state_estimate(int, size_t) noexcept { return 0; }

#endif

}  // namespace tessera::detail
