// SPDX-License-Identifier: BSD-3-Clause
// The reference vectors the reference implementation keeps for its own filters (golden/compat): the byte
// shuffle and the bit shuffle, typesize 4, of the little-endian int32 sequence 0..999999 as one buffer of
// 4,000,000 bytes. tests/data keeps their SHA-256 (NAME.cdata.sha256): each vector is made here from its
// definition with plain loops and must have the reference's digest; then every kernel level available here must
// produce it and undo it. Linux only (files).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/shuffle.hpp"

#include "../support/check.hpp"
#include "../support/test_data.hpp"

using namespace tessera;

namespace {

constexpr size_t kCount = 1000000;
constexpr size_t kBytes = 4 * kCount;

std::vector<uint8_t> int32_sequence() {
  std::vector<uint8_t> v(kBytes);
  for (size_t i = 0; i < kCount; ++i)
    for (unsigned b = 0; b < 4; ++b) v[4 * i + b] = static_cast<uint8_t>(i >> (8 * b));
  return v;
}

// The byte shuffle of seq by its definition: byte b of every item, then byte b + 1 of every item.
std::vector<uint8_t> byte_shuffle_of(const std::vector<uint8_t>& seq) {
  std::vector<uint8_t> out(kBytes);
  for (size_t b = 0; b < 4; ++b)
    for (size_t i = 0; i < kCount; ++i) out[b * kCount + i] = seq[4 * i + b];
  return out;
}

// The bit shuffle of seq by its definition: 32 bit planes of kCount bits (plane 8 * b + k: bit k of byte b of
// every item), item i's bit at bit i % 8 of byte i / 8 of its plane.
std::vector<uint8_t> bit_shuffle_of(const std::vector<uint8_t>& seq) {
  std::vector<uint8_t> out(kBytes, 0);
  for (size_t plane = 0; plane < 32; ++plane)
    for (size_t i = 0; i < kCount; ++i)
      if ((seq[4 * i + plane / 8] >> (plane % 8)) & 1u)
        out[plane * (kCount / 8) + i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  return out;
}

// The vector `name` (compat/NAME.cdata), made by its definition; empty when its SHA-256 is not the digest
// tests/data keeps (or that is missing): the check then fails.
std::vector<uint8_t> reference_vector(test::context& t, const char* name, bool bits, const std::vector<uint8_t>& seq) {
  test::reference_output ref;
  if (!test::reference_load(test::data_path(std::string("golden/compat/") + name), ref)) return {};
  std::vector<uint8_t> v = bits ? bit_shuffle_of(seq) : byte_shuffle_of(seq);
  if (!test::reference_matches(ref, v.data(), v.size())) {
    char text[160];
    std::snprintf(text, sizeof text, "the %s of the int32 sequence does not have the SHA-256 of %s",
                  bits ? "bit shuffle" : "byte shuffle", name);
    test::report_failure(t, __FILE__, __LINE__, text);
    return {};
  }
  return v;
}

constexpr simd_level kLevels[] = {simd_level::scalar, simd_level::sse2, simd_level::avx2, simd_level::neon,
                                  simd_level::altivec};

void check_levels(test::context& t, const char* file, bool bits) {
  const std::vector<uint8_t> seq = int32_sequence();
  const std::vector<uint8_t> golden = reference_vector(t, file, bits, seq);
  REQUIRE_EQ(golden.size(), kBytes);  // a missing digest, or a vector without it, fails
  std::vector<uint8_t> out(kBytes), back(kBytes), scratch(kBytes);
  int levels = 0;
  for (simd_level level : kLevels) {
    const shuffle_kernels* k = shuffle_kernels_for(level);
    if (k == nullptr) continue;
    // Small firmware builds (TESSERA_WITH_BITSHUFFLE 0) have no scalar bit kernels: nothing to check there.
    if (bits && TESSERA_WITH_BITSHUFFLE == 0 && level == simd_level::scalar) {
      CHECK(k->bitshuffle == nullptr && k->bitunshuffle == nullptr);
      ++levels;
      continue;
    }
    ++levels;
    std::memset(out.data(), 0, kBytes);
    if (bits) k->bitshuffle(4, kBytes, seq.data(), out.data(), scratch.data());
    else k->shuffle(4, kBytes, seq.data(), out.data());
    if (out != golden) {
      size_t at = 0;
      while (out[at] == golden[at]) ++at;
      char text[160];
      std::snprintf(text, sizeof text, "level %s: %s differs from %s at byte %zu", simd_level_name(level),
                    bits ? "bitshuffle" : "shuffle", file, at);
      test::report_failure(t, __FILE__, __LINE__, text);
    }
    std::memset(back.data(), 0, kBytes);
    if (bits) k->bitunshuffle(4, kBytes, golden.data(), back.data(), scratch.data());
    else k->unshuffle(4, kBytes, golden.data(), back.data());
    if (back != seq) {
      char text[160];
      std::snprintf(text, sizeof text, "level %s: undoing %s does not give the int32 sequence back",
                    simd_level_name(level), file);
      test::report_failure(t, __FILE__, __LINE__, text);
    }
  }
  CHECK_LE(1, levels);
}

}  // namespace

TESSERA_TEST(shuffle_golden, byte_shuffle_reproduces_the_reference_vector) {
  check_levels(t, "shuffle-2.20.0.cdata", false);
}

TESSERA_TEST(shuffle_golden, bit_shuffle_reproduces_the_reference_vector) {
  check_levels(t, "bitshuffle-2.20.0.cdata", true);
}
