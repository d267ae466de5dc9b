// SPDX-License-Identifier: BSD-3-Clause
// malloc for alignments malloc already guarantees, posix_memalign beyond (both released with free). On Linux,
// large blocks are mappings of their own that ask for transparent huge pages (see kLargeBlock).
#include "tessera/port/posix_allocator.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tessera {
namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TESSERA_POSIX_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TESSERA_POSIX_SANITIZED 1
#endif

// Sanitized builds keep every block in malloc, where the sanitizers see leaks and overflows.
#if defined(__linux__) && defined(MADV_HUGEPAGE) && defined(MREMAP_MAYMOVE) && !defined(TESSERA_POSIX_SANITIZED)
#define TESSERA_POSIX_LARGE_MAPPINGS 1
#else
#define TESSERA_POSIX_LARGE_MAPPINGS 0
#endif

#if TESSERA_POSIX_LARGE_MAPPINGS
// Blocks of at least this size (a frame growing in memory, a whole array's buffer) are anonymous mappings of
// their own, advised MADV_HUGEPAGE and grown with mremap (pages move, bytes do not). Every first write to a
// fresh 4 KiB page is a page fault: creating issue 15's 256 MB array into memory writes ~130 MB of new frame,
// 32k faults, a quarter of create's CPU time (sys) on the 2-core VM; in 2 MiB pages they are 65. glibc maps
// blocks this large itself anyway (always above 32 MiB), so what changes is the advice, which takes effect where
// the system's THP mode is "madvise" or "always" (elsewhere it is refused, harmlessly). Below this: malloc.
constexpr size_t kLargeBlock = size_t{4} << 20;
constexpr size_t kPage = 4096;

inline bool large(size_t size, size_t alignment) noexcept {
  return size >= kLargeBlock && size <= SIZE_MAX - kPage && alignment <= kPage;
}
inline size_t mapped_size(size_t size) noexcept { return (size + kPage - 1) & ~(kPage - 1); }

void* map_large(size_t size) noexcept {
  void* p = ::mmap(nullptr, mapped_size(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  (void)::madvise(p, mapped_size(size), MADV_HUGEPAGE);
  return p;
}
#endif

void* posix_allocate(void*, size_t size, size_t alignment) {
  if (size == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
#if TESSERA_POSIX_LARGE_MAPPINGS
  if (large(size, alignment)) return map_large(size);
#endif
  if (alignment <= alignof(std::max_align_t)) return std::malloc(size);
  // posix_memalign wants a multiple of sizeof(void*): any power of two above max_align_t is one.
  void* p = nullptr;
  if (::posix_memalign(&p, alignment, size) != 0) return nullptr;
  return p;
}

void posix_deallocate(void*, void* block, size_t size, size_t alignment) {
#if TESSERA_POSIX_LARGE_MAPPINGS
  if (large(size, alignment)) {
    (void)::munmap(block, mapped_size(size));
    return;
  }
#else
  (void)size;
  (void)alignment;
#endif
  std::free(block);
}

// realloc keeps malloc's alignment only; large blocks move by remapping pages, not by copying bytes.
void* posix_reallocate(void*, void* block, size_t old_size, size_t new_size, size_t alignment) {
  if (new_size == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
#if TESSERA_POSIX_LARGE_MAPPINGS
  const bool was_large = large(old_size, alignment);
  const bool now_large = large(new_size, alignment);
  if (was_large && now_large) {  // the advice belongs to the mapping: it moves and grows with it
    void* p = ::mremap(block, mapped_size(old_size), mapped_size(new_size), MREMAP_MAYMOVE);
    return p == MAP_FAILED ? nullptr : p;
  }
  if (was_large || now_large) {  // across the threshold: a new block, the kept bytes copied once
    void* p = posix_allocate(nullptr, new_size, alignment);
    if (p == nullptr) return nullptr;
    std::memcpy(p, block, old_size < new_size ? old_size : new_size);
    posix_deallocate(nullptr, block, old_size, alignment);
    return p;
  }
#else
  (void)old_size;
#endif
  if (alignment > alignof(std::max_align_t)) return nullptr;
  return std::realloc(block, new_size);
}

}  // namespace

allocator posix_allocator() noexcept {
  return allocator{posix_allocate, posix_deallocate, nullptr /* context */, posix_reallocate};
}

}  // namespace tessera
