// SPDX-License-Identifier: BSD-3-Clause
// BloscLZ: round trips, the reference's give-up rules, hostile streams, and known answers produced by
// c-blosc2 3.3.2's blosclz_compress (generated once with an oracle program linked against the reference).
#include <cstring>
#include <initializer_list>

#include "../../src/codecs/blosclz.hpp"  // internal header: the core keeps src/ private
#include "tessera/allocator.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;
using detail::blosclz_compress;
using detail::blosclz_decompress;
using detail::blosclz_workspace_size;

namespace {

// Known-answer inputs: integer-only generators (no floating point, so every target builds the same bytes).
inline uint32_t kat_lcg(uint32_t& x) {
  x = x * 1103515245u + 12345u;
  return x >> 16;
}
// Words picked by an LCG, separated by spaces.
inline void kat_text(uint8_t* out, size_t n) {
  static const char* const words[] = {"blosc", "chunk", "array", "the", "of", "data", "frame", "shape"};
  uint32_t x = 1;
  size_t p = 0;
  while (p < n) {
    const char* w = words[kat_lcg(x) % 8];
    for (size_t k = 0; w[k] != 0 && p < n; ++k) out[p++] = static_cast<uint8_t>(w[k]);
    if (p < n) out[p++] = ' ';
  }
}
// int32 little-endian ramp i * 3, byte-shuffled with typesize 4.
inline void kat_ramp_shuffled(uint8_t* out, size_t n) {
  const size_t count = n / 4;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t v = static_cast<uint32_t>(i * 3);
    for (size_t j = 0; j < 4; ++j) out[j * count + i] = static_cast<uint8_t>(v >> (8 * j));
  }
  for (size_t k = count * 4; k < n; ++k) out[k] = 0;
}
// A 64-byte pattern, zeros, the pattern again 9100 bytes later (a far match), zeros, then 100 distinct bytes.
inline void kat_far(uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint8_t b = 0;
    if (i < 64) b = static_cast<uint8_t>(i * 37 + 11);
    else if (i >= 9100 && i < 9164) b = static_cast<uint8_t>((i - 9100) * 37 + 11);
    else if (i >= 9200) b = static_cast<uint8_t>(i * 13);
    out[i] = b;
  }
}
// 120 LCG bytes, then copies of earlier bytes at distances that change every 50 bytes.
inline void kat_mixed(uint8_t* out, size_t n) {
  uint32_t x = 7;
  for (size_t i = 0; i < n; ++i) {
    out[i] = i < 120 ? static_cast<uint8_t>(kat_lcg(x)) : out[i - 120 + (i / 50) % 3];
  }
}
// Zeros, then LCG bytes over the last eighth: compressible, but a probe of the tail sees only noise.
inline void kat_tail_noise(uint8_t* out, size_t n) {
  uint32_t x = 3;
  for (size_t i = 0; i < n; ++i) out[i] = i < n - n / 8 ? 0 : static_cast<uint8_t>(kat_lcg(x));
}
// LCG bytes over the first 16 KiB, zeros after: a probe of the whole block (clevel 7-9) sees only noise.
inline void kat_head_noise(uint8_t* out, size_t n) {
  uint32_t x = 5;
  for (size_t i = 0; i < n; ++i) out[i] = i < 16384 ? static_cast<uint8_t>(kat_lcg(x)) : 0;
}

// Streams written by the reference's blosclz_compress(clevel, input, n, out, maxout = n).
// text: 300 bytes at clevel 9 -> 160 bytes
const uint8_t kKat_text[] = {
    0x34, 0x66, 0x72, 0x61, 0x6d, 0x65, 0x20, 0x66, 0x72, 0x61, 0x6d, 0x65, 0x20, 0x63, 0x68, 0x75,
    0x6e, 0x6b, 0x20, 0x74, 0x68, 0x65, 0xc0, 0x03, 0x0c, 0x20, 0x61, 0x72, 0x72, 0x61, 0x79, 0x20,
    0x74, 0x68, 0x65, 0x20, 0x6f, 0x66, 0x80, 0x24, 0x10, 0x20, 0x64, 0x61, 0x74, 0x61, 0x20, 0x73,
    0x68, 0x61, 0x70, 0x65, 0x20, 0x6f, 0x66, 0x20, 0x6f, 0x66, 0x80, 0x35, 0x80, 0x11, 0xe0, 0x09,
    0x0b, 0x80, 0x34, 0x80, 0x05, 0x80, 0x4d, 0x80, 0x29, 0xe0, 0x03, 0x05, 0x80, 0x1d, 0x80, 0x11,
    0x80, 0x41, 0x80, 0x29, 0x05, 0x20, 0x62, 0x6c, 0x6f, 0x73, 0x63, 0xe0, 0x00, 0x62, 0x80, 0x14,
    0x80, 0x2c, 0x01, 0x20, 0x74, 0x80, 0xa4, 0x80, 0x13, 0x04, 0x20, 0x64, 0x61, 0x74, 0x61, 0x80,
    0x39, 0xe0, 0x00, 0x33, 0x05, 0x20, 0x6f, 0x66, 0x20, 0x64, 0x61, 0xc0, 0xaa, 0x80, 0x5c, 0x80,
    0x3b, 0x06, 0x20, 0x64, 0x61, 0x74, 0x61, 0x20, 0x74, 0xc0, 0x3c, 0x80, 0x42, 0xe0, 0x06, 0x3d,
    0xe0, 0x01, 0x1e, 0x0b, 0x20, 0x66, 0x72, 0x61, 0x6d, 0x65, 0x20, 0x66, 0x72, 0x61, 0x6d, 0x65};
