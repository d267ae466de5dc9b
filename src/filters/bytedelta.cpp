// SPDX-License-Identifier: BSD-3-Clause
// Bytedelta (Blosc2 filter 35): byte-wise delta within each of `typesize` consecutive channels.
#include <string.h>

#include "filters/filters.hpp"
#include "tessera/codecs.hpp"
#include "tessera/tessera.h"

namespace tessera::detail {
namespace {

// Walks the `typesize` channels of size / typesize bytes each: every output byte is step(input byte, carry),
// with `carry` starting at 0 in each channel; the size % typesize trailing bytes are copied.
template <typename Step>
void bytedelta_channels(size_t typesize, const uint8_t* src, uint8_t* dst, size_t size, Step step) noexcept {
  if (typesize == 0) typesize = 1;
  const size_t len = size / typesize;
  for (size_t ch = 0; ch < typesize; ++ch) {
    uint8_t carry = 0;
    const uint8_t* s = src + ch * len;
    uint8_t* d = dst + ch * len;
    for (size_t i = 0; i < len; ++i) d[i] = step(s[i], carry);
  }
  memcpy(dst + len * typesize, src + len * typesize, size - len * typesize);
}

}  // namespace

void bytedelta_encode(size_t typesize, const uint8_t* src, uint8_t* dst, size_t size) noexcept {
  bytedelta_channels(typesize, src, dst, size, [](uint8_t in, uint8_t& prev) noexcept {
    const uint8_t out = static_cast<uint8_t>(in - prev);  // the difference to the previous input byte
    prev = in;
    return out;
  });
}

void bytedelta_decode(size_t typesize, const uint8_t* src, uint8_t* dst, size_t size) noexcept {
  bytedelta_channels(typesize, src, dst, size, [](uint8_t in, uint8_t& sum) noexcept {
    sum = static_cast<uint8_t>(sum + in);  // the running sum restores the input
    return sum;
  });
}

}  // namespace tessera::detail

namespace tessera {
void filter_link_bytedelta() noexcept {}
}  // namespace tessera
extern "C" void tessera_filter_link_bytedelta(void) { tessera::filter_link_bytedelta(); }
