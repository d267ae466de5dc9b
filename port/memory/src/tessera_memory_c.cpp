// The memory port's C API (tessera/port/tessera_memory.h): the RAM directory as a C tessera_storage_directory.
// Each open entry is a small box from the directory's allocator holding the C++ storage and the C storage over
// it (the C directory interface hands out storages at stable addresses until close).
#include "tessera/port/tessera_memory.h"

#include <cstring>
#include <new>

#include "tessera/port/memory_storage.hpp"

namespace {

using tessera::errc;
using tessera::status;

tessera_status to_c(const tessera::error& e) noexcept {
  tessera_status s;
  s.code = static_cast<int32_t>(e.code);
  s.message = e.message != nullptr ? e.message : "";
  return s;
}
tessera_status c_error(errc code, const char* message) noexcept { return to_c(tessera::make_error(code, message)); }

// ---- A C++ storage as a C one: the C storage's context is the box.

struct entry_box {
  tessera_storage c{};
  tessera::storage cxx{};
};

const tessera::storage& cxx_of(void* context) noexcept { return static_cast<entry_box*>(context)->cxx; }

tessera_status box_read(void* context, uint64_t offset, uint8_t* dst, size_t size) {
  return to_c(tessera::storage_read(cxx_of(context), offset, tessera::bytes_mut(dst, size)));
}
tessera_status box_write(void* context, uint64_t offset, const uint8_t* src, size_t size) {
  return to_c(tessera::storage_write(cxx_of(context), offset, tessera::bytes_view(src, size)));
}
tessera_status box_size(void* context, uint64_t* out) {
  const tessera::result<uint64_t> r = tessera::storage_size(cxx_of(context));
  if (!r.ok()) return to_c(r.err());
  *out = *r;
  return to_c(tessera::ok_status());
}
tessera_status box_truncate(void* context, uint64_t size) {
  return to_c(tessera::storage_truncate(cxx_of(context), size));
}
tessera_status box_sync(void* context) { return to_c(tessera::storage_sync(cxx_of(context))); }
const uint8_t* box_view(void* context, size_t* size) {
  const tessera::bytes_view v = tessera::storage_view(cxx_of(context));
  *size = v.size();
  return v.data();
}

}  // namespace

struct tessera_memory_directory {
  tessera::allocator alloc{};
  tessera::memory_directory dir;
  tessera::storage_directory iface{};
};

namespace {

tessera_memory_directory& mem_of(void* context) noexcept { return *static_cast<tessera_memory_directory*>(context); }

tessera_status dir_open(void* context, const char* name, int32_t mode, const tessera_storage** out) {
  tessera_memory_directory& m = mem_of(context);
  if (mode < TESSERA_STORAGE_OPEN_READ || mode > TESSERA_STORAGE_OPEN_REPLACE) {
    return c_error(errc::invalid_argument, TESSERA_MSG("memory directory: unknown open mode"));
  }
  void* p = tessera::allocator_allocate(m.alloc, sizeof(entry_box), alignof(entry_box));
  if (p == nullptr) return c_error(errc::out_of_memory, TESSERA_MSG("memory directory: allocator refused an entry"));
  entry_box* b = new (p) entry_box();
  const status s = tessera::storage_directory_open(m.iface, name, static_cast<tessera::storage_open>(mode), &b->cxx);
  if (!s.ok()) {
    b->~entry_box();
    tessera::allocator_deallocate(m.alloc, b, sizeof(entry_box), alignof(entry_box));
    return to_c(s);
  }
  b->c.read = box_read;
  b->c.write = b->cxx.write != nullptr ? box_write : nullptr;
  b->c.size = box_size;
  b->c.truncate = b->cxx.truncate != nullptr ? box_truncate : nullptr;
  b->c.sync = b->cxx.sync != nullptr ? box_sync : nullptr;
  b->c.view = b->cxx.view != nullptr ? box_view : nullptr;
  b->c.context = b;
  *out = &b->c;
  return to_c(tessera::ok_status());
}

tessera_status dir_close(void* context, const tessera_storage* s) {
  tessera_memory_directory& m = mem_of(context);
  entry_box* b = static_cast<entry_box*>(s->context);
  const status st = tessera::storage_directory_close(m.iface, &b->cxx);
  b->~entry_box();
  tessera::allocator_deallocate(m.alloc, b, sizeof(entry_box), alignof(entry_box));
  return to_c(st);
}

tessera_status dir_remove(void* context, const char* name) {
  return to_c(tessera::storage_directory_remove(mem_of(context).iface, name));
}

tessera_status dir_rename(void* context, const char* from, const char* to) {
  return to_c(tessera::storage_directory_rename(mem_of(context).iface, from, to));
}

}  // namespace

