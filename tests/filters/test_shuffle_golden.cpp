// SPDX-License-Identifier: BSD-3-Clause
// The reference vectors the reference implementation keeps for its own filters (golden/compat): the byte
// shuffle and the bit shuffle, typesize 4, of the little-endian int32 sequence 0..999999 as one buffer of
// 4,000,000 bytes. Every kernel level available here must produce them and undo them. Linux only (files).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/shuffle.hpp"

#include "../support/check.hpp"

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

// The whole file, or an empty vector when it cannot be read.
std::vector<uint8_t> read_golden(const char* name) {
  std::string path = std::string(TESSERA_SHARED_DIR) + "/golden/compat/" + name;
  std::vector<uint8_t> data;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return data;
  uint8_t buf[65536];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + got);
  std::fclose(f);
  return data;
}

constexpr simd_level kLevels[] = {simd_level::scalar, simd_level::sse2, simd_level::avx2, simd_level::neon,
                                  simd_level::altivec};

void check_levels(test::context& t, const char* file, bool bits) {
  const std::vector<uint8_t> golden = read_golden(file);
  REQUIRE_EQ(golden.size(), kBytes);  // a missing or short file fails
  const std::vector<uint8_t> seq = int32_sequence();
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