// ramp: 2048 bytes at clevel 1 -> 317 bytes
const uint8_t kKat_ramp[] = {
    0x3f, 0x00, 0x03, 0x06, 0x09, 0x0c, 0x0f, 0x12, 0x15, 0x18, 0x1b, 0x1e, 0x21, 0x24, 0x27, 0x2a,
    0x2d, 0x30, 0x33, 0x36, 0x39, 0x3c, 0x3f, 0x42, 0x45, 0x48, 0x4b, 0x4e, 0x51, 0x54, 0x57, 0x5a,
    0x5d, 0x1f, 0x60, 0x63, 0x66, 0x69, 0x6c, 0x6f, 0x72, 0x75, 0x78, 0x7b, 0x7e, 0x81, 0x84, 0x87,
    0x8a, 0x8d, 0x90, 0x93, 0x96, 0x99, 0x9c, 0x9f, 0xa2, 0xa5, 0xa8, 0xab, 0xae, 0xb1, 0xb4, 0xb7,
    0xba, 0xbd, 0x1f, 0xc0, 0xc3, 0xc6, 0xc9, 0xcc, 0xcf, 0xd2, 0xd5, 0xd8, 0xdb, 0xde, 0xe1, 0xe4,
    0xe7, 0xea, 0xed, 0xf0, 0xf3, 0xf6, 0xf9, 0xfc, 0xff, 0x02, 0x05, 0x08, 0x0b, 0x0e, 0x11, 0x14,
    0x17, 0x1a, 0x1d, 0x1f, 0x20, 0x23, 0x26, 0x29, 0x2c, 0x2f, 0x32, 0x35, 0x38, 0x3b, 0x3e, 0x41,
    0x44, 0x47, 0x4a, 0x4d, 0x50, 0x53, 0x56, 0x59, 0x5c, 0x5f, 0x62, 0x65, 0x68, 0x6b, 0x6e, 0x71,
    0x74, 0x77, 0x7a, 0x7d, 0x1f, 0x80, 0x83, 0x86, 0x89, 0x8c, 0x8f, 0x92, 0x95, 0x98, 0x9b, 0x9e,
    0xa1, 0xa4, 0xa7, 0xaa, 0xad, 0xb0, 0xb3, 0xb6, 0xb9, 0xbc, 0xbf, 0xc2, 0xc5, 0xc8, 0xcb, 0xce,
    0xd1, 0xd4, 0xd7, 0xda, 0xdd, 0x1f, 0xe0, 0xe3, 0xe6, 0xe9, 0xec, 0xef, 0xf2, 0xf5, 0xf8, 0xfb,
    0xfe, 0x01, 0x04, 0x07, 0x0a, 0x0d, 0x10, 0x13, 0x16, 0x19, 0x1c, 0x1f, 0x22, 0x25, 0x28, 0x2b,
    0x2e, 0x31, 0x34, 0x37, 0x3a, 0x3d, 0x1f, 0x40, 0x43, 0x46, 0x49, 0x4c, 0x4f, 0x52, 0x55, 0x58,
    0x5b, 0x5e, 0x61, 0x64, 0x67, 0x6a, 0x6d, 0x70, 0x73, 0x76, 0x79, 0x7c, 0x7f, 0x82, 0x85, 0x88,
    0x8b, 0x8e, 0x91, 0x94, 0x97, 0x9a, 0x9d, 0x1f, 0xa0, 0xa3, 0xa6, 0xa9, 0xac, 0xaf, 0xb2, 0xb5,
    0xb8, 0xbb, 0xbe, 0xc1, 0xc4, 0xc7, 0xca, 0xcd, 0xd0, 0xd3, 0xd6, 0xd9, 0xdc, 0xdf, 0xe2, 0xe5,
    0xe8, 0xeb, 0xee, 0xf1, 0xf4, 0xf7, 0xfa, 0xfd, 0xe0, 0xf7, 0xff, 0x00, 0x00, 0xe0, 0x4b, 0x00,
    0x01, 0x00, 0x01, 0xe0, 0x4a, 0x00, 0x01, 0x01, 0x02, 0xe0, 0x4a, 0x00, 0x01, 0x02, 0x03, 0xe0,
    0x4b, 0x00, 0x01, 0x03, 0x04, 0xe0, 0x4a, 0x00, 0x01, 0x04, 0x05, 0xe0, 0x4a, 0x00, 0x00, 0x05,
    0xe1, 0x4b, 0xfe, 0xe0, 0xff, 0xff, 0xff, 0xa3, 0x01, 0x02, 0x00, 0x00, 0x00};
// ramp5: 4000 bytes at clevel 5 -> 360 bytes
const uint8_t kKat_ramp5[] = {
    0x3f, 0x00, 0x03, 0x06, 0x09, 0x0c, 0x0f, 0x12, 0x15, 0x18, 0x1b, 0x1e, 0x21, 0x24, 0x27, 0x2a,
    0x2d, 0x30, 0x33, 0x36, 0x39, 0x3c, 0x3f, 0x42, 0x45, 0x48, 0x4b, 0x4e, 0x51, 0x54, 0x57, 0x5a,
    0x5d, 0x1f, 0x60, 0x63, 0x66, 0x69, 0x6c, 0x6f, 0x72, 0x75, 0x78, 0x7b, 0x7e, 0x81, 0x84, 0x87,
    0x8a, 0x8d, 0x90, 0x93, 0x96, 0x99, 0x9c, 0x9f, 0xa2, 0xa5, 0xa8, 0xab, 0xae, 0xb1, 0xb4, 0xb7,
    0xba, 0xbd, 0x1f, 0xc0, 0xc3, 0xc6, 0xc9, 0xcc, 0xcf, 0xd2, 0xd5, 0xd8, 0xdb, 0xde, 0xe1, 0xe4,
    0xe7, 0xea, 0xed, 0xf0, 0xf3, 0xf6, 0xf9, 0xfc, 0xff, 0x02, 0x05, 0x08, 0x0b, 0x0e, 0x11, 0x14,
    0x17, 0x1a, 0x1d, 0x1f, 0x20, 0x23, 0x26, 0x29, 0x2c, 0x2f, 0x32, 0x35, 0x38, 0x3b, 0x3e, 0x41,
    0x44, 0x47, 0x4a, 0x4d, 0x50, 0x53, 0x56, 0x59, 0x5c, 0x5f, 0x62, 0x65, 0x68, 0x6b, 0x6e, 0x71,
    0x74, 0x77, 0x7a, 0x7d, 0x1f, 0x80, 0x83, 0x86, 0x89, 0x8c, 0x8f, 0x92, 0x95, 0x98, 0x9b, 0x9e,
    0xa1, 0xa4, 0xa7, 0xaa, 0xad, 0xb0, 0xb3, 0xb6, 0xb9, 0xbc, 0xbf, 0xc2, 0xc5, 0xc8, 0xcb, 0xce,
    0xd1, 0xd4, 0xd7, 0xda, 0xdd, 0x1f, 0xe0, 0xe3, 0xe6, 0xe9, 0xec, 0xef, 0xf2, 0xf5, 0xf8, 0xfb,
    0xfe, 0x01, 0x04, 0x07, 0x0a, 0x0d, 0x10, 0x13, 0x16, 0x19, 0x1c, 0x1f, 0x22, 0x25, 0x28, 0x2b,
    0x2e, 0x31, 0x34, 0x37, 0x3a, 0x3d, 0x1f, 0x40, 0x43, 0x46, 0x49, 0x4c, 0x4f, 0x52, 0x55, 0x58,
    0x5b, 0x5e, 0x61, 0x64, 0x67, 0x6a, 0x6d, 0x70, 0x73, 0x76, 0x79, 0x7c, 0x7f, 0x82, 0x85, 0x88,
    0x8b, 0x8e, 0x91, 0x94, 0x97, 0x9a, 0x9d, 0x1f, 0xa0, 0xa3, 0xa6, 0xa9, 0xac, 0xaf, 0xb2, 0xb5,
    0xb8, 0xbb, 0xbe, 0xc1, 0xc4, 0xc7, 0xca, 0xcd, 0xd0, 0xd3, 0xd6, 0xd9, 0xdc, 0xdf, 0xe2, 0xe5,
    0xe8, 0xeb, 0xee, 0xf1, 0xf4, 0xf7, 0xfa, 0xfd, 0xe0, 0xff, 0xff, 0xe0, 0xff, 0x01, 0xb5, 0x00,
    0xe0, 0x4b, 0x00, 0x01, 0x00, 0x01, 0xe0, 0x4a, 0x00, 0x01, 0x01, 0x02, 0xe0, 0x4a, 0x00, 0x01,
    0x02, 0x03, 0xe0, 0x4b, 0x00, 0x01, 0x03, 0x04, 0xe0, 0x4a, 0x00, 0x01, 0x04, 0x05, 0xe0, 0x4a,
    0x00, 0x01, 0x05, 0x06, 0xe0, 0x4b, 0x00, 0x01, 0x06, 0x07, 0xe0, 0x4a, 0x00, 0x01, 0x07, 0x08,
    0xe0, 0x4a, 0x00, 0x01, 0x08, 0x09, 0xe0, 0x4b, 0x00, 0x01, 0x09, 0x0a, 0xe0, 0x4a, 0x00, 0x01,
    0x0a, 0x0b, 0xe0, 0x32, 0x00, 0x00, 0x0b, 0xe3, 0x4b, 0xe6, 0xe0, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0x77, 0x01, 0x02, 0x00, 0x00, 0x00};
