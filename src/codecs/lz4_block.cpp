// SPDX-License-Identifier: BSD-3-Clause
// The in-house LZ4 block reader (lz4_block.hpp): the walk, and the choice of the AVX2 decoder.
#include "codecs/lz4_block.hpp"

#if defined(TESSERA_HAVE_LZ4_AVX2)
#include "tessera/shuffle.hpp"
#endif

namespace tessera::detail {

bool lz4_block_walk(bytes_view in, lz4_block_position at, size_t size) noexcept {
  if (at.in > in.size() || at.out > size) return false;
  const uint8_t* p = in.data() + at.in;
  const uint8_t* const end = in.data() + in.size();
  size_t pos = at.out;  // bytes the sequences so far decode to, never above size
  // A length field's extension bytes added to n (each checked against size, so n cannot wrap).
  auto extend = [&](size_t& n) noexcept -> bool {
    unsigned b;
    do {
      if (p == end) return false;
      b = *p++;
      n += b;
      if (n > size) return false;
    } while (b == 255);
    return true;
  };
  // The sequence-to-sequence chain (token, literal length, next token) is the cost: the checks stay off it.
  while (p < end) {
    const unsigned token = *p++;
    size_t lit = token >> 4;
    if (__builtin_expect(lit == 15, 0) && !extend(lit)) return false;
    if (lit > size - pos || lit > static_cast<size_t>(end - p)) return false;
    pos += lit;
    p += lit;
    if (p == end) return pos == size;  // the last sequence: literals only
    if (end - p < 2) return false;
    const size_t offset = static_cast<size_t>(p[0]) | static_cast<size_t>(p[1]) << 8;
    p += 2;
    if (offset - 1 >= pos) return false;  // 0 (wraps) or before the stream's start
    size_t match = (token & 15) + 4;
    if (__builtin_expect(match == 19, 0) && !extend(match)) return false;
    if (match > size - pos) return false;
    pos += match;
  }
  return false;  // no sequence left: an empty stream, or one that ends with a match
}

bool lz4_block_decode_available() noexcept {
#if defined(TESSERA_HAVE_LZ4_AVX2)
  return shuffle_kernels_active().level == simd_level::avx2;
#else
  return false;
#endif
}

status lz4_block_decode(bytes_view in, bytes_mut out, size_t want) noexcept {
#if defined(TESSERA_HAVE_LZ4_AVX2)
  if (!lz4_block_decode_available())  // a CPU without AVX2 (or a level forced lower): never its instructions
    return make_error(errc::unsupported, TESSERA_MSG("lz4: the in-house decoder needs AVX2"));
  lz4_block_position at;
  if (!lz4_block_decode_avx2(in, out, want, &at))
    return make_error(errc::corrupt, TESSERA_MSG("lz4: invalid compressed stream"));
  if (at.in == in.size()) {  // every sequence decoded
    if (at.out != out.size()) return make_error(errc::corrupt, TESSERA_MSG("lz4: stream decodes to a wrong size"));
    return ok_status();
  }
  // Stopped once `want` bytes were out (or out was full): the rest must still be a valid tail.
  if (!lz4_block_walk(in, at, out.size()))
    return make_error(errc::corrupt, TESSERA_MSG("lz4: the stream's tail is broken or decodes to a wrong size"));
  return ok_status();
#else
  (void)in;
  (void)out;
  (void)want;
  return make_error(errc::unsupported, TESSERA_MSG("lz4: this build has no in-house decoder"));
#endif
}

}  // namespace tessera::detail
