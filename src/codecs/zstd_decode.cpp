// Zstd decoding through libzstd: one static DCtx per codec context, in a workspace from the caller's allocator
// made on the caller's thread, so zstd itself never allocates. Dictionaries are given raw, as the chunk has them.
#include "codecs/codec.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

#ifdef TESSERA_HAVE_ZSTD
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_initStatic*Ctx and their size estimates
#include <zstd.h>
#include <zstd_errors.h>
#endif

namespace tessera {

void codec_link_zstd_decoder() noexcept {}

namespace detail {

#ifdef TESSERA_HAVE_ZSTD

namespace {

constexpr size_t kWorkspaceAlign = 64;  // zstd needs 8; a cache line keeps workers' tables apart

status prepare(codec_context& c) noexcept {
  if (c.zstd_dctx != nullptr) return ok_status();
  const size_t size = ZSTD_estimateDCtxSize();
  void* mem = allocator_allocate(c.alloc, size, kWorkspaceAlign);
  if (mem == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("zstd: allocator refused the DCtx"));
  c.zstd_dctx = ZSTD_initStaticDCtx(mem, size);
  c.zstd_dctx_mem = mem;
  c.zstd_dctx_mem_size = size;
  if (c.zstd_dctx == nullptr) {
    codec_workspace_free(c, c.zstd_dctx_mem, c.zstd_dctx_mem_size, kWorkspaceAlign);
    return make_error(errc::out_of_memory, TESSERA_MSG("zstd: the DCtx does not fit its workspace"));
  }
  return ok_status();
}

status decompress(codec_context& c, bytes_view in, bytes_mut out, bytes_view dict, size_t) noexcept {
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

void release(codec_context& c) noexcept {
  c.zstd_dctx = nullptr;  // a static context owns nothing outside its workspace
  codec_workspace_free(c, c.zstd_dctx_mem, c.zstd_dctx_mem_size, kWorkspaceAlign);
}

size_t state_estimate() noexcept { return ZSTD_estimateDCtxSize() + kWorkspaceAlign; }

}  // namespace

extern const codec_decoder_impl zstd_decoder_impl = {true, prepare, decompress, release, state_estimate};

#else  // no libzstd

extern const codec_decoder_impl zstd_decoder_impl = {false, nullptr, nullptr, nullptr, nullptr};

#endif

}  // namespace detail
}  // namespace tessera

// The C API's twin (tessera/tessera.h), in this object file so that calling it links this codec alone.
extern "C" void tessera_codec_link_zstd_decoder(void) {}