// far: 9300 bytes at clevel 9 -> 218 bytes
const uint8_t kKat_far[] = {
    0x3f, 0x0b, 0x30, 0x55, 0x7a, 0x9f, 0xc4, 0xe9, 0x0e, 0x33, 0x58, 0x7d, 0xa2, 0xc7, 0xec, 0x11,
    0x36, 0x5b, 0x80, 0xa5, 0xca, 0xef, 0x14, 0x39, 0x5e, 0x83, 0xa8, 0xcd, 0xf2, 0x17, 0x3c, 0x61,
    0x86, 0x1f, 0xab, 0xd0, 0xf5, 0x1a, 0x3f, 0x64, 0x89, 0xae, 0xd3, 0xf8, 0x1d, 0x42, 0x67, 0x8c,
    0xb1, 0xd6, 0xfb, 0x20, 0x45, 0x6a, 0x8f, 0xb4, 0xd9, 0xfe, 0x23, 0x48, 0x6d, 0x92, 0xb7, 0xdc,
    0x01, 0x26, 0x00, 0x00, 0xe0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x64, 0x00, 0x00, 0x00, 0xff, 0x5a, 0xff, 0x03,
    0x8c, 0x1f, 0x00, 0x30, 0x3d, 0x4a, 0x57, 0x64, 0x71, 0x7e, 0x8b, 0x98, 0xa5, 0xb2, 0xbf, 0xcc,
    0xd9, 0xe6, 0xf3, 0x00, 0x0d, 0x1a, 0x27, 0x34, 0x41, 0x4e, 0x5b, 0x68, 0x75, 0x82, 0x8f, 0x9c,
    0xa9, 0xb6, 0x1f, 0xc3, 0xd0, 0xdd, 0xea, 0xf7, 0x04, 0x11, 0x1e, 0x2b, 0x38, 0x45, 0x52, 0x5f,
    0x6c, 0x79, 0x86, 0x93, 0xa0, 0xad, 0xba, 0xc7, 0xd4, 0xe1, 0xee, 0xfb, 0x08, 0x15, 0x22, 0x2f,
    0x3c, 0x49, 0x56, 0x1f, 0x63, 0x70, 0x7d, 0x8a, 0x97, 0xa4, 0xb1, 0xbe, 0xcb, 0xd8, 0xe5, 0xf2,
    0xff, 0x0c, 0x19, 0x26, 0x33, 0x40, 0x4d, 0x5a, 0x67, 0x74, 0x81, 0x8e, 0x9b, 0xa8, 0xb5, 0xc2,
    0xcf, 0xdc, 0xe9, 0xf6, 0x04, 0x03, 0x10, 0x1d, 0x2a, 0x37};
// mixed: 700 bytes at clevel 7 -> 226 bytes
const uint8_t kKat_mixed[] = {
    0x3f, 0x6c, 0x4e, 0x74, 0x92, 0x13, 0x25, 0x22, 0x2e, 0x31, 0xa1, 0xcd, 0x13, 0xbe, 0x12, 0xed,
    0x42, 0x69, 0x66, 0xce, 0x24, 0xfc, 0x23, 0xd7, 0xda, 0x8d, 0x20, 0x97, 0x61, 0x6a, 0x06, 0x95,
    0x6e, 0x1f, 0xc2, 0x8a, 0xd4, 0x03, 0x13, 0x68, 0x28, 0xd4, 0x57, 0x1e, 0x3c, 0x5d, 0xee, 0x6e,
    0x5e, 0xc0, 0x4a, 0x91, 0x11, 0x5f, 0x5d, 0x3b, 0x51, 0x3e, 0xc2, 0x53, 0xa4, 0x16, 0xad, 0x6e,
    0xe5, 0x38, 0x1f, 0x94, 0x11, 0xd0, 0x28, 0x9a, 0xa3, 0x4c, 0xf5, 0xc0, 0x34, 0x7c, 0x59, 0xca,
    0xf0, 0x84, 0x95, 0xf3, 0x61, 0x1b, 0x0b, 0x50, 0x68, 0xd5, 0x98, 0x04, 0xf9, 0x2e, 0xb7, 0x29,
    0x99, 0x55, 0x57, 0x19, 0x79, 0x99, 0xbe, 0x78, 0xc0, 0x10, 0x66, 0x87, 0x02, 0x99, 0xe5, 0x7f,
    0x6c, 0xd2, 0x35, 0xbc, 0xfb, 0x8f, 0x44, 0x9d, 0xee, 0xe2, 0x3b, 0xe1, 0x74, 0x92, 0xe0, 0x12,
    0x75, 0x00, 0x6e, 0xe0, 0x28, 0x77, 0x00, 0x95, 0xe0, 0x28, 0x76, 0x00, 0xbe, 0xe0, 0x08, 0xeb,
    0xe0, 0x17, 0x75, 0x00, 0x6e, 0xe0, 0x0a, 0xef, 0xe0, 0x15, 0x77, 0x00, 0x35, 0xe0, 0x09, 0xed,
    0xe0, 0x16, 0x76, 0x00, 0x3c, 0xe1, 0x08, 0x63, 0xe0, 0x17, 0x75, 0x00, 0x29, 0xe1, 0x0a, 0x66,
    0xe0, 0x15, 0x77, 0x03, 0x8d, 0x97, 0x61, 0x6a, 0xe0, 0x06, 0xed, 0xe0, 0x16, 0x76, 0x03, 0xc0,
    0x7c, 0x59, 0xca, 0xe0, 0x05, 0xeb, 0xe0, 0x17, 0x75, 0x00, 0x25, 0xc1, 0xdd, 0xe0, 0x02, 0xef,
    0xe0, 0x15, 0x77, 0x03, 0x51, 0xc2, 0x53, 0xa4, 0xe0, 0x06, 0xed, 0xe0, 0x14, 0x76, 0x02, 0x10,
    0x66, 0x87};