tessera_status tessera_memory_directory_create(tessera_memory_directory** out, const tessera_allocator* alloc,
                                               uint32_t max_entries, size_t max_entry_size) {
  if (out == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("memory directory: null out"));
  *out = nullptr;
  if (alloc == nullptr || alloc->allocate == nullptr || alloc->deallocate == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("memory directory: null allocator"));
  }
  tessera::allocator a;
  a.allocate = alloc->allocate;
  a.deallocate = alloc->deallocate;
  a.context = alloc->context;
  void* p = tessera::allocator_allocate(a, sizeof(tessera_memory_directory), alignof(tessera_memory_directory));
  if (p == nullptr) return c_error(errc::out_of_memory, TESSERA_MSG("memory directory: allocator refused the handle"));
  tessera_memory_directory* m = new (p) tessera_memory_directory();
  m->alloc = a;
  const status s = tessera::memory_directory_init(m->dir, a, max_entries, max_entry_size);
  if (!s.ok()) {
    m->~tessera_memory_directory();
    tessera::allocator_deallocate(a, m, sizeof(tessera_memory_directory), alignof(tessera_memory_directory));
    return to_c(s);
  }
  m->iface = tessera::memory_directory_interface(m->dir);
  *out = m;
  return to_c(tessera::ok_status());
}

tessera_status tessera_memory_directory_destroy(tessera_memory_directory* d) {
  if (d == nullptr) return to_c(tessera::ok_status());
  const tessera::allocator a = d->alloc;
  tessera::memory_directory_release(d->dir);
  d->~tessera_memory_directory();
  tessera::allocator_deallocate(a, d, sizeof(tessera_memory_directory), alignof(tessera_memory_directory));
  return to_c(tessera::ok_status());
}

tessera_storage_directory tessera_memory_directory_interface(tessera_memory_directory* d) {
  tessera_storage_directory c;
  c.open = dir_open;
  c.close = dir_close;
  c.remove = dir_remove;
  c.rename = dir_rename;
  c.context = d;
  return c;
}

tessera_status tessera_memory_directory_count(const tessera_memory_directory* d, uint32_t* count) {
  if (d == nullptr || count == nullptr) return c_error(errc::invalid_argument, TESSERA_MSG("memory directory: null argument"));
  *count = tessera::memory_directory_count(d->dir);
  return to_c(tessera::ok_status());
}

tessera_status tessera_memory_directory_entry_size(const tessera_memory_directory* d, const char* name, size_t* size) {
  if (d == nullptr || name == nullptr || size == nullptr) {
    return c_error(errc::invalid_argument, TESSERA_MSG("memory directory: null argument"));
  }
  const uint32_t slots = tessera::memory_directory_slots(d->dir);
  for (uint32_t i = 0; i < slots; ++i) {
    const char* n = tessera::memory_directory_name(d->dir, i);
    if (n != nullptr && std::strcmp(n, name) == 0) {
      *size = tessera::memory_directory_find(d->dir, name).size();
      return to_c(tessera::ok_status());
    }
  }
  return c_error(errc::io, TESSERA_MSG("memory directory: no such entry"));
}
