// SPDX-License-Identifier: BSD-3-Clause
// Test helpers for arrays: heap buffers from the test allocator (no std::vector: the same source runs on bare
// metal), a plain C-order model of an array (item-by-item loops, independent of nd_copy), random geometries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tessera/allocator.hpp"
#include "tessera/array.hpp"

#include "../support/random.hpp"
#include "../support/test_allocators.hpp"

namespace array_test {

using namespace tessera;

// A byte buffer from the system allocator.
struct buf {
  owned_array<uint8_t> a;
  size_t n = 0;
  bool make(size_t size) noexcept {
    n = size;
    if (!a.allocate(test::system_allocator(), size == 0 ? 1 : size).ok()) return false;
    std::memset(a.data(), 0, size == 0 ? 1 : size);
    return true;
  }
  uint8_t* data() const noexcept { return a.data(); }
  bytes_view view() const noexcept { return bytes_view(a.data(), n); }
  bytes_mut mut() const noexcept { return bytes_mut(a.data(), n); }
};

inline int64_t prod(int ndim, const int64_t* shape) noexcept {
  int64_t p = 1;
  for (int i = 0; i < ndim; ++i) p *= shape[i];
  return p;
}

// Copies the box of extent ext at src_start of a C-order buffer of src_shape to dst_start of one of dst_shape,
// item by item (the plain loop the tests trust).
inline void box_copy(int ndim, int64_t itemsize, const uint8_t* src, const int64_t* src_shape,
                     const int64_t* src_start, uint8_t* dst, const int64_t* dst_shape, const int64_t* dst_start,
                     const int64_t* ext) noexcept {
  for (int i = 0; i < ndim; ++i)
    if (ext[i] == 0) return;
  int64_t idx[kMaxDims] = {};
  for (;;) {
    int64_t so = 0;
    int64_t d0 = 0;
    for (int i = 0; i < ndim; ++i) {
      so = so * src_shape[i] + src_start[i] + idx[i];
      d0 = d0 * dst_shape[i] + dst_start[i] + idx[i];
    }
    std::memcpy(dst + d0 * itemsize, src + so * itemsize, static_cast<size_t>(itemsize));
    int d = ndim - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < ext[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

inline void fill_random(test::rng& r, uint8_t* p, size_t n, bool compressible) noexcept {
  for (size_t i = 0; i < n; ++i)
    p[i] = compressible ? static_cast<uint8_t>((i / 7) & 0x3) : static_cast<uint8_t>(r.next());
}

inline span<const char> str(const char* s) noexcept { return span<const char>(s, std::strlen(s)); }

}  // namespace array_test
