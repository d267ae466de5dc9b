// SPDX-License-Identifier: BSD-3-Clause
// What the tests of the in-house LZ4 block reader (tests/codecs/test_lz4_block.cpp, tests/fuzz/
// fuzz_lz4_block_decode.cpp) need to judge a disagreement with liblz4.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/span.hpp"

namespace tessera::test {

// Whether an LZ4 block's sequences, read as far as they are whole, hold a match at offset 0: invalid by the format
// (the in-house decoder refuses it), decoded as zeros by liblz4.
inline bool lz4_has_zero_offset(bytes_view in) {
  const uint8_t* p = in.data();
  const uint8_t* const end = p + in.size();
  auto extend = [&](size_t& n) {
    unsigned b;
    do {
      if (p == end) return false;
      b = *p++;
      n += b;
    } while (b == 255);
    return true;
  };
  while (p < end) {
    const unsigned token = *p++;
    size_t lit = token >> 4;
    if (lit == 15 && !extend(lit)) return false;
    if (lit >= static_cast<size_t>(end - p)) return false;
    p += lit;
    if (end - p < 2) return false;
    if ((p[0] | p[1]) == 0) return true;
    p += 2;
    size_t match = token & 15;
    if (match == 15 && !extend(match)) return false;
  }
  return false;
}

}  // namespace tessera::test
