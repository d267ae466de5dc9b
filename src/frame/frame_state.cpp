// SPDX-License-Identifier: BSD-3-Clause
// The frame's in-memory state: allocation from the caller's allocator, storage access, sparse entries.
#include <string.h>
#include "tessera/cxx.hpp"

#include "frame/frame_internal.hpp"

namespace tessera {

status storage_directory_open(const storage_directory& d, const char* name, storage_open mode, storage* out) noexcept {
  if (d.open == nullptr) return make_error(errc::unsupported, TESSERA_MSG("storage_directory: no open callback"));
  return d.open(d.context, name, mode, out);
}
status storage_directory_close(const storage_directory& d, storage* s) noexcept {
  if (d.close == nullptr) return ok_status();
  return d.close(d.context, s);
}
status storage_directory_remove(const storage_directory& d, const char* name) noexcept {
  if (d.remove == nullptr) return make_error(errc::unsupported, TESSERA_MSG("storage_directory: no remove callback"));
  return d.remove(d.context, name);
}
status storage_directory_rename(const storage_directory& d, const char* from, const char* to) noexcept {
  if (d.rename == nullptr) return make_error(errc::unsupported, TESSERA_MSG("storage_directory: no rename callback"));
  return d.rename(d.context, from, to);
}
status storage_directory_list(const storage_directory& d, storage_directory_visit visit, void* arg) noexcept {
  if (d.list == nullptr) return make_error(errc::unsupported, TESSERA_MSG("storage_directory: no list callback"));
  if (visit == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("storage_directory: no visit function"));
  return d.list(d.context, visit, arg);
}

status frame_sparse_chunk_name(int64_t id, char* out, size_t out_size) noexcept {
  if (id < 0 || id > static_cast<int64_t>(UINT32_MAX))
    return make_error(errc::out_of_range, TESSERA_MSG("sframe: chunk number outside the 8 hex digits of its name"));
  if (out == nullptr || out_size < 15) return make_error(errc::buffer_too_small, TESSERA_MSG("sframe: chunk name needs 15 bytes"));
  static constexpr char kHex[] = "0123456789ABCDEF";
  const uint32_t v = static_cast<uint32_t>(id);
  for (int i = 0; i < 8; ++i) out[i] = kHex[(v >> (28 - 4 * i)) & 0xf];
  memcpy(out + 8, ".chunk", 7);
  return ok_status();
}

namespace detail {

result<frame_state*> state_new(const allocator& alloc) noexcept {
  void* p = allocator_allocate(alloc, sizeof(frame_state), alignof(frame_state));
  if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused the frame state"));
  auto* s = new (tessera::cxx::place, p) frame_state;
  s->alloc = alloc;
  return s;
}

void state_free(frame_state* s) noexcept {
  const allocator a = s->alloc;
  if (s->header != nullptr) allocator_deallocate(a, s->header, s->header_cap, 16);
  if (s->vlmetas != nullptr) {
    for (uint32_t i = 0; i < s->nvlmetas; ++i)
      if (s->vlmetas[i].data != nullptr) allocator_deallocate(a, s->vlmetas[i].data, s->vlmetas[i].content_len, 1);
    allocator_deallocate(a, s->vlmetas, sizeof(frame_meta_entry) * s->vlcap, alignof(frame_meta_entry));
  }
  if (s->chunks != nullptr)
    allocator_deallocate(a, s->chunks, sizeof(frame_chunk_entry) * static_cast<size_t>(s->chunk_cap), alignof(frame_chunk_entry));
  if (s->doomed != nullptr) allocator_deallocate(a, s->doomed, sizeof(int64_t) * s->doomed_cap, alignof(int64_t));
  if (s->fresh != nullptr) allocator_deallocate(a, s->fresh, sizeof(int64_t) * s->fresh_cap, alignof(int64_t));
  if (s->scratch != nullptr) allocator_deallocate(a, s->scratch, s->scratch_cap, 16);
  if (s->worker_scratch != nullptr) allocator_deallocate(a, s->worker_scratch, s->worker_scratch_cap, 16);
  if (s->starts_sorted != nullptr) allocator_deallocate(a, s->starts_sorted, s->starts_sorted_cap, 16);
  index_lazy_release(*s);
  space_release(*s);
  s->~frame_state();
  allocator_deallocate(a, s, sizeof(frame_state), alignof(frame_state));
}

status state_budget_check(const frame_state& s, uint64_t bytes, const char* what) noexcept {
  if (bytes > s.options.max_alloc) return make_error(errc::resource_limit, what);
  return ok_status();
}

status state_buffer_reserve(frame_state& s, uint8_t** buf, size_t* cap, size_t need, const char* what) noexcept {
  if (need <= *cap) return ok_status();
  TESSERA_TRY(state_budget_check(s, need, what));
  size_t want = *cap * 2 > need ? *cap * 2 : need;
  if (want > s.options.max_alloc) want = need;
  // The header keeps its exact size (so arenas are not wasted); scratch buffers grow geometrically.
  if (buf == &s.header) want = need;
  auto* p = static_cast<uint8_t*>(allocator_allocate(s.alloc, want, 16));
  if (p == nullptr && want != need) {
    want = need;
    p = static_cast<uint8_t*>(allocator_allocate(s.alloc, want, 16));
  }
  if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused a buffer"));
  if (*buf != nullptr) {
    memcpy(p, *buf, *cap);
    allocator_deallocate(s.alloc, *buf, *cap, 16);
  }
  *buf = p;
  *cap = want;
  return ok_status();
}

status state_chunks_reserve(frame_state& s, int64_t count) noexcept {
  if (count <= s.chunk_cap) return ok_status();
  // GCOVR_EXCL_START: an index chunk's int32 nbytes holds at most 2^28 entries: only a 32-bit size_t gets here.
  if (count > static_cast<int64_t>(SIZE_MAX / sizeof(frame_chunk_entry)) / 2)
    return make_error(errc::overflow, TESSERA_MSG("frame: too many chunks"));
  // GCOVR_EXCL_STOP
  TESSERA_TRY(state_budget_check(s, sizeof(frame_chunk_entry) * static_cast<uint64_t>(count),
                                 TESSERA_MSG("frame: the chunk table (24 bytes a chunk) exceeds max_alloc")));
  int64_t want = s.chunk_cap * 2 > count ? s.chunk_cap * 2 : count;
  if (want < 16) want = 16;
  if (sizeof(frame_chunk_entry) * static_cast<uint64_t>(want) > s.options.max_alloc) want = count;
  void* p = allocator_allocate(s.alloc, sizeof(frame_chunk_entry) * static_cast<size_t>(want), alignof(frame_chunk_entry));
  if (p == nullptr && want != count) {
    want = count;
    p = allocator_allocate(s.alloc, sizeof(frame_chunk_entry) * static_cast<size_t>(want), alignof(frame_chunk_entry));
  }
  if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused the chunk index"));
  if (s.chunks != nullptr) {
    memcpy(p, s.chunks, sizeof(frame_chunk_entry) * static_cast<size_t>(s.nchunks));
    allocator_deallocate(s.alloc, s.chunks, sizeof(frame_chunk_entry) * static_cast<size_t>(s.chunk_cap),
                         alignof(frame_chunk_entry));
  }
  s.chunks = static_cast<frame_chunk_entry*>(p);
  s.chunk_cap = want;
  return ok_status();
}

status state_ids_push(frame_state& s, int64_t** ids, uint32_t* n, uint32_t* cap, int64_t id) noexcept {
  if (*n == *cap) {
    if (*cap > UINT32_MAX / 2 - 8) return make_error(errc::overflow, TESSERA_MSG("frame: too many pending entries"));
    const uint32_t want = *cap == 0 ? 16 : *cap * 2;
    void* p = allocator_allocate(s.alloc, sizeof(int64_t) * want, alignof(int64_t));
    if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("frame: allocator refused the pending entry list"));
    if (*ids != nullptr) {
      memcpy(p, *ids, sizeof(int64_t) * *n);
      allocator_deallocate(s.alloc, *ids, sizeof(int64_t) * *cap, alignof(int64_t));
    }
    *ids = static_cast<int64_t*>(p);
    *cap = want;
  }
  (*ids)[(*n)++] = id;
  return ok_status();
}

frame_reads_scope::frame_reads_scope(const frame& f) noexcept : s_(frame_access::get(f)) {
  if (s_ == nullptr || s_->sparse) {
    s_ = nullptr;
    return;
  }
  if (s_->st.reads_begin != nullptr) s_->st.reads_begin(s_->st.context);
  ++s_->reads_open;
}

frame_reads_scope::~frame_reads_scope() {
  if (s_ == nullptr) return;
  --s_->reads_open;
  if (s_->st.reads_end != nullptr) s_->st.reads_end(s_->st.context);
}

bytes_view frame_state_view(const frame_state& s, const storage& st) noexcept {
  if (st.reads_begin != nullptr && s.reads_open == 0) return bytes_view();
  return storage_view(st);
}

result<bytes_view> frame_bytes(frame_state& s, uint64_t pos, size_t n) noexcept {
  if (pos > UINT64_MAX - s.base || s.base + pos > UINT64_MAX - n)
    return make_error(errc::overflow, TESSERA_MSG("frame: position overflows"));
  const uint64_t at = s.base + pos;
  const bytes_view v = frame_state_view(s, s.st);
  if (!v.empty()) {
    if (at > v.size() || n > v.size() - at) return make_error(errc::truncated, TESSERA_MSG("frame: range past the storage's end"));
    return bytes_view(v.data() + at, n);
  }
  TESSERA_TRY(state_buffer_reserve(s, &s.scratch, &s.scratch_cap, n));
  TESSERA_TRY(storage_read(s.st, at, bytes_mut(s.scratch, n)));
  return bytes_view(s.scratch, n);
}

status frame_read_into(frame_state& s, uint64_t pos, bytes_mut dst) noexcept {
  if (pos > UINT64_MAX - s.base) return make_error(errc::overflow, TESSERA_MSG("frame: position overflows"));
  return storage_read(s.st, s.base + pos, dst);
}

status frame_write(frame_state& s, uint64_t pos, bytes_view src) noexcept {
  if (pos > UINT64_MAX - s.base) return make_error(errc::overflow, TESSERA_MSG("frame: position overflows"));
  // After a failed sync nothing this handle writes can be trusted to land (every internal path too: a tidy's or
  // a compaction's commit goes no further).
  if (s.poisoned != errc::ok)
    return make_error(s.poisoned, TESSERA_MSG("frame: a sync failed earlier: writes since the last commit may be lost; reopen the frame"));
  return storage_write(s.st, s.base + pos, src);
}

sparse_entry::~sparse_entry() { (void)close(); }

status sparse_entry::open_name(frame_state& state, const char* name, storage_open mode) noexcept {
  TESSERA_TRY(close());
  s = &state;
  TESSERA_TRY(storage_directory_open(state.dir, name, mode, &st));
  open = true;
  return ok_status();
}

status sparse_entry::close() noexcept {
  if (!open) return ok_status();
  open = false;
  return storage_directory_close(s->dir, &st);
}

}  // namespace detail
}  // namespace tessera
