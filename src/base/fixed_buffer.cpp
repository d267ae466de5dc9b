// SPDX-License-Identifier: BSD-3-Clause
// The fixed buffer storage (tessera/fixed_buffer.hpp), which the C API's tessera_buffer wraps.
#include "tessera/fixed_buffer.hpp"

#include <string.h>

namespace tessera {

void fixed_buffer_init(fixed_buffer& b, void* data, size_t capacity, size_t size) noexcept {
  b.data = static_cast<uint8_t*>(data);
  b.capacity = data == nullptr ? 0 : capacity;
  b.size = size < b.capacity ? size : b.capacity;
}

namespace {

// The callbacks are also called straight from C (tessera_buffer), where a size of 0 may come with a null pointer.
status fixed_read(void* c, uint64_t offset, bytes_mut dst) noexcept {
  auto* b = static_cast<fixed_buffer*>(c);
  if (offset > b->size || dst.size() > b->size - offset) return make_error(errc::truncated, TESSERA_MSG("buffer: read past the end"));
  if (!dst.empty()) memcpy(dst.data(), b->data + offset, dst.size());
  return ok_status();
}
status fixed_write(void* c, uint64_t offset, bytes_view src) noexcept {
  auto* b = static_cast<fixed_buffer*>(c);
  if (offset > b->capacity || src.size() > b->capacity - offset)
    return make_error(errc::no_space, TESSERA_MSG("buffer: write past the capacity"));
  if (offset > b->size) memset(b->data + b->size, 0, static_cast<size_t>(offset) - b->size);  // a gap reads as zeros
  if (!src.empty()) memmove(b->data + offset, src.data(), src.size());
  const size_t end = static_cast<size_t>(offset) + src.size();
  if (end > b->size) b->size = end;
  return ok_status();
}
status fixed_size(void* c, uint64_t* out) noexcept {
  *out = static_cast<fixed_buffer*>(c)->size;
  return ok_status();
}
status fixed_truncate(void* c, uint64_t size) noexcept {
  auto* b = static_cast<fixed_buffer*>(c);
  if (size > b->capacity) return make_error(errc::no_space, TESSERA_MSG("buffer: truncate past the capacity"));
  if (size > b->size) memset(b->data + b->size, 0, static_cast<size_t>(size) - b->size);
  b->size = static_cast<size_t>(size);
  return ok_status();
}
bytes_view fixed_view(void* c) noexcept {
  auto* b = static_cast<fixed_buffer*>(c);
  return bytes_view(b->data, b->size);
}

}  // namespace

storage fixed_buffer_storage(fixed_buffer& b) noexcept {
  return storage{fixed_read, fixed_write, fixed_size, fixed_truncate, nullptr /* sync */, fixed_view, &b};
}

}  // namespace tessera
