// SPDX-License-Identifier: BSD-3-Clause
// The adapters from C++ to the C API's storage and directory (tessera/capi_bridge.hpp), which the ports' C APIs
// use. Its own object file: a program links it only when it calls them.
#include "tessera/capi_bridge.hpp"

#include "tessera/cxx.hpp"

namespace tessera {

namespace {

// ---- A C++ storage as a C one: the C storage's context is the C++ storage.

const storage& cxx_of(void* context) noexcept { return *static_cast<const storage*>(context); }

tessera_status c_read(void* context, uint64_t offset, uint8_t* dst, size_t size) {
  return status_to_c(storage_read(cxx_of(context), offset, bytes_mut(dst, size)));
}
tessera_status c_write(void* context, uint64_t offset, const uint8_t* src, size_t size) {
  return status_to_c(storage_write(cxx_of(context), offset, bytes_view(src, size)));
}
tessera_status c_size(void* context, uint64_t* out) {
  const result<uint64_t> r = storage_size(cxx_of(context));
  if (!r.ok()) return status_to_c(r.err());
  *out = *r;
  return status_to_c(ok_status());
}
tessera_status c_truncate(void* context, uint64_t size) { return status_to_c(storage_truncate(cxx_of(context), size)); }
tessera_status c_sync(void* context) { return status_to_c(storage_sync(cxx_of(context))); }
void c_reads_begin(void* context) {
  const storage& s = cxx_of(context);
  s.reads_begin(s.context);
}
void c_reads_end(void* context) {
  const storage& s = cxx_of(context);
  s.reads_end(s.context);
}
const uint8_t* c_view(void* context, size_t* size) {
  const bytes_view v = storage_view(cxx_of(context));
  *size = v.size();
  return v.data();
}

// ---- A C++ directory as a C one: each open entry is a box from the state's allocator. c comes first: close
// gets &c back and converts it to the box (standard layout).

struct entry_box {
  tessera_storage c{};
  storage cxx{};
};

directory_to_c_state& state_of(void* context) noexcept { return *static_cast<directory_to_c_state*>(context); }

tessera_status dir_open(void* context, const char* name, int32_t mode, const tessera_storage** out) {
  directory_to_c_state& d = state_of(context);
  if (mode < TESSERA_STORAGE_OPEN_READ || mode > TESSERA_STORAGE_OPEN_REPLACE) {
    return status_to_c(make_error(errc::invalid_argument, TESSERA_MSG("directory: unknown open mode")));
  }
  void* p = allocator_allocate(d.alloc, sizeof(entry_box), alignof(entry_box));
  if (p == nullptr) return status_to_c(make_error(errc::out_of_memory, TESSERA_MSG("directory: allocator refused an entry")));
  entry_box* b = new (tessera::cxx::place, p) entry_box();
  const status s = storage_directory_open(d.dir, name, static_cast<storage_open>(mode), &b->cxx);
  if (s.ok()) {
    b->c = storage_to_c(&b->cxx);
    *out = &b->c;
    return status_to_c(s);
  }
  b->~entry_box();
  allocator_deallocate(d.alloc, b, sizeof(entry_box), alignof(entry_box));
  return status_to_c(s);
}

tessera_status dir_close(void* context, const tessera_storage* c) {
  directory_to_c_state& d = state_of(context);
  entry_box* b = reinterpret_cast<entry_box*>(const_cast<tessera_storage*>(c));
  const status s = storage_directory_close(d.dir, &b->cxx);
  b->~entry_box();
  allocator_deallocate(d.alloc, b, sizeof(entry_box), alignof(entry_box));
  return status_to_c(s);
}

tessera_status dir_remove(void* context, const char* name) {
  return status_to_c(storage_directory_remove(state_of(context).dir, name));
}
tessera_status dir_rename(void* context, const char* from, const char* to) {
  return status_to_c(storage_directory_rename(state_of(context).dir, from, to));
}

// The C visit behind a C++ listing of the C++ directory (on the listing caller's stack).
struct cxx_visit_pair {
  tessera_storage_visit visit;
  void* arg;
};
status cxx_visit(void* arg, const char* name) noexcept {
  const cxx_visit_pair& p = *static_cast<const cxx_visit_pair*>(arg);
  const tessera_status c = p.visit(p.arg, name);
  return error(static_cast<errc>(c.code), c.message != nullptr ? c.message : "");
}
tessera_status dir_list(void* context, tessera_storage_visit visit, void* arg) {
  if (visit == nullptr) return status_to_c(make_error(errc::invalid_argument, TESSERA_MSG("directory: null visit")));
  cxx_visit_pair p{visit, arg};
  return status_to_c(storage_directory_list(state_of(context).dir, cxx_visit, &p));
}

}  // namespace

tessera_storage storage_to_c(const storage* s) noexcept {
  tessera_storage c;
  c.read = c_read;
  c.write = s->write != nullptr ? c_write : nullptr;
  c.size = c_size;
  c.truncate = s->truncate != nullptr ? c_truncate : nullptr;
  c.sync = s->sync != nullptr ? c_sync : nullptr;
  c.view = s->view != nullptr ? c_view : nullptr;
  c.context = const_cast<storage*>(s);
  c.reads_begin = s->reads_begin != nullptr ? c_reads_begin : nullptr;
  c.reads_end = s->reads_end != nullptr ? c_reads_end : nullptr;
  return c;
}

tessera_storage_directory directory_to_c(directory_to_c_state* s) noexcept {
  return tessera_storage_directory{dir_open, dir_close, dir_remove, dir_rename, s,
                                   s->dir.list != nullptr ? dir_list : nullptr};
}

}  // namespace tessera
