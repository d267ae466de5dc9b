// malloc for alignments malloc already guarantees, posix_memalign beyond (both released with free).
#include "tessera/port/posix_allocator.hpp"

#include <cstddef>
#include <cstdlib>

namespace tessera {
namespace {

void* posix_allocate(void*, size_t size, size_t alignment) {
  if (size == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  if (alignment <= alignof(std::max_align_t)) return std::malloc(size);
  // posix_memalign wants a multiple of sizeof(void*): any power of two above max_align_t is one.
  void* p = nullptr;
  if (::posix_memalign(&p, alignment, size) != 0) return nullptr;
  return p;
}

void posix_deallocate(void*, void* block, size_t, size_t) { std::free(block); }

// realloc keeps malloc's alignment only; large blocks move by remapping pages, not by copying bytes.
void* posix_reallocate(void*, void* block, size_t, size_t new_size, size_t alignment) {
  if (new_size == 0 || alignment > alignof(std::max_align_t)) return nullptr;
  return std::realloc(block, new_size);
}

}  // namespace

allocator posix_allocator() noexcept {
  return allocator{posix_allocate, posix_deallocate, nullptr /* context */, posix_reallocate};
}

}  // namespace tessera
