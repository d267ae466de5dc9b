// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// A caller's fixed buffer as a storage: no heap at all. The core's own, because the C API's tessera_buffer is
/// this storage seen from C; the memory port (tessera/port/memory_storage.hpp) offers it with its RAM storages.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/storage.hpp"

namespace tessera {

/// A caller's buffer of `capacity` bytes, of which the first `size` are the storage's content. Writes past the
/// capacity fail with errc::no_space (nothing written); truncate extends with zeros up to the capacity.
struct fixed_buffer {
  uint8_t* data = nullptr;  ///< the caller's buffer (the caller owns it)
  size_t capacity = 0;      ///< its size in bytes
  size_t size = 0;          ///< the storage's size: its first `size` bytes are the content
};
/// Points b at `data` (capacity bytes; 0 when data is null), its first `size` bytes (clamped to the capacity)
/// being the content.
void fixed_buffer_init(fixed_buffer& b, void* data, size_t capacity, size_t size = 0) noexcept;
/// The storage over b (its context is &b: b must outlive it). Has a view.
[[nodiscard]] storage fixed_buffer_storage(fixed_buffer& b) noexcept;

}  // namespace tessera
