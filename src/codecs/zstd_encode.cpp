// SPDX-License-Identifier: BSD-3-Clause
// Zstd encoding through libzstd: one static CCtx per codec context, in a workspace from the caller's allocator
// sized for the level and the largest stream, made on the caller's thread, so zstd itself never allocates.
#include "codecs/codec_link.hpp"
#include "codecs/zstd_static.hpp"

TESSERA_CODEC_LINK_ANCHORS_DICT(zstd_encoder)

namespace tessera::detail {

#ifndef TESSERA_HAVE_ZSTD  // a build without libzstd
extern const codec_encoder_impl zstd_encoder_impl = kCodecEncoderUnavailable;
#else

namespace {

// The CCtx for inputs of at most max_src bytes. zstd picks its parameters from a table per input size class
// (up to 16 KiB, 128 KiB, 256 KiB, larger), and a smaller class may use a stronger strategy with more memory
// than a larger one (ZSTD_estimateCCtxSize takes the same maximum over the classes): so the largest of max_src's
// own and every smaller class's, each at its class's top size.
size_t state_estimate(int level, size_t max_src) noexcept {
  size_t size = ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level, max_src, 0));
  constexpr size_t kTiers[] = {size_t{16} << 10, size_t{128} << 10, size_t{256} << 10};
  for (const size_t tier : kTiers) {
    if (tier >= max_src) break;
    const size_t s = ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level, tier, 0));
    if (s > size) size = s;
  }
  return size;
}

// The static CCtx for `level` holds any input up to max_src (state_estimate: the most any input
// size up to max_src needs at this level).
status prepare(codec_context& c, int level, size_t max_src) noexcept {
  if (c.zstd_cctx != nullptr && c.zstd_cctx_level == level && c.zstd_cctx_src >= max_src) return ok_status();
  c.zstd_cctx = nullptr;
  codec_workspace_free(c, c.zstd_cctx_mem, c.zstd_cctx_mem_size, kZstdWorkspaceAlign);
  const size_t size = state_estimate(level, max_src);
  void* mem = allocator_allocate(c.alloc, size, kZstdWorkspaceAlign);
  if (mem == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("zstd: allocator refused the CCtx"));
  c.zstd_cctx_mem = mem;
  c.zstd_cctx_mem_size = size;
  c.zstd_cctx = ZSTD_initStaticCCtx(mem, size);
  if (c.zstd_cctx == nullptr) {  // GCOVR_EXCL_BR_LINE: the workspace is ZSTD_estimateCCtxSize's own figure
    codec_workspace_free(c, c.zstd_cctx_mem, c.zstd_cctx_mem_size, kZstdWorkspaceAlign);  // GCOVR_EXCL_LINE
    return make_error(errc::out_of_memory, TESSERA_MSG("zstd: the CCtx does not fit its workspace"));  // GCOVR_EXCL_LINE
  }
  c.zstd_cctx_level = level;
  c.zstd_cctx_src = max_src;
  return ok_status();
}

// With a dictionary (raw content, referenced in place: ZSTD_compress_usingDict allocates nothing), zstd sizes
// its tables by the stream and the dictionary together: the chunk encoder prepares max_src for both.
result<size_t> compress(codec_context& c, bytes_view in, bytes_mut out, int clevel, bytes_view dict) noexcept {
  // GCOVR_EXCL_BR_START: the chunk encoder prepares every context for its level and size before it compresses.
  if (c.zstd_cctx == nullptr || c.zstd_cctx_level != clevel || in.size() + dict.size() > c.zstd_cctx_src)
    return make_error(errc::invalid_argument, TESSERA_MSG("zstd: encoder context not prepared for this level and size"));  // GCOVR_EXCL_LINE
  // GCOVR_EXCL_BR_STOP
  auto* cctx = static_cast<ZSTD_CCtx*>(c.zstd_cctx);
  const size_t n = dict.empty() ? ZSTD_compressCCtx(cctx, out.data(), out.size(), in.data(), in.size(), clevel)
                                : ZSTD_compress_usingDict(cctx, out.data(), out.size(), in.data(), in.size(),
                                                          dict.data(), dict.size(), clevel);
  if (ZSTD_isError(n)) {
    // GCOVR_EXCL_BR_START: prepare sized the workspace for this level and size (state_estimate).
    if (ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation)
      return make_error(errc::out_of_memory, TESSERA_MSG("zstd: the CCtx's workspace is too small"));  // GCOVR_EXCL_LINE
    // GCOVR_EXCL_BR_STOP
    return size_t{0};  // does not fit: stored verbatim
  }
  return n;
}

void release(codec_context& c) noexcept {
  c.zstd_cctx = nullptr;  // a static context owns nothing outside its workspace
  codec_workspace_free(c, c.zstd_cctx_mem, c.zstd_cctx_mem_size, kZstdWorkspaceAlign);
}

}  // namespace

extern const codec_encoder_impl zstd_encoder_impl = {true, prepare, compress, release, state_estimate};

#endif  // TESSERA_HAVE_ZSTD

}  // namespace tessera::detail
