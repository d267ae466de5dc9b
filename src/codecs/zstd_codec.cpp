// Zstd through libzstd. One DCtx (and one CCtx) per codec context, each a static context in a workspace from the
// caller's allocator, made on the caller's thread: zstd itself never allocates. Dictionaries are given raw, as
// the chunk stores them.
#include "codecs/codec.hpp"

#ifdef TESSERA_HAVE_ZSTD
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_initStaticDCtx/CCtx and their size estimates
#include <zstd.h>
#include <zstd_errors.h>
#endif

namespace tessera::detail {

#ifdef TESSERA_HAVE_ZSTD

namespace {

constexpr size_t kWorkspaceAlign = 64;  // zstd needs 8; a cache line keeps workers' tables apart

void workspace_free(codec_context& c, void*& mem, size_t& size) noexcept {
  if (mem != nullptr) allocator_deallocate(c.alloc, mem, size, kWorkspaceAlign);
  mem = nullptr;
  size = 0;
}

}  // namespace

bool zstd_available() noexcept { return true; }

status zstd_decoder_prepare(codec_context& c) noexcept {
  if (c.zstd_dctx != nullptr) return ok_status();
  const size_t size = ZSTD_estimateDCtxSize();
  void* mem = allocator_allocate(c.alloc, size, kWorkspaceAlign);
  if (mem == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("zstd: allocator refused the DCtx"));
  c.zstd_dctx = ZSTD_initStaticDCtx(mem, size);
  c.zstd_dctx_mem = mem;
  c.zstd_dctx_mem_size = size;
  if (c.zstd_dctx == nullptr) {
    workspace_free(c, c.zstd_dctx_mem, c.zstd_dctx_mem_size);
    return make_error(errc::out_of_memory, TESSERA_MSG("zstd: the DCtx does not fit its workspace"));
  }
  return ok_status();
}

status zstd_decompress(codec_context& c, bytes_view in, bytes_mut out, bytes_view dict) noexcept {
  if (c.zstd_dctx == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("zstd: decoder context not prepared"));
  auto* dctx = static_cast<ZSTD_DCtx*>(c.zstd_dctx);
  size_t n;
  if (!dict.empty()) {
    n = ZSTD_decompress_usingDict(dctx, out.data(), out.size(), in.data(), in.size(), dict.data(), dict.size());
  } else {
    n = ZSTD_decompressDCtx(dctx, out.data(), out.size(), in.data(), in.size());
  }
  if (ZSTD_isError(n)) return make_error(errc::corrupt, TESSERA_MSG("zstd: invalid compressed stream"));
  if (n != out.size()) return make_error(errc::corrupt, TESSERA_MSG("zstd: stream decodes to a wrong size"));
  return ok_status();
}

// The static CCtx for `level` holds any input up to max_src (zstd_encoder_state_estimate: the most any input
// size up to max_src needs at this level).
status zstd_encoder_prepare(codec_context& c, int level, size_t max_src) noexcept {
  if (c.zstd_cctx != nullptr && c.zstd_cctx_level == level && c.zstd_cctx_src >= max_src) return ok_status();
  c.zstd_cctx = nullptr;
  workspace_free(c, c.zstd_cctx_mem, c.zstd_cctx_mem_size);
  const size_t size = zstd_encoder_state_estimate(level, max_src);
  void* mem = allocator_allocate(c.alloc, size, kWorkspaceAlign);
  if (mem == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("zstd: allocator refused the CCtx"));
  c.zstd_cctx_mem = mem;
  c.zstd_cctx_mem_size = size;
  c.zstd_cctx = ZSTD_initStaticCCtx(mem, size);
  if (c.zstd_cctx == nullptr) {
    workspace_free(c, c.zstd_cctx_mem, c.zstd_cctx_mem_size);
    return make_error(errc::out_of_memory, TESSERA_MSG("zstd: the CCtx does not fit its workspace"));
  }
  c.zstd_cctx_level = level;
  c.zstd_cctx_src = max_src;
  return ok_status();
}

result<size_t> zstd_compress(codec_context& c, bytes_view in, bytes_mut out, int clevel) noexcept {
  if (c.zstd_cctx == nullptr || c.zstd_cctx_level != clevel || in.size() > c.zstd_cctx_src)
    return make_error(errc::invalid_argument, TESSERA_MSG("zstd: encoder context not prepared for this level and size"));
  const size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(c.zstd_cctx), out.data(), out.size(), in.data(),
                                     in.size(), clevel);
  if (ZSTD_isError(n)) {
    if (ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation)
      return make_error(errc::out_of_memory, TESSERA_MSG("zstd: the CCtx's workspace is too small"));
    return size_t{0};  // does not fit: stored verbatim
  }
  return n;
}

int zstd_max_level() noexcept { return ZSTD_maxCLevel(); }

void zstd_context_release(codec_context& c) noexcept {
  c.zstd_dctx = nullptr;  // static contexts own nothing outside their workspace
  c.zstd_cctx = nullptr;
  workspace_free(c, c.zstd_dctx_mem, c.zstd_dctx_mem_size);
  workspace_free(c, c.zstd_cctx_mem, c.zstd_cctx_mem_size);
}

size_t zstd_decoder_state_estimate() noexcept { return ZSTD_estimateDCtxSize() + kWorkspaceAlign; }
// The CCtx for inputs of at most max_src bytes. zstd picks its parameters from a table per input size class
// (up to 16 KiB, 128 KiB, 256 KiB, larger), and a smaller class may use a stronger strategy with more memory
// than a larger one (ZSTD_estimateCCtxSize takes the same maximum over the classes): so the largest of max_src's
// own and every smaller class's, each at its class's top size.
size_t zstd_encoder_state_estimate(int level, size_t max_src) noexcept {
  size_t size = ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level, max_src, 0));
  constexpr size_t kTiers[] = {size_t{16} << 10, size_t{128} << 10, size_t{256} << 10};
  for (const size_t tier : kTiers) {
    if (tier >= max_src) break;
    const size_t s = ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level, tier, 0));
    if (s > size) size = s;
  }
  return size;
}

#else  // no libzstd

bool zstd_available() noexcept { return false; }
status zstd_decoder_prepare(codec_context&) noexcept { return ok_status(); }
status zstd_encoder_prepare(codec_context&, int, size_t) noexcept { return ok_status(); }
status zstd_decompress(codec_context&, bytes_view, bytes_mut, bytes_view) noexcept {
  return make_error(errc::codec_unavailable, TESSERA_MSG("the chunk needs the Zstd codec, which this build does not include"));
}
result<size_t> zstd_compress(codec_context&, bytes_view, bytes_mut, int) noexcept {
  return make_error(errc::codec_unavailable, TESSERA_MSG("Zstd is not included in this build"));
}
int zstd_max_level() noexcept { return 22; }
void zstd_context_release(codec_context&) noexcept {}
size_t zstd_decoder_state_estimate() noexcept { return 0; }
size_t zstd_encoder_state_estimate(int, size_t) noexcept { return 0; }

#endif

}  // namespace tessera::detail
