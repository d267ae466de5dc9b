// SPDX-License-Identifier: BSD-3-Clause
// The wrappers of the codec libraries (LZ4, Zlib, Zstd): one interface per direction, every library wired to the
// caller's allocator. A build without a library keeps the interface, marked unavailable (codec_unavailable).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/allocator.hpp"
#include "tessera/chunk.hpp"
#include "tessera/config.hpp"
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

// Frees the state of every codec library the program links.
void codec_context_release(codec_context& c) noexcept;
// Bytes the decompression contexts of the linked codecs take (for estimates).
[[nodiscard]] size_t codec_decoder_state_estimate() noexcept;

// One codec library in one direction: what the chunk decoder (or encoder) needs of it. Each lives in its own
// object file (lz4_decode.cpp, zstd_encode.cpp, ...). On bare metal the core refers to them weakly
// (TESSERA_CODECS_ON_DEMAND), so a firmware links a library only when it calls its codec_link_* function
// (tessera/codecs.hpp): the codecs it does not use cost it nothing. Hosts refer to them strongly: every codec of
// the build is there. `available` is false when the build has no such library.
struct codec_decoder_impl {
  bool available;
  // Creates the context's state on the calling thread (null: stateless); a no-op when it is there.
  status (*prepare)(codec_context& c) noexcept;
  // Exactly out.size() bytes; or, when want < out.size() and the codec can stop early (LZ4 without a
  // dictionary), at least the first `want` (the rest of out unspecified). `dict` is empty without a dictionary.
  status (*decompress)(codec_context& c, bytes_view in, bytes_mut out, bytes_view dict, size_t want) noexcept;
  void (*release)(codec_context& c) noexcept;  // null: nothing to free
  size_t (*state_estimate)() noexcept;         // null: no state
};

struct codec_encoder_impl {
  bool available;
  // Creates what compressing streams of at most max_src bytes at `level` needs, on the calling thread.
  status (*prepare)(codec_context& c, int level, size_t max_src) noexcept;
  // The compressed size, 0 when the data does not fit in out (it is stored verbatim then).
  // `dict`: the chunk's dictionary (use_dict; empty without), which the stream may refer to.
  result<size_t> (*compress)(codec_context& c, bytes_view in, bytes_mut out, int level, bytes_view dict) noexcept;
  void (*release)(codec_context& c) noexcept;
  size_t (*state_estimate)(int level, size_t max_src) noexcept;
};

#if TESSERA_CODECS_ON_DEMAND
#define TESSERA_CODEC_LINK __attribute__((weak))
#else
#define TESSERA_CODEC_LINK
#endif

extern const codec_decoder_impl lz4_decoder_impl TESSERA_CODEC_LINK;
extern const codec_decoder_impl zlib_decoder_impl TESSERA_CODEC_LINK;
extern const codec_decoder_impl zstd_decoder_impl TESSERA_CODEC_LINK;
extern const codec_encoder_impl lz4_encoder_impl TESSERA_CODEC_LINK;
extern const codec_encoder_impl lz4hc_encoder_impl TESSERA_CODEC_LINK;
extern const codec_encoder_impl zlib_encoder_impl TESSERA_CODEC_LINK;
extern const codec_encoder_impl zstd_encoder_impl TESSERA_CODEC_LINK;

// The decoder of a codec format (LZ4, Zlib, Zstd), or null when this program does not link it (bare metal).
inline const codec_decoder_impl* codec_decoder_find(codec_format f) noexcept {
  switch (f) {
    case codec_format::lz4: return &lz4_decoder_impl;
    case codec_format::zlib: return &zlib_decoder_impl;
    case codec_format::zstd: return &zstd_decoder_impl;
    default: return nullptr;
  }
}

// The encoder of a library codec, or null when this program does not link it (bare metal).
inline const codec_encoder_impl* codec_encoder_find(codec c) noexcept {
  switch (c) {
    case codec::lz4: return &lz4_encoder_impl;
    case codec::lz4hc: return &lz4hc_encoder_impl;
    case codec::zlib: return &zlib_encoder_impl;
    case codec::zstd: return &zstd_encoder_impl;
    default: return nullptr;
  }
}

// Zstd's strongest level (ZSTD_maxCLevel() of every libzstd since 1.3): Blosc's clevel 9.
inline constexpr int kZstdMaxLevel = 22;
// The alignment of zstd's static context workspaces: zstd needs 8; a cache line keeps workers' tables apart.
inline constexpr size_t kZstdWorkspaceAlign = 64;

// Frees a workspace from the context's allocator and clears what pointed at it.
inline void codec_workspace_free(codec_context& c, void*& mem, size_t& size, size_t align) noexcept {
  if (mem != nullptr) allocator_deallocate(c.alloc, mem, size, align);
  mem = nullptr;
  size = 0;
}

// Libraries that free without a size (zlib, zstd) get blocks prefixed with their size.
[[nodiscard]] void* sized_allocate(const allocator& a, size_t size) noexcept;
void sized_deallocate(const allocator& a, void* block) noexcept;

}  // namespace tessera::detail
