// SPDX-License-Identifier: BSD-3-Clause
// Zstd decoding through libzstd: one static DCtx per codec context, in a workspace from the caller's allocator
// made on the caller's thread, so zstd itself never allocates. Dictionaries are given raw, as the chunk has them.
#include "codecs/codec_link.hpp"
#include "codecs/zstd_static.hpp"

TESSERA_CODEC_LINK_ANCHORS(zstd_decoder)

namespace tessera::detail {

#ifndef TESSERA_HAVE_ZSTD  // a build without libzstd
extern const codec_decoder_impl zstd_decoder_impl = kCodecDecoderUnavailable;
#else

namespace {

status prepare(codec_context& c) noexcept {
  if (c.zstd_dctx != nullptr) return ok_status();
  const size_t size = ZSTD_estimateDCtxSize();
  void* mem = allocator_allocate(c.alloc, size, kZstdWorkspaceAlign);
  if (mem == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("zstd: allocator refused the DCtx"));
  c.zstd_dctx = ZSTD_initStaticDCtx(mem, size);
  c.zstd_dctx_mem = mem;
  c.zstd_dctx_mem_size = size;
  if (c.zstd_dctx == nullptr) {  // GCOVR_EXCL_BR_LINE: the workspace is ZSTD_estimateDCtxSize's own figure
    codec_workspace_free(c, c.zstd_dctx_mem, c.zstd_dctx_mem_size, kZstdWorkspaceAlign);  // GCOVR_EXCL_LINE
    return make_error(errc::out_of_memory, TESSERA_MSG("zstd: the DCtx does not fit its workspace"));  // GCOVR_EXCL_LINE
  }
  return ok_status();
}

status decompress(codec_context& c, bytes_view in, bytes_mut out, bytes_view dict, size_t) noexcept {
  // GCOVR_EXCL_BR_START: the chunk decoder prepares the context before any stream reaches it.
  if (c.zstd_dctx == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("zstd: decoder context not prepared"));
  // GCOVR_EXCL_BR_STOP
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

void release(codec_context& c) noexcept {
  c.zstd_dctx = nullptr;  // a static context owns nothing outside its workspace
  codec_workspace_free(c, c.zstd_dctx_mem, c.zstd_dctx_mem_size, kZstdWorkspaceAlign);
}

size_t state_estimate() noexcept { return ZSTD_estimateDCtxSize() + kZstdWorkspaceAlign; }

}  // namespace

extern const codec_decoder_impl zstd_decoder_impl = {true, prepare, decompress, release, state_estimate};

#endif  // TESSERA_HAVE_ZSTD

}  // namespace tessera::detail
