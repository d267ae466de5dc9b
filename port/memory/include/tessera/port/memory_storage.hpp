// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Storages in RAM: a caller's fixed buffer (no heap at all), a read-only view of bytes, a buffer that grows
/// through an allocator, and a small directory of growable buffers (for sparse frames). Freestanding like the
/// core: usable on bare metal.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/allocator.hpp"
#include "tessera/error.hpp"
#include "tessera/fixed_buffer.hpp"  // fixed_buffer: the core's, offered here with the other RAM storages
#include "tessera/span.hpp"
#include "tessera/storage.hpp"
#include "tessera/storage_directory.hpp"

namespace tessera {

/// Read-only bytes (e.g. a frame received in a message), read in place.
struct const_buffer {
  const uint8_t* data = nullptr;  ///< the bytes (the caller's: they must outlive the storage)
  size_t size = 0;                ///< their count
};
/// The read-only storage over b (its context is &b: b must outlive it). Has a view; no write or truncate.
[[nodiscard]] storage const_buffer_storage(const_buffer& b) noexcept;

/// A buffer that grows through an allocator (geometrically) up to max_size. Not copyable; movable.
class growable_buffer {
 public:
  growable_buffer() noexcept = default;  ///< empty, without an allocator: call growable_buffer_init
  growable_buffer(const growable_buffer&) = delete;
  growable_buffer& operator=(const growable_buffer&) = delete;
  growable_buffer(growable_buffer&& o) noexcept;  ///< takes o's memory; o is left empty
  growable_buffer& operator=(growable_buffer&& o) noexcept;  ///< frees this one's memory, then takes o's
  ~growable_buffer();  ///< growable_buffer_release

  [[nodiscard]] bytes_view bytes() const noexcept { return bytes_view(data_, size_); }  ///< the content
  [[nodiscard]] size_t size() const noexcept { return size_; }  ///< the content's size in bytes

 public:  // internal state: use the functions below
  /// \privatesection
  friend struct growable_buffer_access;
  allocator alloc_{};
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t max_size_ = SIZE_MAX;
};

/// Empties b and makes it grow from alloc (which must outlive it), up to max_size bytes (errc::no_space past it).
void growable_buffer_init(growable_buffer& b, const allocator& alloc, size_t max_size = SIZE_MAX) noexcept;
/// Makes room for `capacity` bytes up front (one allocation).
[[nodiscard]] status growable_buffer_reserve(growable_buffer& b, size_t capacity) noexcept;
/// Frees the memory; the buffer is empty again.
void growable_buffer_release(growable_buffer& b) noexcept;
/// The storage over b (context &b). Has a view (valid until the next write, truncate or lend) and lends room past
/// its end (storage::lend: the buffer grows as a write there would, its size does not).
[[nodiscard]] storage growable_buffer_storage(growable_buffer& b) noexcept;

/// Bytes taken out of a growable buffer: the caller owns them and frees them with growable_bytes_free.
struct growable_bytes {
  uint8_t* data = nullptr;  ///< the content (null when empty)
  size_t size = 0;          ///< bytes of content
  size_t capacity = 0;      ///< bytes allocated at data (what the allocator is given back)
  allocator alloc{};        ///< where they came from
};
/// Hands b's memory to the caller (no copy); b is left empty, as after growable_buffer_release.
[[nodiscard]] growable_bytes growable_buffer_take(growable_buffer& b) noexcept;
/// Frees what growable_buffer_take handed out; bytes is left empty.
void growable_bytes_free(growable_bytes& bytes) noexcept;

/// A directory of up to `max_entries` named growable buffers, all from one allocator. Not copyable.
struct memory_directory_entry;
/// A directory of up to `max_entries` named growable buffers, all from one allocator. Not copyable.
class memory_directory {
 public:
  memory_directory() noexcept = default;  ///< no entries: call memory_directory_init
  memory_directory(const memory_directory&) = delete;
  memory_directory& operator=(const memory_directory&) = delete;
  ~memory_directory();  ///< memory_directory_release

 public:  // internal state: use the functions below
  /// \privatesection
  friend struct memory_directory_access;
  allocator alloc_{};
  memory_directory_entry* entries_ = nullptr;
  uint32_t max_entries_ = 0;
  size_t max_entry_size_ = SIZE_MAX;
};

/// Makes d an empty directory of at most max_entries entries, each at most max_entry_size bytes, from alloc
/// (which must outlive d). Errors: invalid_argument (max_entries 0), overflow, out_of_memory.
[[nodiscard]] status memory_directory_init(memory_directory& d, const allocator& alloc, uint32_t max_entries,
                                           size_t max_entry_size = SIZE_MAX) noexcept;
/// Frees every entry and the directory's table; d is empty again.
void memory_directory_release(memory_directory& d) noexcept;
/// The directory interface over d (context &d); it lists entries in slot order.
[[nodiscard]] storage_directory memory_directory_interface(memory_directory& d) noexcept;
/// Entry `name`'s bytes (empty view when missing), and the number of entries.
[[nodiscard]] bytes_view memory_directory_find(const memory_directory& d, const char* name) noexcept;
/// The number of entries.
[[nodiscard]] uint32_t memory_directory_count(const memory_directory& d) noexcept;
/// Entry i's name (nullptr past the end or for a free slot), in slot order.
[[nodiscard]] const char* memory_directory_name(const memory_directory& d, uint32_t slot) noexcept;
/// The number of slots (max_entries): memory_directory_name's `slot` is below it.
[[nodiscard]] uint32_t memory_directory_slots(const memory_directory& d) noexcept;

}  // namespace tessera