// text3: 1000 bytes at clevel 3 -> 455 bytes
const uint8_t kKat_text3[] = {
    0x34, 0x66, 0x72, 0x61, 0x6d, 0x65, 0x20, 0x66, 0x72, 0x61, 0x6d, 0x65, 0x20, 0x63, 0x68, 0x75,
    0x6e, 0x6b, 0x20, 0x74, 0x68, 0x65, 0xc0, 0x03, 0x0c, 0x20, 0x61, 0x72, 0x72, 0x61, 0x79, 0x20,
    0x74, 0x68, 0x65, 0x20, 0x6f, 0x66, 0x80, 0x24, 0x10, 0x20, 0x64, 0x61, 0x74, 0x61, 0x20, 0x73,
    0x68, 0x61, 0x70, 0x65, 0x20, 0x6f, 0x66, 0x20, 0x6f, 0x66, 0x80, 0x35, 0x80, 0x11, 0xe0, 0x09,
    0x0b, 0x80, 0x34, 0x80, 0x05, 0x80, 0x4d, 0x80, 0x29, 0xe0, 0x03, 0x05, 0x80, 0x1d, 0x80, 0x11,
    0x80, 0x41, 0x80, 0x29, 0x05, 0x20, 0x62, 0x6c, 0x6f, 0x73, 0x63, 0xe0, 0x00, 0x62, 0x80, 0x14,
    0x80, 0x2c, 0x01, 0x20, 0x74, 0x80, 0xa4, 0x80, 0x13, 0x04, 0x20, 0x64, 0x61, 0x74, 0x61, 0x80,
    0x39, 0xe0, 0x00, 0x33, 0x05, 0x20, 0x6f, 0x66, 0x20, 0x64, 0x61, 0xc0, 0xaa, 0x80, 0x5c, 0x80,
    0x3b, 0x06, 0x20, 0x64, 0x61, 0x74, 0x61, 0x20, 0x74, 0xc0, 0x3c, 0x80, 0x42, 0xe0, 0x06, 0x3d,
    0xe0, 0x01, 0x1e, 0x80, 0x33, 0x80, 0x05, 0x80, 0x45, 0x80, 0x2a, 0x80, 0x05, 0x80, 0x11, 0xe0,
    0x03, 0x05, 0x80, 0x29, 0x80, 0x05, 0x03, 0x20, 0x74, 0x68, 0x65, 0x80, 0x90, 0x09, 0x20, 0x64,
    0x61, 0x74, 0x61, 0x20, 0x64, 0x61, 0x74, 0x61, 0x80, 0x6e, 0x80, 0x1f, 0x80, 0x05, 0x80, 0x11,
    0x00, 0x20, 0xc1, 0x60, 0x80, 0x14, 0x00, 0x20, 0xc1, 0x58, 0x04, 0x20, 0x64, 0x61, 0x74, 0x61,
    0x80, 0x13, 0x80, 0x66, 0x80, 0x0b, 0x80, 0x7e, 0x80, 0x5c, 0x80, 0x05, 0x03, 0x20, 0x74, 0x68,
    0x65, 0x80, 0x21, 0xe0, 0x03, 0x1b, 0x04, 0x20, 0x64, 0x61, 0x74, 0x61, 0x80, 0x20, 0x02, 0x20,
    0x64, 0x61, 0xc1, 0x25, 0x00, 0x20, 0x80, 0xe1, 0x02, 0x20, 0x64, 0x61, 0xc0, 0x90, 0x01, 0x20,
    0x74, 0xc0, 0xaa, 0x80, 0x3d, 0x80, 0x94, 0x01, 0x20, 0x74, 0xc1, 0x25, 0x02, 0x20, 0x64, 0x61,
    0xe0, 0x05, 0x86, 0x80, 0x20, 0x02, 0x20, 0x64, 0x61, 0xc0, 0x41, 0x80, 0x97, 0x01, 0x20, 0x74,
    0xe0, 0x0b, 0x47, 0x80, 0x53, 0x80, 0x21, 0x02, 0x20, 0x6f, 0x66, 0x80, 0x3b, 0x80, 0x95, 0x80,
    0x1a, 0xe0, 0x00, 0x14, 0x80, 0x23, 0x02, 0x20, 0x64, 0x61, 0xc0, 0xaa, 0x80, 0x10, 0x80, 0xd8,
    0x80, 0x05, 0x80, 0x11, 0x80, 0x37, 0x02, 0x20, 0x64, 0x61, 0xc0, 0x96, 0xe0, 0x03, 0x54, 0x00,
    0x20, 0xa1, 0xfc, 0x80, 0x62, 0x02, 0x20, 0x6f, 0x66, 0x80, 0x39, 0x00, 0x20, 0xc1, 0x54, 0x01,
    0x20, 0x74, 0xa0, 0xfc, 0x80, 0x45, 0x80, 0x51, 0x80, 0x23, 0x80, 0x32, 0x80, 0x17, 0x80, 0x11,
    0x80, 0x0b, 0x01, 0x20, 0x74, 0xc1, 0x5e, 0x01, 0x20, 0x74, 0xe0, 0x04, 0x3c, 0x80, 0x30, 0x02,
    0x20, 0x64, 0x61, 0xa1, 0xe0, 0xe0, 0x01, 0x09, 0x01, 0x20, 0x74, 0x82, 0xa4, 0x02, 0x20, 0x64,
    0x61, 0xc0, 0xa4, 0xe0, 0x03, 0x69, 0x80, 0x0b, 0x80, 0x05, 0x80, 0x44, 0x00, 0x20, 0xc2, 0x03,
    0x80, 0xcb, 0xe0, 0x01, 0x78, 0x02, 0x20, 0x74, 0x68, 0xa3, 0x9d, 0xe0, 0x00, 0x28, 0x80, 0x9b,
    0x01, 0x20, 0x74, 0xc1, 0xa0, 0x80, 0x18, 0x80, 0x05, 0xe0, 0x01, 0x38, 0x09, 0x20, 0x73, 0x68,
    0x61, 0x70, 0x65, 0x20, 0x63, 0x68, 0x75};

struct known_answer {
  const char* name;
  void (*generate)(uint8_t*, size_t);
  size_t size;
  int clevel;
  const uint8_t* stream;
  size_t stream_size;
};
#define TESSERA_KAT(name, gen, n, cl) {#name, gen, n, cl, kKat_##name, sizeof kKat_##name}
const known_answer kKnownAnswers[] = {
    TESSERA_KAT(text, kat_text, 300, 9),        TESSERA_KAT(ramp, kat_ramp_shuffled, 2048, 1),
    TESSERA_KAT(ramp5, kat_ramp_shuffled, 4000, 5), TESSERA_KAT(far, kat_far, 9300, 9),
    TESSERA_KAT(mixed, kat_mixed, 700, 7),      TESSERA_KAT(text3, kat_text, 1000, 3),
};
#undef TESSERA_KAT

