// The codec contexts' shared parts: allocation with a size prefix and releasing every library's state.
#include <cstring>

#include "codecs/codec.hpp"

namespace tessera::detail {

namespace {
// The prefix keeps the block's size and preserves max_align_t alignment for what follows it.
constexpr size_t kPrefix = alignof(std::max_align_t) > sizeof(size_t) ? alignof(std::max_align_t) : sizeof(size_t);
}  // namespace

void* sized_allocate(const allocator& a, size_t size) noexcept {
  if (size > SIZE_MAX - kPrefix) return nullptr;
  auto* p = static_cast<uint8_t*>(allocator_allocate(a, size + kPrefix, kPrefix));
  if (p == nullptr) return nullptr;
  std::memcpy(p, &size, sizeof size);
  return p + kPrefix;
}

void sized_deallocate(const allocator& a, void* block) noexcept {
  if (block == nullptr) return;
  uint8_t* p = static_cast<uint8_t*>(block) - kPrefix;
  size_t size = 0;
  std::memcpy(&size, p, sizeof size);
  allocator_deallocate(a, p, size + kPrefix, kPrefix);
}

void codec_context_release(codec_context& c) noexcept {
  lz4_context_release(c);
  zlib_context_release(c);
  zstd_context_release(c);
}

size_t codec_decoder_state_estimate() noexcept {
  return zlib_decoder_state_estimate() + zstd_decoder_state_estimate();
}

}  // namespace tessera::detail
