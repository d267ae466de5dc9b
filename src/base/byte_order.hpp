// SPDX-License-Identifier: BSD-3-Clause
// Byte order of stored integers, the one home for it: frames store big-endian header fields and little-endian
// offsets and sizes, chunks and filter elements are little-endian, on every host. Private to the core.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace tessera::detail {

// Fixed widths: one memcpy-based load or store (a single instruction on little-endian hosts, where the hot
// codecs need it), byte-swapped on big-endian hosts.
template <typename U>
inline U le_swap(U v) noexcept {  // v in little-endian order and back
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  if constexpr (sizeof(U) == 2) return __builtin_bswap16(v);
  else if constexpr (sizeof(U) == 4) return __builtin_bswap32(v);
  else return __builtin_bswap64(v);
#else
  return v;
#endif
}
template <typename U>
inline U le_load_as(const uint8_t* p) noexcept {
  U v;
  memcpy(&v, p, sizeof v);
  return le_swap(v);
}
template <typename U>
inline void le_store_as(uint8_t* p, U v) noexcept {
  v = le_swap(v);
  memcpy(p, &v, sizeof v);
}
inline uint16_t le_load16(const uint8_t* p) noexcept { return le_load_as<uint16_t>(p); }
inline uint32_t le_load32(const uint8_t* p) noexcept { return le_load_as<uint32_t>(p); }
inline uint64_t le_load64(const uint8_t* p) noexcept { return le_load_as<uint64_t>(p); }
inline void le_store32(uint8_t* p, uint32_t v) noexcept { le_store_as(p, v); }
// Big-endian fixed widths (msgpack fields written in their pinned forms): one swapped store each, a 64-bit value
// as two 32-bit halves (no 64-bit shifts on 32-bit targets).
inline void be_store16(uint8_t* p, uint16_t v) noexcept { le_store_as<uint16_t>(p, __builtin_bswap16(v)); }
inline void be_store32(uint8_t* p, uint32_t v) noexcept { le_store_as<uint32_t>(p, __builtin_bswap32(v)); }
inline void be_store64(uint8_t* p, uint64_t v) noexcept {
  be_store32(p, static_cast<uint32_t>(v >> 32));
  be_store32(p + 4, static_cast<uint32_t>(v));
}
inline void le_store64(uint8_t* p, uint64_t v) noexcept { le_store_as(p, v); }

// Any width n <= 8 (filter elements of typesize bytes; the frame header's 1-, 2-, 4- and 8-byte fields).
inline uint64_t le_load(const uint8_t* p, size_t n) noexcept {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}
inline void le_store(uint8_t* p, uint64_t v, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint64_t be_load(const uint8_t* p, size_t n) noexcept {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}
inline void be_store(uint8_t* p, uint64_t v, size_t n) noexcept {
  for (size_t i = n; i > 0; --i) {
    p[i - 1] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

}  // namespace tessera::detail