// The reference's compressed sizes (0: it gives up) for larger blocks, maxout = block size.
struct known_size {
  void (*generate)(uint8_t*, size_t);
  size_t size;
  int clevel;
  size_t compressed;
};
const known_size kKnownSizes[] = {
    {kat_text, 32768, 1, 13287},
    {kat_text, 32768, 5, 13137},
    {kat_text, 32768, 7, 13137},
    {kat_text, 32768, 9, 13137},
    {kat_text, 65541, 1, 26558},
    {kat_text, 65541, 5, 26250},
    {kat_text, 65541, 7, 26250},
    {kat_text, 65541, 9, 26250},
    {kat_text, 262144, 1, 105612},
    {kat_text, 262144, 5, 104334},
    {kat_text, 262144, 7, 104334},
    {kat_text, 262144, 9, 104334},
    {kat_ramp_shuffled, 32768, 1, 948},
    {kat_ramp_shuffled, 32768, 5, 948},
    {kat_ramp_shuffled, 32768, 7, 948},
    {kat_ramp_shuffled, 32768, 9, 948},
    {kat_ramp_shuffled, 65541, 1, 1624},
    {kat_ramp_shuffled, 65541, 5, 1624},
    {kat_ramp_shuffled, 65541, 7, 1624},
    {kat_ramp_shuffled, 65541, 9, 1624},
    {kat_ramp_shuffled, 262144, 1, 4646},
    {kat_ramp_shuffled, 262144, 5, 4646},
    {kat_ramp_shuffled, 262144, 7, 4646},
    {kat_ramp_shuffled, 262144, 9, 4642},
    {kat_far, 32768, 1, 477},
    {kat_far, 32768, 5, 477},
    {kat_far, 32768, 7, 477},
    {kat_far, 32768, 9, 477},
    {kat_far, 65541, 1, 605},
    {kat_far, 65541, 5, 605},
    {kat_far, 65541, 7, 605},
    {kat_far, 65541, 9, 605},
    {kat_far, 262144, 1, 1376},
    {kat_far, 262144, 5, 1376},
    {kat_far, 262144, 7, 1376},
    {kat_far, 262144, 9, 1376},
    {kat_mixed, 32768, 1, 6545},
    {kat_mixed, 32768, 5, 6524},
    {kat_mixed, 32768, 7, 6524},
    {kat_mixed, 32768, 9, 6524},
    {kat_mixed, 65541, 1, 12451},
    {kat_mixed, 65541, 5, 12407},
    {kat_mixed, 65541, 7, 12407},
    {kat_mixed, 65541, 9, 12407},
    {kat_mixed, 262144, 1, 48821},
    {kat_mixed, 262144, 5, 48475},
    {kat_mixed, 262144, 7, 48475},
    {kat_mixed, 262144, 9, 48475},
    {kat_tail_noise, 32768, 1, 0},
    {kat_tail_noise, 32768, 5, 4346},
    {kat_tail_noise, 32768, 7, 4346},
    {kat_tail_noise, 32768, 9, 4346},
    {kat_tail_noise, 65541, 1, 0},
    {kat_tail_noise, 65541, 5, 8682},
    {kat_tail_noise, 65541, 7, 8682},
    {kat_tail_noise, 65541, 9, 8682},
    {kat_tail_noise, 262144, 1, 0},
    {kat_tail_noise, 262144, 5, 34701},
    {kat_tail_noise, 262144, 7, 34701},
    {kat_tail_noise, 262144, 9, 34701},
    {kat_head_noise, 32768, 1, 16969},
    {kat_head_noise, 32768, 5, 16969},
    {kat_head_noise, 32768, 7, 0},
    {kat_head_noise, 32768, 9, 0},
    {kat_head_noise, 65541, 1, 17097},
    {kat_head_noise, 65541, 5, 17097},
    {kat_head_noise, 65541, 7, 0},
    {kat_head_noise, 65541, 9, 0},
    {kat_head_noise, 262144, 1, 17868},
    {kat_head_noise, 262144, 5, 17868},
    {kat_head_noise, 262144, 7, 0},
    {kat_head_noise, 262144, 9, 0},
};

}  // namespace

namespace {

// A heap buffer (exactly sized, so ASan sees any overrun) followed by guard bytes checked after each decode.
constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xA5;

struct buffer {
  owned_array<uint8_t> storage;
  size_t size = 0;
  bool init(size_t n) {
    if (n > (size_t{1} << 28)) return false;  // test sizes only (and it bounds n + kGuard for the compiler)
    size = n;
    if (!storage.allocate(test::system_allocator(), n + kGuard).ok()) return false;
    std::memset(storage.data(), 0, n);
    std::memset(storage.data() + n, kGuardByte, kGuard);
    return true;
  }
  uint8_t* data() { return storage.data(); }
  bytes_mut mut() { return bytes_mut(storage.data(), size); }
  bytes_view view() { return bytes_view(storage.data(), size); }
  bool guard_intact() {
    for (size_t i = 0; i < kGuard; ++i)
      if (storage.data()[size + i] != kGuardByte) return false;
    return true;
  }
};

// Data kinds for round trips: from incompressible to runs, with near, overlapping and far matches.
void fill(int kind, test::rng& r, uint8_t* p, size_t n) {
  switch (kind) {
    case 0: std::memset(p, 0, n); break;
    case 1:
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(r.next());
      break;
    case 2: kat_text(p, n); break;
    case 3: kat_ramp_shuffled(p, n); break;
    case 4: {  // int64 random walk, byte-shuffled with typesize 8
      const size_t count = n / 8;
      int64_t v = 0;
      for (size_t i = 0; i < count; ++i) {
        v += r.range(-1000, 1000);
        const uint64_t u = static_cast<uint64_t>(v);
        for (size_t j = 0; j < 8; ++j) p[j * count + i] = static_cast<uint8_t>(u >> (8 * j));
      }
      for (size_t k = count * 8; k < n; ++k) p[k] = 0;
      break;
    }
    case 5:
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>("acgt"[r.next() % 4]);
      break;
    case 6: {  // runs of random lengths
      size_t i = 0;
      while (i < n) {
        const uint8_t b = static_cast<uint8_t>(r.next());
        size_t len = static_cast<size_t>(r.range(1, r.chance(20) ? 3000 : 12));
        for (; len > 0 && i < n; --len) p[i++] = b;
      }
      break;
    }
    case 7: {  // random segments and copies from up to 80000 bytes back (far matches)
      size_t i = 0;
      while (i < n) {
        size_t len = static_cast<size_t>(r.range(1, 400));
        if (i > 0 && r.chance(60)) {
          const size_t back = static_cast<size_t>(r.range(1, i < 80000 ? static_cast<int64_t>(i) : 80000));
          for (; len > 0 && i < n; --len, ++i) p[i] = p[i - back];
        } else {
          for (; len > 0 && i < n; --len) p[i++] = static_cast<uint8_t>(r.next());
        }
      }
      break;
    }
    default: {  // short periods (overlapping matches at distances 2..9)
      const size_t period = static_cast<size_t>(r.range(2, 9));
      for (size_t i = 0; i < n; ++i) p[i] = i < period ? static_cast<uint8_t>(r.next()) : p[i - period];
      break;
    }
  }
}
constexpr int kKinds = 9;

// Decodes `stream` into a buffer of exactly `expected_size` bytes and checks it reproduces `expected`.
void check_decodes_to(test::context& t, bytes_view stream, const uint8_t* expected, size_t expected_size) {
  buffer out;
  REQUIRE(out.init(expected_size));
  auto r = blosclz_decompress(stream, out.mut());
  REQUIRE_OK(r);
  CHECK_EQ(r.value(), expected_size);
  CHECK(std::memcmp(out.data(), expected, expected_size) == 0);
  CHECK(out.guard_intact());
}

// Compresses `in` at `clevel` with maxout = in.size() and, when it compresses, checks the round trip.
// Returns the compressed size (0: gave up).
size_t round_trip(test::context& t, bytes_view in, int clevel, uint8_t* workspace) {
  buffer comp;
  if (!comp.init(in.size())) return 0;
  auto r = blosclz_compress(clevel, in, comp.mut(), bytes_mut(workspace, blosclz_workspace_size(clevel)));
  CHECK_OK(r);
  if (!r.ok()) return 0;
  CHECK(comp.guard_intact());
  const size_t csize = r.value();
  CHECK_LE(csize, in.size());
  if (csize != 0) check_decodes_to(t, bytes_view(comp.data(), csize), in.data(), in.size());
  return csize;
}

}  // namespace

TESSERA_TEST(blosclz, decodes_reference_streams) {
  for (const known_answer& k : kKnownAnswers) {
    buffer expected;
    REQUIRE(expected.init(k.size));
    k.generate(expected.data(), k.size);
    check_decodes_to(t, bytes_view(k.stream, k.stream_size), expected.data(), k.size);
    // One byte short of room: the decoder refuses rather than writing past the buffer.
    buffer small;
    REQUIRE(small.init(k.size - 1));
    CHECK_ERR(blosclz_decompress(bytes_view(k.stream, k.stream_size), small.mut()), errc::corrupt);
    CHECK(small.guard_intact());
  }
}

