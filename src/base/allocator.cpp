// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/allocator.hpp"

#include <string.h>

namespace tessera {

namespace {

void* refuse_allocate(void*, size_t, size_t) noexcept { return nullptr; }
void refuse_deallocate(void*, void*, size_t, size_t) noexcept {}

void* arena_allocate(void* context, size_t size, size_t alignment) noexcept {
  auto& a = *static_cast<arena*>(context);
  const uintptr_t base = reinterpret_cast<uintptr_t>(a.base);
  const uintptr_t mask = alignment - 1;
  const uintptr_t start = (base + a.used + mask) & ~mask;
  const size_t offset = static_cast<size_t>(start - base);
  if (offset > a.capacity || size > a.capacity - offset) return nullptr;
  a.used = offset + size;
  if (a.used > a.high_water) a.high_water = a.used;
  return a.base + offset;
}

void arena_deallocate(void* context, void* block, size_t size, size_t) noexcept {
  auto& a = *static_cast<arena*>(context);
  // Only the newest block can be given back; it is the common case for scoped scratch buffers.
  if (static_cast<uint8_t*>(block) + size == a.base + a.used) a.used = static_cast<size_t>(static_cast<uint8_t*>(block) - a.base);
}

// The newest block grows (or shrinks) in place; any other cannot move without a copy the caller makes.
void* arena_reallocate(void* context, void* block, size_t old_size, size_t new_size, size_t) noexcept {
  auto& a = *static_cast<arena*>(context);
  auto* p = static_cast<uint8_t*>(block);
  if (p + old_size != a.base + a.used) return nullptr;
  const size_t offset = static_cast<size_t>(p - a.base);
  if (new_size > a.capacity - offset) return nullptr;
  a.used = offset + new_size;
  if (a.used > a.high_water) a.high_water = a.used;
  return block;
}

}  // namespace

void* allocator_reallocate(const allocator& a, void* block, size_t old_size, size_t new_size, size_t alignment,
                           size_t keep) noexcept {
  if (new_size == 0) return nullptr;
  if (block == nullptr) return allocator_allocate(a, new_size, alignment);
  if (a.reallocate != nullptr) {
    if (void* p = a.reallocate(a.context, block, old_size, new_size, alignment)) return p;
  }
  void* p = allocator_allocate(a, new_size, alignment);
  if (p == nullptr) return nullptr;
  const size_t n = keep < new_size ? keep : new_size;
  if (n > 0) memcpy(p, block, n);
  allocator_deallocate(a, block, old_size, alignment);
  return p;
}

allocator allocator_refusing() noexcept { return allocator{refuse_allocate, refuse_deallocate, nullptr, nullptr}; }

void arena_init(arena& a, void* buffer, size_t capacity) noexcept {
  a.base = static_cast<uint8_t*>(buffer);
  a.capacity = buffer == nullptr ? 0 : capacity;
  a.used = 0;
  a.high_water = 0;
}

void arena_reset(arena& a) noexcept { a.used = 0; }

allocator arena_allocator(arena& a) noexcept { return allocator{arena_allocate, arena_deallocate, &a, arena_reallocate}; }

}  // namespace tessera
