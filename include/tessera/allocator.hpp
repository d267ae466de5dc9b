// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Every byte the core uses comes from an allocator the caller passes (zstd's customMem, with alignment).
///
/// The threading contract. The core calls an allocator only from the thread that called the API function it
/// was handed to, and never two of its calls at once: codec contexts and per-worker scratch are made on that
/// thread before any executor task runs, and tasks never allocate or free. So a bump arena or a firmware heap
/// that is not thread-safe is fine, even with a thread pool as the executor. One handle (array, frame, chunk
/// encoder or decoder) takes one call at a time; distinct handles may be used at the same time from different
/// threads as long as they do not share an allocator that is not thread-safe (or the caller serializes them).
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "tessera/cxx.hpp"

#include "tessera/error.hpp"

namespace tessera {

/// Where the core's memory comes from: two callbacks (and an optional third) with a context.
struct allocator {
  /// Returns nullptr when it cannot (or will not) satisfy the request. alignment is a power of two.
  void* (*allocate)(void* context, size_t size, size_t alignment) = nullptr;
  /// Receives exactly the size and alignment the block was allocated with. Never called with nullptr.
  void (*deallocate)(void* context, void* block, size_t size, size_t alignment) = nullptr;
  void* context = nullptr;  ///< passed to every callback
  /// Optional (null: allocate, copy, deallocate). Resizes a block from allocate to new_size, keeping its first
  /// min(old_size, new_size) bytes and its alignment; returns nullptr (the block untouched) when it cannot. Lets
  /// a growing buffer avoid copying itself (realloc can move pages instead of bytes).
  void* (*reallocate)(void* context, void* block, size_t old_size, size_t new_size, size_t alignment) = nullptr;
};

/// An allocator that refuses every request: for code paths that must not allocate.
[[nodiscard]] allocator allocator_refusing() noexcept;

/// Calls a.allocate; nullptr without calling it when size is 0 or the allocator has no allocate.
[[nodiscard]] inline void* allocator_allocate(const allocator& a, size_t size, size_t alignment) noexcept {
  if (a.allocate == nullptr || size == 0) return nullptr;
  return a.allocate(a.context, size, alignment);
}

/// Calls a.deallocate with the block's size and alignment; does nothing for a null block.
inline void allocator_deallocate(const allocator& a, void* block, size_t size, size_t alignment) noexcept {
  if (block != nullptr && a.deallocate != nullptr) a.deallocate(a.context, block, size, alignment);
}

/// Resizes `block` (old_size bytes, or null) to new_size: through a.reallocate when the allocator has one, else
/// by allocating, copying `keep` bytes and freeing. Returns nullptr, with the block untouched, when it cannot.
[[nodiscard]] void* allocator_reallocate(const allocator& a, void* block, size_t old_size, size_t new_size,
                                         size_t alignment, size_t keep) noexcept;

/// A bump allocator over a caller's buffer: zero-heap use ("estimate the size, then init in the caller's buffer").
/// Freeing the most recent block gives its bytes back; other frees are no-ops until arena_reset.
struct arena {
  uint8_t* base = nullptr;  ///< the caller's buffer
  size_t capacity = 0;      ///< its size in bytes
  size_t used = 0;          ///< bytes handed out (alignment padding included)
  size_t high_water = 0;    ///< the most bytes ever in use: the capacity this workload needed
};

/// Makes `a` bump-allocate from `buffer` (capacity bytes, which the caller keeps alive and owns).
void arena_init(arena& a, void* buffer, size_t capacity) noexcept;
/// Frees every block at once (used becomes 0; high_water is kept).
void arena_reset(arena& a) noexcept;
/// An allocator over `a` (which must outlive it). Not thread-safe, which the core never needs (see above).
[[nodiscard]] allocator arena_allocator(arena& a) noexcept;

/// Owns `count` elements of trivially-copyable T from an allocator; frees them when it goes out of scope.
template <class T>
class owned_array {
 public:
  owned_array() noexcept = default;  ///< empty: no storage
  owned_array(const owned_array&) = delete;
  owned_array& operator=(const owned_array&) = delete;
  /// Takes o's storage; o becomes empty.
  owned_array(owned_array&& o) noexcept : alloc_(o.alloc_), data_(o.data_), count_(o.count_) {
    o.data_ = nullptr;
    o.count_ = 0;
  }
  /// Frees this storage and takes o's; o becomes empty.
  owned_array& operator=(owned_array&& o) noexcept {
    if (this != &o) {
      reset();
      alloc_ = o.alloc_;
      data_ = tessera::cxx::exchange(o.data_, nullptr);
      count_ = tessera::cxx::exchange(o.count_, 0);
    }
    return *this;
  }
  ~owned_array() { reset(); }  ///< frees the storage

  /// Allocates `count` elements (uninitialized). A request of zero elements succeeds with no storage.
  [[nodiscard]] status allocate(const allocator& a, size_t count) noexcept {
    reset();
    if (count == 0) return ok_status();
    if (count > SIZE_MAX / sizeof(T)) return make_error(errc::overflow, TESSERA_MSG("allocation size overflows size_t"));
    void* p = allocator_allocate(a, count * sizeof(T), alignof(T));
    if (p == nullptr) return make_error(errc::out_of_memory, TESSERA_MSG("allocator refused a request"));
    alloc_ = a;
    data_ = static_cast<T*>(p);
    count_ = count;
    return ok_status();
  }
  /// Frees the storage (back to the allocator it came from); the array becomes empty.
  void reset() noexcept {
    if (data_ != nullptr) allocator_deallocate(alloc_, data_, count_ * sizeof(T), alignof(T));
    data_ = nullptr;
    count_ = 0;
  }

  [[nodiscard]] T* data() const noexcept { return data_; }     ///< the elements; null when empty
  [[nodiscard]] size_t size() const noexcept { return count_; }  ///< the number of elements
  T& operator[](size_t i) const noexcept { return data_[i]; }    ///< element i (unchecked)

 private:
  allocator alloc_{};
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace tessera