TESSERA_TEST(blosclz, compressor_writes_the_reference_bytes) {
  buffer ws;
  REQUIRE(ws.init(detail::kBlosclzWorkspaceMax));
  for (const known_answer& k : kKnownAnswers) {
    buffer in, out;
    REQUIRE(in.init(k.size));
    REQUIRE(out.init(k.size));
    k.generate(in.data(), k.size);
    auto r = blosclz_compress(k.clevel, in.view(), out.mut(), ws.mut());
    REQUIRE_OK(r);
    CHECK_EQ(r.value(), k.stream_size);
    CHECK(r.value() == k.stream_size && std::memcmp(out.data(), k.stream, k.stream_size) == 0);
  }
}

TESSERA_TEST(blosclz, compressed_sizes_match_the_reference) {
  buffer ws;
  REQUIRE(ws.init(detail::kBlosclzWorkspaceMax));
  for (const known_size& k : kKnownSizes) {
    buffer in;
    REQUIRE(in.init(k.size));
    k.generate(in.data(), k.size);
    CHECK_EQ(round_trip(t, in.view(), k.clevel, ws.data()), k.compressed);
  }
}

TESSERA_TEST(blosclz, round_trips_kinds_sizes_levels) {
  static const size_t kSizes[] = {0, 1, 2, 3, 15, 16, 17, 31, 64, 65, 66, 67, 100, 255, 1000, 4097, 32771, 65536};
  buffer ws, in;
  REQUIRE(ws.init(detail::kBlosclzWorkspaceMax));
  REQUIRE(in.init(262144));
  test::rng r(0xb105c12);
  for (int kind = 0; kind < kKinds; ++kind) {
    for (size_t n : kSizes) {
      fill(kind, r, in.data(), n);
      for (int clevel = 1; clevel <= 9; ++clevel) {
        const size_t csize = round_trip(t, bytes_view(in.data(), n), clevel, ws.data());
        if (n < 16) CHECK_EQ(csize, 0u);                        // the reference's minimum block
        if (kind == 1 && n >= 16) CHECK_EQ(csize, 0u);          // random bytes never pay off
        if (kind == 0 && n >= 1000) CHECK_LT(csize, n / 20);    // zeros always do
      }
    }
  }
  // Full-size blocks of every kind at a few levels.
  for (int kind = 0; kind < kKinds; ++kind) {
    fill(kind, r, in.data(), 262144);
    for (int clevel : {1, 5, 9}) round_trip(t, in.view(), clevel, ws.data());
  }
}

TESSERA_TEST(blosclz, gives_up_when_output_is_too_small) {
  buffer ws, in;
  REQUIRE(ws.init(detail::kBlosclzWorkspaceMax));
  REQUIRE(in.init(20000));
  test::rng r(42);
  for (int kind : {0, 2, 3, 6, 8}) {
    fill(kind, r, in.data(), in.size);
    for (int clevel : {1, 4, 9}) {
      buffer full;
      REQUIRE(full.init(in.size));
      auto f = blosclz_compress(clevel, in.view(), full.mut(), ws.mut());
      REQUIRE_OK(f);
      const size_t csize = f.value();
      REQUIRE(csize != 0);
      // One spare byte is enough for the same stream; one byte fewer than the stream is not.
      buffer exact;
      REQUIRE(exact.init(csize + 1));
      auto e = blosclz_compress(clevel, in.view(), exact.mut(), ws.mut());
      REQUIRE_OK(e);
      CHECK_EQ(e.value(), csize);
      CHECK(std::memcmp(exact.data(), full.data(), csize) == 0);
      CHECK(exact.guard_intact());
      if (csize > 66) {
        buffer tight;
        REQUIRE(tight.init(csize - 1));
        auto s = blosclz_compress(clevel, in.view(), tight.mut(), ws.mut());
        REQUIRE_OK(s);
        CHECK_EQ(s.value(), 0u);
        CHECK(tight.guard_intact());
      }
    }
  }
  // Outputs under 66 bytes are refused outright, even for zeros.
  std::memset(in.data(), 0, 1000);
  uint8_t out[65];
  auto z = blosclz_compress(9, bytes_view(in.data(), 1000), bytes_mut(out, sizeof out), ws.mut());
  REQUIRE_OK(z);
  CHECK_EQ(z.value(), 0u);
}

// Every output size from the smallest accepted to the stream's own, over an input of short, long (past 262)
// and far (past 8191) matches and literal runs: each either gives up (0) or writes a stream that decodes to
// the input, and never writes past the output. The encoder runs out of room at every kind of token.
TESSERA_TEST(blosclz, every_output_size_gives_up_or_round_trips) {
  buffer ws, in;
  REQUIRE(ws.init(detail::kBlosclzWorkspaceMax));
  REQUIRE(in.init(12288));
  test::rng r(7);
  uint8_t* p = in.data();
  // 8704 bytes that compress to about half (64 random bytes, then the same again), far from what follows.
  for (size_t i = 0; i < 8704; i += 128) {
    for (size_t j = 0; j < 64; ++j) p[i + j] = static_cast<uint8_t>(r.next());
    std::memcpy(p + i + 64, p + i, 64);
  }
  size_t pos = 8704;
  const size_t lengths[] = {5, 9, 40, 300, 700};
  for (size_t k = 0; pos < in.size; ++k) {
    // A far match (from the start), a near one (from just before), then a few literals.
    const size_t len = lengths[k % 5];
    const size_t from = k % 2 == 0 ? k * 131 % 8000 : pos - 64 - k;
    for (size_t i = 0; i < len && pos < in.size; ++i) p[pos++] = p[from + i];
    for (size_t i = 0; i < 3 + k % 40 && pos < in.size; ++i) p[pos++] = static_cast<uint8_t>(r.next());
  }
  buffer back;
  REQUIRE(back.init(in.size));
  for (int clevel : {1, 5, 9}) {
    buffer full;
    REQUIRE(full.init(in.size));
    auto f = blosclz_compress(clevel, in.view(), full.mut(), ws.mut());
    REQUIRE_OK(f);
    const size_t csize = f.value();
    REQUIRE(csize != 0);
    size_t gave_up = 0;
    for (size_t cap = 66; cap <= csize; ++cap) {
      buffer out;
      REQUIRE(out.init(cap));
      auto c = blosclz_compress(clevel, in.view(), out.mut(), ws.mut());
      REQUIRE_OK(c);
      CHECK(out.guard_intact());
      if (c.value() == 0) {
        ++gave_up;
        continue;
      }
      CHECK(c.value() <= cap);
      auto d = blosclz_decompress(bytes_view(out.data(), c.value()), back.mut());
      REQUIRE_OK(d);
      CHECK_EQ(d.value(), in.size);
      CHECK(std::memcmp(back.data(), in.data(), in.size) == 0);
    }
    CHECK(gave_up > 0);  // the smallest outputs cannot hold the stream
  }
}

TESSERA_TEST(blosclz, probe_skips_blocks_with_a_noisy_tail_at_low_levels) {
  buffer ws, in, out;
  REQUIRE(ws.init(detail::kBlosclzWorkspaceMax));
  REQUIRE(in.init(32768));
  REQUIRE(out.init(32768));
  kat_tail_noise(in.data(), in.size);
  auto low = blosclz_compress(1, in.view(), out.mut(), ws.mut());
  REQUIRE_OK(low);
  CHECK_EQ(low.value(), 0u);
  auto high = blosclz_compress(9, in.view(), out.mut(), ws.mut());
  REQUIRE_OK(high);
  CHECK_LT(high.value(), in.size / 4);
}

