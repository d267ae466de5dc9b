// SPDX-License-Identifier: BSD-3-Clause
// The codec contexts' shared parts: allocation with a size prefix and releasing every library's state.
#include <string.h>

#include "codecs/codec.hpp"

namespace tessera::detail {

namespace {
// The prefix keeps the block's size and preserves max_align_t alignment for what follows it.
constexpr size_t kPrefix = alignof(max_align_t) > sizeof(size_t) ? alignof(max_align_t) : sizeof(size_t);
}  // namespace

void* sized_allocate(const allocator& a, size_t size) noexcept {
  if (size > SIZE_MAX - kPrefix) return nullptr;
  auto* p = static_cast<uint8_t*>(allocator_allocate(a, size + kPrefix, kPrefix));
  if (p == nullptr) return nullptr;
  memcpy(p, &size, sizeof size);
  return p + kPrefix;
}

void sized_deallocate(const allocator& a, void* block) noexcept {
  if (block == nullptr) return;
  uint8_t* p = static_cast<uint8_t*>(block) - kPrefix;
  size_t size = 0;
  memcpy(&size, p, sizeof size);
  allocator_deallocate(a, p, size + kPrefix, kPrefix);
}

namespace {

// The codec libraries this program links: on bare metal a weak reference is null unless the program called the
// codec's codec_link_* function.
const codec_decoder_impl* const kDecoders[] = {&lz4_decoder_impl, &zlib_decoder_impl, &zstd_decoder_impl};
const codec_encoder_impl* const kEncoders[] = {&lz4_encoder_impl, &lz4hc_encoder_impl, &zlib_encoder_impl,
                                               &zstd_encoder_impl};

}  // namespace

void codec_context_release(codec_context& c) noexcept {
  for (const codec_decoder_impl* d : kDecoders)
    if (d != nullptr && d->release != nullptr) d->release(c);
  for (const codec_encoder_impl* e : kEncoders)
    if (e != nullptr && e->release != nullptr) e->release(c);
}

size_t codec_decoder_state_estimate() noexcept {
  size_t total = 0;
  for (const codec_decoder_impl* d : kDecoders)
    if (d != nullptr && d->state_estimate != nullptr) total += d->state_estimate();
  return total;
}

}  // namespace tessera::detail
