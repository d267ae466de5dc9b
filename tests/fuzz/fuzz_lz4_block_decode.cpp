// SPDX-License-Identifier: BSD-3-Clause
// Fuzzes the in-house LZ4 block reader (src/codecs/lz4_block.hpp) against liblz4. Input: 3 bytes, little-endian, the
// output size (below 128 KiB), 2 bytes that pick how much a partial decode wants, then one LZ4 block. Invariants: no
// crash, no out-of-bounds access, no UB, no write outside the output (guards); the decoder accepts exactly what the
// walk accepts; a partial decode succeeds exactly when the whole one does, with the same first bytes; where liblz4
// decodes the block to the full size, the in-house decoder gives the same bytes, or refuses it only for a match at
// offset 0 (invalid by the format, decoded as zeros by liblz4). Where the AVX2 decoder does not run (another CPU, a
// target without it), only the walk is exercised.
#include <lz4.h>

#include <cstring>

#include "../../src/codecs/lz4_block.hpp"  // internal header: the core keeps src/ private
#include "../support/lz4_reference.hpp"

#include "fuzz_common.hpp"

using namespace tessera;
using detail::lz4_block_position;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const size_t capacity = (size_t{data[0]} | size_t{data[1]} << 8 | size_t{data[2]} << 16) & 0x1ffff;
  const size_t want = capacity == 0 ? 0 : (size_t{data[3]} | size_t{data[4]} << 8) % capacity;
  // The block in a heap copy of exactly its size, so that a read past it is seen.
  const size_t n = size - 5;
  uint8_t* const copy = static_cast<uint8_t*>(std::malloc(n == 0 ? 1 : n));
  if (copy == nullptr) std::abort();
  if (n > 0) std::memcpy(copy, data + 5, n);
  const bytes_view in(copy, n);

  const bool walks = detail::lz4_block_walk(in, lz4_block_position{}, capacity);
  if (detail::lz4_block_decode_available()) {
    fuzz::guarded_buffer out(capacity);
    const status s = detail::lz4_block_decode(in, bytes_mut(out.data(), out.size()), capacity);
    FUZZ_CHECK(out.guards_intact());
    FUZZ_CHECK(s.ok() == walks);
    FUZZ_CHECK(s.ok() || s.code == errc::corrupt);
    fuzz::guarded_buffer part(capacity);
    const status sp = detail::lz4_block_decode(in, bytes_mut(part.data(), part.size()), want);
    FUZZ_CHECK(part.guards_intact());
    FUZZ_CHECK(sp.ok() == s.ok());
    FUZZ_CHECK(!sp.ok() || want == 0 || std::memcmp(part.data(), out.data(), want) == 0);
    if (n <= 0x7fffffff && capacity > 0) {
      fuzz::guarded_buffer ref(capacity);
      const int got = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(ref.data()),
                                          static_cast<int>(n), static_cast<int>(capacity));
      FUZZ_CHECK(ref.guards_intact());
      if (got == static_cast<int>(capacity)) {
        if (s.ok())
          FUZZ_CHECK(std::memcmp(out.data(), ref.data(), capacity) == 0);
        else
          FUZZ_CHECK(test::lz4_has_zero_offset(in));
      }
    }
  }
  std::free(copy);
  return 0;
}
