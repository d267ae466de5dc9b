// The wrappers of the codec libraries (LZ4, Zlib, Zstd): one interface, every library wired to the caller's
// allocator. A build without a library keeps the functions, which then fail with codec_unavailable.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"
#include "tessera/span.hpp"

namespace tessera::detail {

// Per-worker codec state, reused across calls. The caller's allocator may be called only from the thread that
// called the API and never concurrently, while codecs run on the executor's workers: so every state is created
// by a *_prepare function on the calling thread before the tasks run, and (de)compression itself never
// allocates (zstd contexts live in static workspaces; zlib's allocations are refused outside prepare).
struct codec_context {
  allocator alloc{};
  void* zstd_dctx = nullptr;     // a static ZSTD_DCtx in zstd_dctx_mem
  void* zstd_dctx_mem = nullptr;
  size_t zstd_dctx_mem_size = 0;
  void* zstd_cctx = nullptr;     // a static ZSTD_CCtx in zstd_cctx_mem, sized for zstd_cctx_level and _src
  void* zstd_cctx_mem = nullptr;
  size_t zstd_cctx_mem_size = 0;
  int zstd_cctx_level = 0;
  size_t zstd_cctx_src = 0;
  void* zlib_inflate = nullptr;  // a z_stream with an inflate state
  void* zlib_deflate = nullptr;  // a z_stream with a deflate state
  int zlib_deflate_level = -1;
  bool zlib_may_allocate = false;  // true only inside a prepare call, on the caller's thread
  void* lz4_state = nullptr;     // LZ4_stream_t (fast) state
  size_t lz4_state_size = 0;
  void* lz4hc_state = nullptr;   // LZ4_streamHC_t state
  size_t lz4hc_state_size = 0;
};

void codec_context_release(codec_context& c) noexcept;

// Create what decompressing (or compressing streams of at most max_src bytes) needs, on the calling thread; a no-op
// when it is there already. Without them the (de)compressors fail with invalid_argument instead of allocating.
// Libraries that are absent succeed here and fail later with codec_unavailable.
[[nodiscard]] status zlib_decoder_prepare(codec_context& c) noexcept;
[[nodiscard]] status zstd_decoder_prepare(codec_context& c) noexcept;
[[nodiscard]] status lz4_encoder_prepare(codec_context& c, bool hc) noexcept;
[[nodiscard]] status zlib_encoder_prepare(codec_context& c, int level) noexcept;
[[nodiscard]] status zstd_encoder_prepare(codec_context& c, int level, size_t max_src) noexcept;

// Defined by each library's wrapper (a no-op, or 0, when the library is absent).
void lz4_context_release(codec_context& c) noexcept;
void zlib_context_release(codec_context& c) noexcept;
void zstd_context_release(codec_context& c) noexcept;
// The state one codec context allocates, for estimates.
[[nodiscard]] size_t zlib_decoder_state_estimate() noexcept;
[[nodiscard]] size_t zstd_decoder_state_estimate() noexcept;
[[nodiscard]] size_t lz4_encoder_state_estimate(bool hc) noexcept;
[[nodiscard]] size_t zlib_encoder_state_estimate(int level) noexcept;
[[nodiscard]] size_t zstd_encoder_state_estimate(int level, size_t max_src) noexcept;

// Bytes the decompression contexts of this build's codecs take (for estimates).
[[nodiscard]] size_t codec_decoder_state_estimate() noexcept;

// Each decompressor succeeds only when the stream decodes to exactly out.size() bytes.
// `dict` is empty when the chunk has no dictionary.
[[nodiscard]] status lz4_decompress(bytes_view in, bytes_mut out, bytes_view dict) noexcept;
// At least the first `want` bytes of a stream that decodes to out.size() bytes (no dictionary); the rest of out is
// unspecified. want >= out.size() is lz4_decompress.
[[nodiscard]] status lz4_decompress_prefix(bytes_view in, bytes_mut out, size_t want) noexcept;
[[nodiscard]] status zlib_decompress(codec_context& c, bytes_view in, bytes_mut out) noexcept;
[[nodiscard]] status zstd_decompress(codec_context& c, bytes_view in, bytes_mut out, bytes_view dict) noexcept;

// Compressors: return the compressed size, 0 when the data does not fit in out (store it verbatim then).
[[nodiscard]] result<size_t> lz4_compress(codec_context& c, bytes_view in, bytes_mut out, int acceleration) noexcept;
[[nodiscard]] result<size_t> lz4hc_compress(codec_context& c, bytes_view in, bytes_mut out, int clevel) noexcept;
[[nodiscard]] result<size_t> zlib_compress(codec_context& c, bytes_view in, bytes_mut out, int clevel) noexcept;
[[nodiscard]] result<size_t> zstd_compress(codec_context& c, bytes_view in, bytes_mut out, int clevel) noexcept;

[[nodiscard]] bool lz4_available() noexcept;
[[nodiscard]] bool zlib_available() noexcept;
[[nodiscard]] bool zstd_available() noexcept;
[[nodiscard]] int zstd_max_level() noexcept;

// Libraries that free without a size (zlib, zstd) get blocks prefixed with their size.
[[nodiscard]] void* sized_allocate(const allocator& a, size_t size) noexcept;
void sized_deallocate(const allocator& a, void* block) noexcept;

}  // namespace tessera::detail
