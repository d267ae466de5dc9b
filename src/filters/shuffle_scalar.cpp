// The scalar shuffle kernels: plain loops that state the format, always built, and the reference every SIMD
// kernel is tested against. Endian-neutral: bytes are assembled into words explicitly, never type-punned.
#include <cstring>

#include "filters/shuffle_kernels.hpp"

namespace tessera::detail {
namespace {

// Transposes the 8x8 bit matrix held in x (bit c of byte r = element [r][c]) by three rounds of swaps of
// 4x4, 2x2 and 1x1 blocks (Hacker's Delight, "transpose8").
inline uint64_t bits_transpose_8x8(uint64_t x) noexcept {
  uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  x ^= t ^ (t << 28);
  return x;
}

void shuffle_scalar(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  const size_t n = size / typesize;
  if (typesize == 1 || n == 0) {
    if (size != 0) std::memcpy(dst, src, size);
    return;
  }
  for (size_t j = 0; j < typesize; ++j) {
    uint8_t* row = dst + j * n;
    const uint8_t* in = src + j;
    for (size_t i = 0; i < n; ++i) row[i] = in[i * typesize];
  }
  const size_t done = n * typesize;
  if (size > done) std::memcpy(dst + done, src + done, size - done);
}

void unshuffle_scalar(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst) noexcept {
  const size_t n = size / typesize;
  if (typesize == 1 || n == 0) {
    if (size != 0) std::memcpy(dst, src, size);
    return;
  }
  for (size_t j = 0; j < typesize; ++j) {
    const uint8_t* row = src + j * n;
    uint8_t* out = dst + j;
    for (size_t i = 0; i < n; ++i) out[i * typesize] = row[i];
  }
  const size_t done = n * typesize;
  if (size > done) std::memcpy(dst + done, src + done, size - done);
}

#if TESSERA_WITH_BITSHUFFLE  // config.hpp: small firmware compiles the bit kernels out
// Bit plane (j, b) holds n8 / 8 bytes; bit m of its byte g is bit b of byte j of element 8g + m. Each group of
// 8 elements' byte j is one 8x8 bit matrix to transpose.
void bitshuffle_scalar(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst, uint8_t*) noexcept {
  const size_t n8 = size / typesize / 8 * 8;
  const size_t groups = n8 / 8;
  for (size_t j = 0; j < typesize; ++j) {
    uint8_t* planes = dst + j * n8;
    for (size_t g = 0; g < groups; ++g) {
      const uint8_t* in = src + g * 8 * typesize + j;
      uint64_t x = 0;
      for (unsigned m = 0; m < 8; ++m) x |= static_cast<uint64_t>(in[m * typesize]) << (8 * m);
      x = bits_transpose_8x8(x);
      for (unsigned b = 0; b < 8; ++b) planes[b * groups + g] = static_cast<uint8_t>(x >> (8 * b));
    }
  }
  const size_t done = n8 * typesize;
  if (size > done) std::memcpy(dst + done, src + done, size - done);
}

void bitunshuffle_scalar(size_t typesize, size_t size, const uint8_t* src, uint8_t* dst, uint8_t*) noexcept {
  const size_t n8 = size / typesize / 8 * 8;
  const size_t groups = n8 / 8;
  for (size_t j = 0; j < typesize; ++j) {
    const uint8_t* planes = src + j * n8;
    for (size_t g = 0; g < groups; ++g) {
      uint64_t x = 0;
      for (unsigned b = 0; b < 8; ++b) x |= static_cast<uint64_t>(planes[b * groups + g]) << (8 * b);
      x = bits_transpose_8x8(x);
      uint8_t* out = dst + g * 8 * typesize + j;
      for (unsigned m = 0; m < 8; ++m) out[m * typesize] = static_cast<uint8_t>(x >> (8 * m));
    }
  }
  const size_t done = n8 * typesize;
  if (size > done) std::memcpy(dst + done, src + done, size - done);
}

#endif

}  // namespace

#if TESSERA_WITH_BITSHUFFLE
const shuffle_kernels kShuffleScalar = {simd_level::scalar, shuffle_scalar, unshuffle_scalar, bitshuffle_scalar,
                                        bitunshuffle_scalar};
#else
const shuffle_kernels kShuffleScalar = {simd_level::scalar, shuffle_scalar, unshuffle_scalar, nullptr, nullptr};
#endif

}  // namespace tessera::detail
