// SPDX-License-Identifier: BSD-3-Clause
// The memory port's C API (tessera/port/tessera_memory.h): the RAM directory as a C tessera_storage_directory,
// through the core's C directory adapter (tessera/capi_bridge.hpp), its open entries boxed from the directory's
// allocator.
#include "tessera/port/tessera_memory.h"

#include <string.h>
#include "tessera/cxx.hpp"

#include "tessera/capi_bridge.hpp"
#include "tessera/port/memory_storage.hpp"

using tessera::errc;
using tessera::status;
using tessera::status_to_c;

struct tessera_memory_buffer {
  tessera::growable_buffer buf;
  tessera::storage st{};  // the C++ storage over buf: the C storage's context
  tessera_allocator c_alloc{};
};

struct tessera_memory_directory {
  tessera::memory_directory dir;
  tessera::directory_to_c_state c;  // the directory interface over dir and the allocator
};

namespace {

tessera_status c_error(errc code, const char* message) noexcept { return status_to_c(tessera::make_error(code, message)); }
tessera_status c_ok() noexcept { return status_to_c(tessera::ok_status()); }

}  // namespace

// ---- Growable buffer ------------------------------------------------------------------------------------------

tessera_status tessera_memory_buffer_create(tessera_memory_buffer** out, const tessera_allocator* alloc,
                                            size_t max_size) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("memory buffer: null out"));
  *out = nullptr;
  if (alloc == nullptr || alloc->allocate == nullptr || alloc->deallocate == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("memory buffer: null allocator"));
  }
  const tessera::allocator a = tessera::allocator_from_c(*alloc);
  void* p = tessera::allocator_allocate(a, sizeof(tessera_memory_buffer), alignof(tessera_memory_buffer));
  if (p == nullptr) return c_error(errc::out_of_memory, TESSERA_MSG("memory buffer: allocator refused the handle"));
  tessera_memory_buffer* b = new (tessera::cxx::place, p) tessera_memory_buffer();
  tessera::growable_buffer_init(b->buf, a, max_size);
  b->st = tessera::growable_buffer_storage(b->buf);
  b->c_alloc = *alloc;
  *out = b;
  return c_ok();
}

void tessera_memory_buffer_destroy(tessera_memory_buffer* b) {
  if (b == nullptr) return;
  const tessera::allocator a = tessera::allocator_from_c(b->c_alloc);
  b->~tessera_memory_buffer();
  tessera::allocator_deallocate(a, b, sizeof(tessera_memory_buffer), alignof(tessera_memory_buffer));
}

tessera_storage tessera_memory_buffer_storage(tessera_memory_buffer* b) {
  if (b == nullptr) return tessera_storage{};  // every callback NULL: an array refuses it (null read)
  return tessera::storage_to_c(&b->st);
}

tessera_status tessera_memory_buffer_bytes(const tessera_memory_buffer* b, const uint8_t** data, size_t* size) {
  if (b == nullptr || data == nullptr || size == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("memory buffer: null buffer, data or size"));
  }
  *data = b->buf.bytes().data();
  *size = b->buf.size();
  return c_ok();
}

tessera_status tessera_memory_buffer_take(tessera_memory_buffer* b, tessera_memory_bytes* out) {
  if (b == nullptr || out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("memory buffer: null buffer or out"));
  const tessera::growable_bytes g = tessera::growable_buffer_take(b->buf);
  out->data = g.data;
  out->size = g.size;
  out->capacity = g.capacity;
  out->alloc = b->c_alloc;
  return c_ok();
}

void tessera_memory_bytes_free(tessera_memory_bytes* bytes) {
  if (bytes == nullptr) return;
  tessera::growable_bytes g{bytes->data, bytes->size, bytes->capacity, tessera::allocator_from_c(bytes->alloc)};
  tessera::growable_bytes_free(g);
  bytes->data = nullptr;
  bytes->size = 0;
  bytes->capacity = 0;
}

// ---- Directory ------------------------------------------------------------------------------------------------

tessera_status tessera_memory_directory_create(tessera_memory_directory** out, const tessera_allocator* alloc,
                                               uint32_t max_entries, size_t max_entry_size) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("memory directory: null out"));
  *out = nullptr;
  if (alloc == nullptr || alloc->allocate == nullptr || alloc->deallocate == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("memory directory: null allocator"));
  }
  const tessera::allocator a = tessera::allocator_from_c(*alloc);
  void* p = tessera::allocator_allocate(a, sizeof(tessera_memory_directory), alignof(tessera_memory_directory));
  if (p == nullptr) return c_error(errc::out_of_memory, TESSERA_MSG("memory directory: allocator refused the handle"));
  tessera_memory_directory* m = new (tessera::cxx::place, p) tessera_memory_directory();
  m->c.alloc = a;
  const status s = tessera::memory_directory_init(m->dir, a, max_entries, max_entry_size);
  if (!s.ok()) {
    m->~tessera_memory_directory();
    tessera::allocator_deallocate(a, m, sizeof(tessera_memory_directory), alignof(tessera_memory_directory));
    return status_to_c(s);
  }
  m->c.dir = tessera::memory_directory_interface(m->dir);
  *out = m;
  return c_ok();
}

tessera_status tessera_memory_directory_destroy(tessera_memory_directory* d) {
  if (d == nullptr) return c_ok();
  const tessera::allocator a = d->c.alloc;
  tessera::memory_directory_release(d->dir);
  d->~tessera_memory_directory();
  tessera::allocator_deallocate(a, d, sizeof(tessera_memory_directory), alignof(tessera_memory_directory));
  return c_ok();
}

tessera_storage_directory tessera_memory_directory_interface(tessera_memory_directory* d) {
  if (d == nullptr) return tessera_storage_directory{};  // every callback NULL: an array refuses it
  return tessera::directory_to_c(&d->c);
}

tessera_status tessera_memory_directory_count(const tessera_memory_directory* d, uint32_t* count) {
  if (d == nullptr || count == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("memory directory: null argument"));
  *count = tessera::memory_directory_count(d->dir);
  return c_ok();
}

tessera_status tessera_memory_directory_entry_size(const tessera_memory_directory* d, const char* name, size_t* size) {
  if (d == nullptr || name == nullptr || size == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("memory directory: null argument"));
  }
  const uint32_t slots = tessera::memory_directory_slots(d->dir);
  for (uint32_t i = 0; i < slots; ++i) {
    const char* n = tessera::memory_directory_name(d->dir, i);
    if (n != nullptr && strcmp(n, name) == 0) {
      *size = tessera::memory_directory_find(d->dir, name).size();
      return c_ok();
    }
  }
  return c_error(errc::io, TESSERA_MSG("memory directory: no such entry"));
}