TESSERA_TEST(blosclz, rejects_bad_arguments) {
  CHECK_EQ(blosclz_workspace_size(0), 0u);
  CHECK_EQ(blosclz_workspace_size(10), 0u);
  // The reference's hash tables: 2^12 entries at clevel 1, 2^13 at 2, 2^14 above; uint32 each, +3 for alignment.
  CHECK_EQ(blosclz_workspace_size(1), 16384u + 3u);
  CHECK_EQ(blosclz_workspace_size(2), 32768u + 3u);
  for (int c = 3; c <= 9; ++c) CHECK_EQ(blosclz_workspace_size(c), 65536u + 3u);
  CHECK_EQ(detail::kBlosclzWorkspaceMax, blosclz_workspace_size(9));

  buffer ws, in, out;
  REQUIRE(ws.init(detail::kBlosclzWorkspaceMax));
  REQUIRE(in.init(4096));
  REQUIRE(out.init(4096));
  CHECK_ERR(blosclz_compress(0, in.view(), out.mut(), ws.mut()), errc::invalid_argument);
  CHECK_ERR(blosclz_compress(10, in.view(), out.mut(), ws.mut()), errc::invalid_argument);
  CHECK_ERR(blosclz_compress(-1, in.view(), out.mut(), ws.mut()), errc::invalid_argument);
  // Below the smallest table (2^8 entries) the workspace is refused at every level.
  for (int c = 1; c <= 9; ++c) {
    CHECK_ERR(blosclz_compress(c, in.view(), out.mut(),
                               bytes_mut(ws.data(), detail::blosclz_workspace_size_for_log(detail::kBlosclzHashLogMin) - 1)),
              errc::invalid_argument);
  }
  // Any alignment of the workspace works and gives the same stream.
  kat_text(in.data(), in.size);
  auto a = blosclz_compress(5, in.view(), out.mut(), bytes_mut(ws.data(), blosclz_workspace_size(5)));
  REQUIRE_OK(a);
  buffer out2;
  REQUIRE(out2.init(4096));
  for (size_t skew = 1; skew < 4; ++skew) {
    auto b = blosclz_compress(5, in.view(), out2.mut(), bytes_mut(ws.data() + skew, blosclz_workspace_size(5)));
    REQUIRE_OK(b);
    CHECK_EQ(b.value(), a.value());
    CHECK(std::memcmp(out.data(), out2.data(), a.value()) == 0);
  }
}

TESSERA_TEST(blosclz, decodes_handmade_streams) {
  {  // literals only; the marker bits of the first token are ignored
    const uint8_t s1[] = {0x02, 'a', 'b', 'c'};
    const uint8_t s2[] = {0x22, 'a', 'b', 'c'};
    check_decodes_to(t, s1, reinterpret_cast<const uint8_t*>("abc"), 3);
    check_decodes_to(t, s2, reinterpret_cast<const uint8_t*>("abc"), 3);
  }
  {  // short match: length code 1 -> 3 bytes, distance 3 + 1 = 4
    const uint8_t s[] = {0x03, 'a', 'b', 'c', 'd', 0x20, 0x03, 0x00, 'z'};
    check_decodes_to(t, s, reinterpret_cast<const uint8_t*>("abcdabcz"), 8);
  }
  {  // run: length code 2 -> 4 bytes at distance 1
    const uint8_t s[] = {0x00, 'x', 0x40, 0x00, 0x00, 'y'};
    check_decodes_to(t, s, reinterpret_cast<const uint8_t*>("xxxxxy"), 6);
  }
  {  // long match: 9 + 5 bytes at distance 1
    const uint8_t s[] = {0x00, 'x', 0xE0, 0x05, 0x00, 0x00, 'y'};
    check_decodes_to(t, s, reinterpret_cast<const uint8_t*>("xxxxxxxxxxxxxxxy"), 16);
  }
  {  // overlapping match at distance 2 (an "abab..." period)
    const uint8_t s[] = {0x01, 'a', 'b', 0x60, 0x01, 0x00, '.'};
    check_decodes_to(t, s, reinterpret_cast<const uint8_t*>("abababa."), 8);
  }
  {  // far match: "ABCD", 8196 x 'D' (9 + 32*255 + 27), "wxyz", then 3 bytes from 8192 + 12 back, "!"
    uint8_t s[64];
    size_t n = 0;
    s[n++] = 0x03;
    for (char c : {'A', 'B', 'C', 'D'}) s[n++] = static_cast<uint8_t>(c);
    s[n++] = 0xE0;
    for (int i = 0; i < 32; ++i) s[n++] = 0xFF;
    s[n++] = 27;
    s[n++] = 0x00;
    s[n++] = 0x03;
    for (char c : {'w', 'x', 'y', 'z'}) s[n++] = static_cast<uint8_t>(c);
    const size_t far_at = n;
    s[n++] = 0x3F;
    s[n++] = 0xFF;
    s[n++] = 0x00;
    s[n++] = 0x0C;
    s[n++] = 0x00;
    s[n++] = '!';
    buffer expected;
    REQUIRE(expected.init(8208));
    std::memcpy(expected.data(), "ABCD", 4);
    std::memset(expected.data() + 4, 'D', 8196);
    std::memcpy(expected.data() + 8200, "wxyzABC!", 8);
    check_decodes_to(t, bytes_view(s, n), expected.data(), 8208);
    // One byte further back than the output holds.
    s[far_at + 3] = 0x0D;
    buffer out;
    REQUIRE(out.init(8208));
    CHECK_ERR(blosclz_decompress(bytes_view(s, n), out.mut()), errc::corrupt);
    CHECK(out.guard_intact());
  }
}

TESSERA_TEST(blosclz, rejects_malformed_streams) {
  buffer out;
  REQUIRE(out.init(64));
  auto decode = [&](bytes_view s) { return blosclz_decompress(s, out.mut()); };
  CHECK_ERR(decode(bytes_view()), errc::truncated);
  {
    const uint8_t s[] = {0x05, 'a'};  // literal run of 6 with 1 byte present
    CHECK_ERR(decode(s), errc::truncated);
  }
  {
    const uint8_t s[] = {0x00, 'a', 0x20, 0x05, 0x00, 'b'};  // distance 6 with 1 byte of output
    CHECK_ERR(decode(s), errc::corrupt);
  }
  {
    const uint8_t s[] = {0x00, 'a', 0x20, 0x00};  // ends with a match
    CHECK_ERR(decode(s), errc::truncated);
  }
  {
    const uint8_t s[] = {0x00, 'a', 0x20};  // ends inside a match
    CHECK_ERR(decode(s), errc::truncated);
  }
  {
    const uint8_t s[] = {0x00, 'a', 0xE0, 0x01};  // ends inside a long match
    CHECK_ERR(decode(s), errc::truncated);
  }
  {
    const uint8_t s[] = {0x00, 'a', 0x3F, 0xFF, 0x00};  // ends inside a far distance
    CHECK_ERR(decode(s), errc::truncated);
  }
  {
    const uint8_t s[] = {0x00, 'a', 0xE0, 0xFF, 0xFF, 0x00, 0x00, 'b'};  // 519 bytes into 64
    CHECK_ERR(decode(s), errc::corrupt);
  }
  {
    uint8_t s[3 * 33];  // three full literal runs: 96 bytes into 64
    for (size_t i = 0; i < sizeof s; i += 33) {
      s[i] = 31;
      std::memset(s + i + 1, 'q', 32);
    }
    CHECK_ERR(decode(bytes_view(s, 98)), errc::truncated);
    buffer big;
    REQUIRE(big.init(200));
    auto ok = blosclz_decompress(bytes_view(s, 99), big.mut());
    REQUIRE_OK(ok);
    CHECK_EQ(ok.value(), 96u);
    CHECK_ERR(decode(bytes_view(s, 99)), errc::corrupt);
  }
  CHECK(out.guard_intact());
}

