// SPDX-License-Identifier: BSD-3-Clause
// RAM storages: read-only views, allocator-grown buffers and a directory of them (fixed caller buffers: the core).
#include "tessera/port/memory_storage.hpp"

#include <string.h>
#include "tessera/cxx.hpp"

namespace tessera {

// ---- Read-only bytes -----------------------------------------------------------------------------------------

namespace {

status range_read(const uint8_t* data, size_t size, uint64_t offset, bytes_mut dst) noexcept {
  if (offset > size || dst.size() > size - offset) return make_error(errc::truncated, TESSERA_MSG("memory: read past the end"));
  memcpy(dst.data(), data + offset, dst.size());
  return ok_status();
}

status const_read(void* c, uint64_t offset, bytes_mut dst) noexcept {
  auto* b = static_cast<const_buffer*>(c);
  return range_read(b->data, b->size, offset, dst);
}
status const_size(void* c, uint64_t* out) noexcept {
  *out = static_cast<const_buffer*>(c)->size;
  return ok_status();
}
bytes_view const_view(void* c) noexcept {
  auto* b = static_cast<const_buffer*>(c);
  return bytes_view(b->data, b->size);
}

}  // namespace

storage const_buffer_storage(const_buffer& b) noexcept {
  return storage{const_read, nullptr /* write */, const_size, nullptr /* truncate */, nullptr /* sync */, const_view, &b};
}

// ---- Growable buffer -----------------------------------------------------------------------------------------

struct growable_buffer_access {
  static status grow(growable_buffer& b, size_t need) noexcept {
    if (need <= b.capacity_) return ok_status();
    if (need > b.max_size_) return make_error(errc::no_space, TESSERA_MSG("memory: buffer would exceed its maximum size"));
    size_t want = b.capacity_ > SIZE_MAX / 2 ? SIZE_MAX : b.capacity_ * 2;
    if (want < need) want = need;
    if (want < 64) want = 64;
    if (want > b.max_size_) want = b.max_size_;
    // Through the allocator's reallocate when it has one: no copy of what the buffer holds (realloc remaps).
    auto* p = static_cast<uint8_t*>(allocator_reallocate(b.alloc_, b.data_, b.capacity_, want, 16, b.size_));
    if (p == nullptr && want > need) {
      want = need;
      p = static_cast<uint8_t*>(allocator_reallocate(b.alloc_, b.data_, b.capacity_, want, 16, b.size_));
    }
    if (p == nullptr) return make_error(errc::no_space, TESSERA_MSG("memory: allocator refused to grow the buffer"));
    b.data_ = p;
    b.capacity_ = want;
    return ok_status();
  }
  static status read(void* c, uint64_t offset, bytes_mut dst) noexcept {
    auto* b = static_cast<growable_buffer*>(c);
    return range_read(b->data_, b->size_, offset, dst);
  }
  static status write(void* c, uint64_t offset, bytes_view src) noexcept {
    auto* b = static_cast<growable_buffer*>(c);
    if (offset > SIZE_MAX - src.size()) return make_error(errc::no_space, TESSERA_MSG("memory: write past the address space"));
    const size_t end = static_cast<size_t>(offset) + src.size();
    // Bytes built where lend put them are in place: nothing to copy (and no growth: the lend made the room).
    const bool in_place = end <= b->capacity_ &&
                          reinterpret_cast<uintptr_t>(src.data()) == reinterpret_cast<uintptr_t>(b->data_) + offset;
    TESSERA_TRY(grow(*b, end));
    // The copy before the gap's zeros: lent bytes written elsewhere may lie in that gap.
    if (!in_place) memmove(b->data_ + offset, src.data(), src.size());
    if (offset > b->size_) memset(b->data_ + b->size_, 0, static_cast<size_t>(offset) - b->size_);
    if (end > b->size_) b->size_ = end;
    return ok_status();
  }
  static status size(void* c, uint64_t* out) noexcept {
    *out = static_cast<growable_buffer*>(c)->size_;
    return ok_status();
  }
  static status truncate(void* c, uint64_t size) noexcept {
    auto* b = static_cast<growable_buffer*>(c);
    if (size > SIZE_MAX) return make_error(errc::no_space, TESSERA_MSG("memory: size past the address space"));
    TESSERA_TRY(grow(*b, static_cast<size_t>(size)));
    if (size > b->size_) memset(b->data_ + b->size_, 0, static_cast<size_t>(size) - b->size_);
    b->size_ = static_cast<size_t>(size);
    return ok_status();
  }
  static bytes_view view(void* c) noexcept {
    auto* b = static_cast<growable_buffer*>(c);
    return bytes_view(b->data_, b->size_);
  }
  // Room past the end, grown as a write would grow it (the bytes a later write ends at are then already there).
  static bytes_mut lend(void* c, uint64_t offset, size_t n) noexcept {
    auto* b = static_cast<growable_buffer*>(c);
    if (offset < b->size_ || offset > SIZE_MAX - n || n == 0) return bytes_mut{};
    if (!grow(*b, static_cast<size_t>(offset) + n).ok()) return bytes_mut{};
    return bytes_mut(b->data_ + offset, n);
  }
};

growable_buffer::growable_buffer(growable_buffer&& o) noexcept
    : alloc_(o.alloc_), data_(o.data_), size_(o.size_), capacity_(o.capacity_), max_size_(o.max_size_) {
  o.data_ = nullptr;
  o.size_ = 0;
  o.capacity_ = 0;
}

growable_buffer& growable_buffer::operator=(growable_buffer&& o) noexcept {
  if (this != &o) {
    growable_buffer_release(*this);
    alloc_ = o.alloc_;
    data_ = tessera::cxx::exchange(o.data_, nullptr);
    size_ = tessera::cxx::exchange(o.size_, 0);
    capacity_ = tessera::cxx::exchange(o.capacity_, 0);
    max_size_ = o.max_size_;
  }
  return *this;
}

growable_buffer::~growable_buffer() { growable_buffer_release(*this); }

void growable_buffer_init(growable_buffer& b, const allocator& alloc, size_t max_size) noexcept {
  growable_buffer_release(b);
  b.alloc_ = alloc;
  b.max_size_ = max_size;
}

status growable_buffer_reserve(growable_buffer& b, size_t capacity) noexcept {
  return growable_buffer_access::grow(b, capacity);
}

void growable_buffer_release(growable_buffer& b) noexcept {
  if (b.data_ != nullptr) allocator_deallocate(b.alloc_, b.data_, b.capacity_, 16);
  b.data_ = nullptr;
  b.size_ = 0;
  b.capacity_ = 0;
}

growable_bytes growable_buffer_take(growable_buffer& b) noexcept {
  growable_bytes out{b.data_, b.size_, b.capacity_, b.alloc_};
  b.data_ = nullptr;
  b.size_ = 0;
  b.capacity_ = 0;
  return out;
}

void growable_bytes_free(growable_bytes& bytes) noexcept {
  if (bytes.data != nullptr) allocator_deallocate(bytes.alloc, bytes.data, bytes.capacity, 16);  // grow's alignment
  bytes.data = nullptr;
  bytes.size = 0;
  bytes.capacity = 0;
}

storage growable_buffer_storage(growable_buffer& b) noexcept {
  using a = growable_buffer_access;
  storage s{a::read, a::write, a::size, a::truncate, nullptr /* sync */, a::view, &b};
  s.lend = a::lend;
  return s;
}

// ---- Directory -----------------------------------------------------------------------------------------------

struct memory_directory_entry {
  bool used = false;
  char name[kStorageNameMax + 1] = {};
  growable_buffer buffer;
};

struct memory_directory_access {
  static bool same(const char* a, const char* b) noexcept {
    size_t i = 0;
    for (; i <= kStorageNameMax && a[i] != 0; ++i)
      if (a[i] != b[i]) return false;
    return b[i] == 0;
  }
  static memory_directory_entry* find(const memory_directory& d, const char* name) noexcept {
    if (name == nullptr) return nullptr;
    for (uint32_t i = 0; i < d.max_entries_; ++i)
      if (d.entries_[i].used && same(d.entries_[i].name, name)) return &d.entries_[i];
    return nullptr;
  }
  static size_t name_len(const char* name) noexcept {
    size_t n = 0;
    while (n <= kStorageNameMax && name[n] != 0) ++n;
    return n;
  }
  static status open(void* c, const char* name, storage_open mode, storage* out) noexcept {
    auto* d = static_cast<memory_directory*>(c);
    if (name == nullptr || out == nullptr) return make_error(errc::invalid_argument, TESSERA_MSG("memory directory: null name"));
    const size_t n = name_len(name);
    if (n == 0 || n > kStorageNameMax) return make_error(errc::invalid_argument, TESSERA_MSG("memory directory: bad entry name"));
    memory_directory_entry* e = find(*d, name);
    if (e == nullptr) {
      if (mode != storage_open::replace) return make_error(errc::io, TESSERA_MSG("memory directory: no such entry"));
      for (uint32_t i = 0; i < d->max_entries_ && e == nullptr; ++i)
        if (!d->entries_[i].used) e = &d->entries_[i];
      if (e == nullptr) return make_error(errc::no_space, TESSERA_MSG("memory directory: every entry slot is used"));
      e->used = true;
      memcpy(e->name, name, n + 1);
      growable_buffer_init(e->buffer, d->alloc_, d->max_entry_size_);
    } else if (mode == storage_open::replace) {
      growable_buffer_release(e->buffer);
    }
    *out = growable_buffer_storage(e->buffer);
    if (mode == storage_open::read) {
      out->write = nullptr;
      out->truncate = nullptr;
      out->lend = nullptr;
    }
    return ok_status();
  }
  static status close(void*, storage* s) noexcept {
    if (s != nullptr) *s = storage{};
    return ok_status();
  }
  static status remove(void* c, const char* name) noexcept {
    auto* d = static_cast<memory_directory*>(c);
    memory_directory_entry* e = find(*d, name);
    if (e == nullptr) return make_error(errc::io, TESSERA_MSG("memory directory: no such entry to remove"));
    growable_buffer_release(e->buffer);
    e->used = false;
    e->name[0] = 0;
    return ok_status();
  }
  static status rename(void* c, const char* from, const char* to) noexcept {
    auto* d = static_cast<memory_directory*>(c);
    memory_directory_entry* src = find(*d, from);
    if (src == nullptr) return make_error(errc::io, TESSERA_MSG("memory directory: no such entry to rename"));
    const size_t n = to == nullptr ? 0 : name_len(to);
    if (n == 0 || n > kStorageNameMax) return make_error(errc::invalid_argument, TESSERA_MSG("memory directory: bad entry name"));
    memory_directory_entry* dst = find(*d, to);
    if (dst == src) return ok_status();
    if (dst != nullptr) {
      growable_buffer_release(dst->buffer);
      dst->used = false;
      dst->name[0] = 0;
    }
    memcpy(src->name, to, n + 1);
    return ok_status();
  }
  // Slot order; each name is copied out first, so visit may remove its entry (the slot just empties).
  static status list(void* c, storage_directory_visit visit, void* arg) noexcept {
    auto* d = static_cast<memory_directory*>(c);
    char name[kStorageNameMax + 1];
    for (uint32_t i = 0; i < d->max_entries_; ++i) {
      if (!d->entries_[i].used) continue;
      memcpy(name, d->entries_[i].name, sizeof name);
      TESSERA_TRY(visit(arg, name));
    }
    return ok_status();
  }
};

memory_directory::~memory_directory() { memory_directory_release(*this); }

status memory_directory_init(memory_directory& d, const allocator& alloc, uint32_t max_entries,
                             size_t max_entry_size) noexcept {
  memory_directory_release(d);
  if (max_entries == 0) return make_error(errc::invalid_argument, TESSERA_MSG("memory directory: no entries"));
  // Divided by the count, not the entry size: on 64-bit targets a 32-bit count can never overflow, and clang
  // rejects a comparison it knows is always false.
  if (sizeof(memory_directory_entry) > SIZE_MAX / max_entries)
    return make_error(errc::overflow, TESSERA_MSG("memory directory: too many entries"));
  void* p = allocator_allocate(alloc, sizeof(memory_directory_entry) * max_entries, alignof(memory_directory_entry));
  if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("memory directory: allocator refused the entry table"));
  auto* e = static_cast<memory_directory_entry*>(p);
  for (uint32_t i = 0; i < max_entries; ++i) new (tessera::cxx::place, &e[i]) memory_directory_entry;
  d.alloc_ = alloc;
  d.entries_ = e;
  d.max_entries_ = max_entries;
  d.max_entry_size_ = max_entry_size;
  return ok_status();
}

