// SPDX-License-Identifier: BSD-3-Clause
#include "test_allocators.hpp"

#include <cstdlib>
#include <cstring>

namespace tessera::test {

namespace {

// A header before each block records the size, so a wrong size passed to deallocate is caught.
constexpr size_t kHeader = 64;

void* system_allocate(void*, size_t size, size_t alignment) noexcept {
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  const size_t rounded = (size + alignment - 1) / alignment * alignment;
  return ::aligned_alloc(alignment, rounded);  // picolibc declares it only in the global namespace
}

void system_deallocate(void*, void* block, size_t, size_t) noexcept { std::free(block); }

void* counting_allocate(void* context, size_t size, size_t alignment) noexcept {
  auto& c = *static_cast<counting_allocator*>(context);
  ++c.requests;
  if (c.requests == c.fail_at || (c.fail_after && c.requests >= c.fail_at)) return nullptr;
  if (alignment > kHeader) return nullptr;  // the core never asks for more than a cache line
  auto* raw = static_cast<uint8_t*>(allocator_allocate(c.upstream, size + kHeader, kHeader));
  if (raw == nullptr) return nullptr;
  std::memcpy(raw, &size, sizeof size);
  ++c.allocations;
  ++c.live_blocks;
  c.live_bytes += size;
  if (c.live_bytes > c.high_water_bytes) c.high_water_bytes = c.live_bytes;
  return raw + kHeader;
}

void counting_deallocate(void* context, void* block, size_t size, size_t) noexcept {
  auto& c = *static_cast<counting_allocator*>(context);
  auto* raw = static_cast<uint8_t*>(block) - kHeader;
  size_t recorded = 0;
  std::memcpy(&recorded, raw, sizeof recorded);
  if (recorded != size) ++c.mismatched_frees;
  --c.live_blocks;
  c.live_bytes -= recorded;
  allocator_deallocate(c.upstream, raw, recorded + kHeader, kHeader);
}

}  // namespace

allocator system_allocator() noexcept { return allocator{system_allocate, system_deallocate, nullptr}; }

allocator counting_allocator::get() noexcept { return allocator{counting_allocate, counting_deallocate, this}; }

}  // namespace tessera::test
