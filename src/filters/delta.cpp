// SPDX-License-Identifier: BSD-3-Clause
// The delta filter (Blosc2 filter 3). XOR is byte-wise, so element-wise coding reduces to bytes at a stride.
#include <string.h>

#include "filters/filters.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

namespace tessera::detail {

namespace {

// The element width the reference codes with.
size_t delta_width(size_t typesize) noexcept {
  if (typesize == 1 || typesize == 2 || typesize == 4 || typesize == 8) return typesize;
  return typesize % 8 == 0 ? 8 : 1;
}

}  // namespace

void delta_encode(const uint8_t* dref, bool block0, size_t typesize, const uint8_t* src, uint8_t* dst,
                  size_t size) noexcept {
  const size_t w = delta_width(typesize);
  const size_t coded = size / w * w;
  if (block0) {
    if (coded == 0) {
      memcpy(dst, src, size);
      return;
    }
    memcpy(dst, dref, w);
    for (size_t i = w; i < coded; ++i) dst[i] = static_cast<uint8_t>(src[i] ^ dref[i - w]);
  } else {
    for (size_t i = 0; i < coded; ++i) dst[i] = static_cast<uint8_t>(src[i] ^ dref[i]);
  }
  // The reference leaves these bytes of its scratch unwritten; copying them keeps the block decodable.
  memcpy(dst + coded, src + coded, size - coded);
}

void delta_decode(const uint8_t* dref, bool block0, size_t typesize, uint8_t* data, size_t size) noexcept {
  const size_t w = delta_width(typesize);
  const size_t coded = size / w * w;
  if (block0) {
    // A running XOR: each element against the previous one already decoded.
    for (size_t i = w; i < coded; ++i) data[i] = static_cast<uint8_t>(data[i] ^ data[i - w]);
  } else {
    for (size_t i = 0; i < coded; ++i) data[i] = static_cast<uint8_t>(data[i] ^ dref[i]);
  }
}

}  // namespace tessera::detail

namespace tessera {
void filter_link_delta() noexcept {}
}  // namespace tessera
extern "C" void tessera_filter_link_delta(void) { tessera::filter_link_delta(); }
