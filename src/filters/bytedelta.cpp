// Bytedelta (Blosc2 filter 35): byte-wise delta within each of `typesize` consecutive channels.
#include <cstring>

#include "filters/filters.hpp"

namespace tessera::detail {

void bytedelta_encode(size_t typesize, const uint8_t* src, uint8_t* dst, size_t size) noexcept {
  if (typesize == 0) typesize = 1;
  const size_t len = size / typesize;
  for (size_t ch = 0; ch < typesize; ++ch) {
    uint8_t prev = 0;
    const uint8_t* s = src + ch * len;
    uint8_t* d = dst + ch * len;
    for (size_t i = 0; i < len; ++i) {
      d[i] = static_cast<uint8_t>(s[i] - prev);
      prev = s[i];
    }
  }
  std::memcpy(dst + len * typesize, src + len * typesize, size - len * typesize);
}

void bytedelta_decode(size_t typesize, const uint8_t* src, uint8_t* dst, size_t size) noexcept {
  if (typesize == 0) typesize = 1;
  const size_t len = size / typesize;
  for (size_t ch = 0; ch < typesize; ++ch) {
    uint8_t acc = 0;
    const uint8_t* s = src + ch * len;
    uint8_t* d = dst + ch * len;
    for (size_t i = 0; i < len; ++i) {
      acc = static_cast<uint8_t>(acc + s[i]);
      d[i] = acc;
    }
  }
  std::memcpy(dst + len * typesize, src + len * typesize, size - len * typesize);
}

}  // namespace tessera::detail