namespace {

// Every prefix of a valid stream decodes to an error or to a prefix of the content.
void check_truncations(test::context& t, bytes_view stream, const uint8_t* content, size_t content_size) {
  buffer out;
  REQUIRE(out.init(content_size));
  for (size_t len = 0; len < stream.size(); ++len) {
    auto r = blosclz_decompress(stream.subspan(0, len), out.mut());
    if (r.ok()) {
      CHECK_LT(r.value(), content_size);
      CHECK(std::memcmp(out.data(), content, r.value()) == 0);
    } else {
      CHECK(r.err().code == errc::truncated || r.err().code == errc::corrupt);
    }
    CHECK(out.guard_intact());
  }
}

// Random damage never makes the decoder leave its buffers; results stay within the output.
void check_corruptions(test::context& t, test::rng& r, bytes_view stream, size_t content_size, int rounds) {
  buffer damaged, out;
  REQUIRE(damaged.init(stream.size()));
  REQUIRE(out.init(content_size));
  for (int i = 0; i < rounds; ++i) {
    std::memcpy(damaged.data(), stream.data(), stream.size());
    const int edits = static_cast<int>(r.range(1, 4));
    for (int e = 0; e < edits; ++e) {
      const size_t at = static_cast<size_t>(r.range(0, static_cast<int64_t>(stream.size()) - 1));
      const uint8_t flipped = static_cast<uint8_t>(damaged.data()[at] ^ (1u << r.range(0, 7)));
      damaged.data()[at] = r.chance(50) ? static_cast<uint8_t>(r.next()) : flipped;
    }
    const int64_t whole = static_cast<int64_t>(stream.size());
    const size_t len = static_cast<size_t>(r.chance(20) ? r.range(0, whole) : whole);
    auto d = blosclz_decompress(bytes_view(damaged.data(), len), out.mut());
    if (d.ok()) CHECK_LE(d.value(), content_size);
    else CHECK(d.err().code == errc::truncated || d.err().code == errc::corrupt);
    REQUIRE(out.guard_intact());
  }
}

}  // namespace

TESSERA_TEST(blosclz, truncated_streams_fail_cleanly) {
  for (const known_answer& k : kKnownAnswers) {
    buffer content;
    REQUIRE(content.init(k.size));
    k.generate(content.data(), k.size);
    check_truncations(t, bytes_view(k.stream, k.stream_size), content.data(), k.size);
  }
  // Our own streams over the harder kinds.
  buffer ws, in, comp;
  REQUIRE(ws.init(detail::kBlosclzWorkspaceMax));
  REQUIRE(in.init(3000));
  REQUIRE(comp.init(3000));
  test::rng r(7);
  for (int kind : {3, 6, 7, 8}) {
    fill(kind, r, in.data(), in.size);
    auto c = blosclz_compress(9, in.view(), comp.mut(), ws.mut());
    REQUIRE_OK(c);
    REQUIRE(c.value() != 0);
    check_truncations(t, bytes_view(comp.data(), c.value()), in.data(), in.size);
  }
}

TESSERA_TEST(blosclz, corrupted_streams_stay_in_bounds) {
  test::rng r(0xc0ffee);
  for (const known_answer& k : kKnownAnswers)
    check_corruptions(t, r, bytes_view(k.stream, k.stream_size), k.size, 600);
  buffer ws, in, comp;
  REQUIRE(ws.init(detail::kBlosclzWorkspaceMax));
  REQUIRE(in.init(20000));
  REQUIRE(comp.init(20000));
  for (int kind : {0, 3, 6, 7, 8}) {
    fill(kind, r, in.data(), in.size);
    auto c = blosclz_compress(5, in.view(), comp.mut(), ws.mut());
    REQUIRE_OK(c);
    REQUIRE(c.value() != 0);
    check_corruptions(t, r, bytes_view(comp.data(), c.value()), in.size, 400);
  }
  // Pure noise as a stream, into outputs of many sizes.
  buffer noise;
  REQUIRE(noise.init(512));
  for (int i = 0; i < 1000; ++i) {
    const size_t len = static_cast<size_t>(r.range(0, 512));
    for (size_t j = 0; j < len; ++j) noise.data()[j] = static_cast<uint8_t>(r.next());
    buffer out;
    REQUIRE(out.init(static_cast<size_t>(r.range(0, 5000))));
    auto d = blosclz_decompress(bytes_view(noise.data(), len), out.mut());
    if (d.ok()) CHECK_LE(d.value(), out.size);
    REQUIRE(out.guard_intact());
  }
}

// A firmware's smaller match table (a workspace below the reference's): every stream decodes to its input, the
// reference's table gives the reference's bytes, and zeros compress with any table.
TESSERA_TEST(blosclz, smaller_tables_write_valid_streams) {
  buffer ws, in, ref, small;
  REQUIRE(ws.init(detail::kBlosclzWorkspaceMax));
  REQUIRE(in.init(65536));
  REQUIRE(ref.init(65536));
  REQUIRE(small.init(65536));
  test::rng r(0x7ab1e);
  for (int kind = 0; kind < kKinds; ++kind) {
    fill(kind, r, in.data(), in.size);
    for (int clevel : {1, 3, 5, 9}) {
      auto a = blosclz_compress(clevel, in.view(), ref.mut(), bytes_mut(ws.data(), blosclz_workspace_size(clevel)));
      REQUIRE_OK(a);
      for (unsigned log = detail::kBlosclzHashLogMax; log >= detail::kBlosclzHashLogMin; --log) {
        auto b = blosclz_compress(clevel, in.view(), small.mut(),
                                  bytes_mut(ws.data(), detail::blosclz_workspace_size_for_log(log)));
        REQUIRE_OK(b);
        if (detail::blosclz_workspace_size_for_log(log) >= blosclz_workspace_size(clevel)) {
          // The reference's table fits: the reference's bytes.
          CHECK_EQ(b.value(), a.value());
          CHECK(b.value() == a.value() && std::memcmp(ref.data(), small.data(), a.value()) == 0);
        }
        if (b.value() != 0) check_decodes_to(t, bytes_view(small.data(), b.value()), in.data(), in.size);
        if (kind == 0) CHECK(b.value() != 0);  // zeros compress with any table
      }
    }
  }
}

TESSERA_TEST(blosclz, an_input_past_int32_is_refused_before_it_is_read) {
  // The size alone decides: the bytes past the first are never touched (the reference's int lengths).
  static uint8_t workspace[detail::blosclz_workspace_size_for_log(detail::kBlosclzHashLogMin)];
  static uint8_t in[1];
  static uint8_t out[64];
  const bytes_view huge(in, static_cast<size_t>(INT32_MAX) + 1);
  CHECK_ERR(blosclz_compress(5, huge, bytes_mut(out, sizeof out), bytes_mut(workspace, sizeof workspace)),
            errc::invalid_argument);
}
