// SPDX-License-Identifier: BSD-3-Clause
// The z_stream both zlib directions use: zalloc/zfree routed to the caller's allocator, and refused outside
// prepare. zlib allocates its state in inflateInit/deflateInit (inside prepare, on the caller's thread) and
// inflate's window only when a stream does not end in one call, which a valid Blosc stream always does: so a
// task never reaches the caller's allocator.
#pragma once

#ifdef TESSERA_HAVE_ZLIB

#include <string.h>
#include <limits.h>
#include "tessera/cxx.hpp"

#include <zlib.h>

#include "codecs/codec.hpp"

namespace tessera::detail {

inline voidpf zlib_alloc(voidpf opaque, uInt items, uInt size) {
  const auto* c = static_cast<const codec_context*>(opaque);
  if (!c->zlib_may_allocate) return Z_NULL;
  if (size != 0 && items > SIZE_MAX / size) return Z_NULL;
  return sized_allocate(c->alloc, static_cast<size_t>(items) * size);
}

inline void zlib_free(voidpf opaque, voidpf address) {
  sized_deallocate(static_cast<const codec_context*>(opaque)->alloc, address);
}

inline z_stream* zlib_stream_new(codec_context& c) noexcept {
  void* p = allocator_allocate(c.alloc, sizeof(z_stream), alignof(z_stream));
  if (p == nullptr) return nullptr;
  auto* s = new (tessera::cxx::place, p) z_stream;
  memset(s, 0, sizeof *s);
  s->zalloc = zlib_alloc;
  s->zfree = zlib_free;
  s->opaque = &c;
  return s;
}

inline void zlib_stream_delete(codec_context& c, z_stream* s) noexcept {
  allocator_deallocate(c.alloc, s, sizeof(z_stream), alignof(z_stream));
}

inline constexpr size_t kZlibUIntMax = UINT_MAX;

}  // namespace tessera::detail

#endif