void memory_directory_release(memory_directory& d) noexcept {
  if (d.entries_ == nullptr) return;
  for (uint32_t i = 0; i < d.max_entries_; ++i) d.entries_[i].~memory_directory_entry();
  allocator_deallocate(d.alloc_, d.entries_, sizeof(memory_directory_entry) * d.max_entries_, alignof(memory_directory_entry));
  d.entries_ = nullptr;
  d.max_entries_ = 0;
}

storage_directory memory_directory_interface(memory_directory& d) noexcept {
  using a = memory_directory_access;
  return storage_directory{a::open, a::close, a::remove, a::rename, &d, a::list};
}

bytes_view memory_directory_find(const memory_directory& d, const char* name) noexcept {
  const memory_directory_entry* e = memory_directory_access::find(d, name);
  return e == nullptr ? bytes_view{} : e->buffer.bytes();
}

uint32_t memory_directory_count(const memory_directory& d) noexcept {
  uint32_t n = 0;
  for (uint32_t i = 0; i < d.max_entries_; ++i)
    if (d.entries_[i].used) ++n;
  return n;
}

const char* memory_directory_name(const memory_directory& d, uint32_t slot) noexcept {
  if (slot >= d.max_entries_ || !d.entries_[slot].used) return nullptr;
  return d.entries_[slot].name;
}

uint32_t memory_directory_slots(const memory_directory& d) noexcept { return d.max_entries_; }

}  // namespace tessera
