// SPDX-License-Identifier: BSD-3-Clause
// Every shuffle kernel level this build and CPU can run, against a bit-by-bit model of the format written from
// its definition (independent of any kernel's transposition tricks), for many typesizes and sizes around the
// vector widths, plus round trips, bounds (no byte written past `size`) and the dispatch controls.
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "tessera/shuffle.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"

using namespace tessera;

namespace {

constexpr simd_level kLevels[] = {simd_level::scalar, simd_level::sse2, simd_level::avx2, simd_level::neon,
                                  simd_level::altivec};

constexpr size_t kMaxSize = 256 * 260;  // the largest case: typesize 256, 257 elements, a partial element
constexpr size_t kGuard = 64;           // bytes after each output that must stay untouched
constexpr size_t kSlack = 32;           // room for misaligning the buffers
constexpr uint8_t kGuardByte = 0xA5;

// Static: the bare-metal target has a small stack.
uint8_t g_src[kMaxSize + kSlack];
uint8_t g_model[kMaxSize + kSlack];
uint8_t g_bit_model[kMaxSize + kSlack];
uint8_t g_out[kMaxSize + kSlack + kGuard];
uint8_t g_scratch[kMaxSize + kSlack + kGuard];

// dst[j * n + i] = src[i * ts + j], the size % ts trailing bytes unchanged.
void model_shuffle(size_t ts, size_t size, const uint8_t* src, uint8_t* dst) {
  const size_t n = size / ts;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < ts; ++j) dst[j * n + i] = src[i * ts + j];
  for (size_t k = n * ts; k < size; ++k) dst[k] = src[k];
}

// Bit b of byte j of element i (i < n8) is bit i % 8 of byte i / 8 of plane 8 * j + b (n8 / 8 bytes a plane).
void model_bitshuffle(size_t ts, size_t size, const uint8_t* src, uint8_t* dst) {
  const size_t n8 = size / ts / 8 * 8;
  const size_t plane_bytes = n8 / 8;
  std::memset(dst, 0, n8 * ts);
  for (size_t i = 0; i < n8; ++i)
    for (size_t j = 0; j < ts; ++j)
      for (unsigned b = 0; b < 8; ++b)
        if ((src[i * ts + j] >> b) & 1u)
          dst[(8 * j + b) * plane_bytes + i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  for (size_t k = n8 * ts; k < size; ++k) dst[k] = src[k];
}

enum class kernel_kind { shuffle, unshuffle, bitshuffle, bitunshuffle };

// Small firmware builds (TESSERA_WITH_BITSHUFFLE 0) leave the scalar table without bit kernels (null).
bool has_bit_kernels(const shuffle_kernels& k) { return TESSERA_WITH_BITSHUFFLE != 0 || k.level != simd_level::scalar; }
const char* kernel_name(kernel_kind k) {
  switch (k) {
    case kernel_kind::shuffle: return "shuffle";
    case kernel_kind::unshuffle: return "unshuffle";
    case kernel_kind::bitshuffle: return "bitshuffle";
    case kernel_kind::bitunshuffle: return "bitunshuffle";
  }
  return "?";
}

// Runs one kernel into g_out (at offset out_off, guard bytes after `size`) and compares it with `expected`.
bool run_and_compare(test::context& t, const shuffle_kernels& k, kernel_kind kind, size_t ts, size_t size,
                     const uint8_t* in, size_t out_off, const uint8_t* expected) {
  uint8_t* out = g_out + out_off;
  uint8_t* scratch = g_scratch + (out_off ^ 5) % kSlack;
  std::memset(out, 0x5A, size);
  std::memset(out + size, kGuardByte, kGuard);
  std::memset(scratch + size, kGuardByte, kGuard);
  switch (kind) {
    case kernel_kind::shuffle: k.shuffle(ts, size, in, out); break;
    case kernel_kind::unshuffle: k.unshuffle(ts, size, in, out); break;
    case kernel_kind::bitshuffle: k.bitshuffle(ts, size, in, out, scratch); break;
    case kernel_kind::bitunshuffle: k.bitunshuffle(ts, size, in, out, scratch); break;
  }
  const char* what = nullptr;
  size_t at = 0;
  for (size_t i = 0; i < size && what == nullptr; ++i)
    if (out[i] != expected[i]) what = "wrong byte", at = i;
  for (size_t i = 0; i < kGuard && what == nullptr; ++i)
    if (out[size + i] != kGuardByte) what = "wrote past size in dst", at = size + i;
  for (size_t i = 0; i < kGuard && what == nullptr; ++i)
    if (scratch[size + i] != kGuardByte) what = "wrote past size in scratch", at = size + i;
  if (what == nullptr) return true;
  char text[200];
  std::snprintf(text, sizeof text, "%s: level %s %s typesize %zu size %zu: byte %zu", what,
                simd_level_name(k.level), kernel_name(kind), ts, size, at);
  test::report_failure(t, __FILE__, __LINE__, text);
  return false;
}

// The element counts around the vector blocks (8, 16, 32 elements) and tile loops.
constexpr size_t kCountsSmallType[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 47, 48, 63, 64, 65, 96,
                                       127, 128, 129, 200, 255, 256, 257, 1000};
constexpr size_t kCountsLargeType[] = {0, 1, 8, 15, 31, 32, 33, 64, 65, 129, 257};
constexpr size_t kTypesizes[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17,
                                 18, 20, 24, 31, 32, 33, 40, 48, 63, 64, 100, 255, 256};

// Checks every available level on one (typesize, size) case; false after the first failure.
bool check_case(test::context& t, test::rng& rng, size_t ts, size_t size) {
  const size_t src_off = static_cast<size_t>(rng.range(0, kSlack - 1));
  const size_t out_off = static_cast<size_t>(rng.range(0, kSlack - 1));
  uint8_t* src = g_src + src_off;
  // Mostly random bytes, sometimes sparse ones (mostly zero: runs in the bit planes).
  const bool sparse = rng.chance(25);
  for (size_t i = 0; i < size; ++i) {
    const uint64_t r = rng.next();
    src[i] = sparse ? static_cast<uint8_t>((r & 0xF00) == 0 ? r : 0) : static_cast<uint8_t>(r);
  }
  model_shuffle(ts, size, src, g_model);
  model_bitshuffle(ts, size, src, g_bit_model);
  for (simd_level level : kLevels) {
    const shuffle_kernels* k = shuffle_kernels_for(level);
    if (k == nullptr) continue;
    if (!run_and_compare(t, *k, kernel_kind::shuffle, ts, size, src, out_off, g_model)) return false;
    // Unshuffling the model's output must give the input back (both maps are bijections, so this checks
    // the inverse kernels fully).
    if (!run_and_compare(t, *k, kernel_kind::unshuffle, ts, size, g_model, out_off, src)) return false;
    if (!has_bit_kernels(*k)) continue;
    if (!run_and_compare(t, *k, kernel_kind::bitshuffle, ts, size, src, out_off, g_bit_model)) return false;
    if (!run_and_compare(t, *k, kernel_kind::bitunshuffle, ts, size, g_bit_model, out_off, src)) return false;
  }
  return true;
}

}  // namespace

TESSERA_TEST(shuffle, every_level_matches_the_model_for_all_typesizes_and_sizes) {
  test::rng rng(0x5EED5u);
  size_t cases = 0;
  for (size_t ts : kTypesizes) {
    const bool small = ts <= 16;
    const size_t* counts = small ? kCountsSmallType : kCountsLargeType;
    const size_t ncounts = small ? sizeof kCountsSmallType / sizeof(size_t) : sizeof kCountsLargeType / sizeof(size_t);
    for (size_t c = 0; c < ncounts; ++c) {
      // Whole elements, and whole elements plus a partial one.
      const size_t extra = ts > 1 ? static_cast<size_t>(rng.range(1, static_cast<int64_t>(ts) - 1)) : 0;
      for (size_t size : {counts[c] * ts, counts[c] * ts + extra}) {
        REQUIRE(size <= kMaxSize);
        if (!check_case(t, rng, ts, size)) return;
        ++cases;
      }
    }
  }
  CHECK_LT(1000u, cases);
}

TESSERA_TEST(shuffle, every_level_matches_the_model_for_random_sizes) {
  test::rng rng(0xB175u);
  for (int c = 0; c < 400; ++c) {
    const size_t ts = static_cast<size_t>(rng.chance(70) ? rng.range(1, 17) : rng.range(18, 300));
    const size_t size = static_cast<size_t>(rng.range(0, static_cast<int64_t>(ts < 16 ? 8192 : kMaxSize / 4)));
    if (!check_case(t, rng, ts, size)) return;
  }
}

TESSERA_TEST(shuffle, round_trips_through_every_level) {
  test::rng rng(0x7217u);
  for (int c = 0; c < 300; ++c) {
    const size_t ts = static_cast<size_t>(rng.range(1, 70));
    const size_t size = static_cast<size_t>(rng.range(0, 6000));
    for (size_t i = 0; i < size; ++i) g_src[i] = static_cast<uint8_t>(rng.next());
    for (simd_level level : kLevels) {
      const shuffle_kernels* k = shuffle_kernels_for(level);
      if (k == nullptr) continue;
      k->shuffle(ts, size, g_src, g_model);
      k->unshuffle(ts, size, g_model, g_out);
      REQUIRE(std::memcmp(g_out, g_src, size) == 0);
      if (!has_bit_kernels(*k)) continue;
      k->bitshuffle(ts, size, g_src, g_bit_model, g_scratch);
      k->bitunshuffle(ts, size, g_bit_model, g_out, g_scratch);
      REQUIRE(std::memcmp(g_out, g_src, size) == 0);
    }
  }
}

TESSERA_TEST(shuffle, levels_report_themselves_and_scalar_is_always_there) {
  const shuffle_kernels* scalar = shuffle_kernels_for(simd_level::scalar);
  REQUIRE(scalar != nullptr);
  for (simd_level level : kLevels) {
    const shuffle_kernels* k = shuffle_kernels_for(level);
    if (k != nullptr) {
      CHECK_EQ(k->level, level);
      CHECK(k->shuffle != nullptr && k->unshuffle != nullptr);
      CHECK_EQ(k->bitshuffle != nullptr, has_bit_kernels(*k));
      CHECK_EQ(k->bitunshuffle != nullptr, has_bit_kernels(*k));
    }
  }
  CHECK(std::strcmp(simd_level_name(simd_level::scalar), "scalar") == 0);
  CHECK(std::strcmp(simd_level_name(simd_level::sse2), "sse2") == 0);
  CHECK(std::strcmp(simd_level_name(simd_level::avx2), "avx2") == 0);
  CHECK(std::strcmp(simd_level_name(simd_level::neon), "neon") == 0);
  CHECK(std::strcmp(simd_level_name(simd_level::altivec), "altivec") == 0);
  CHECK(std::strcmp(simd_level_name(static_cast<simd_level>(77)), "unknown") == 0);
  CHECK(shuffle_kernels_for(static_cast<simd_level>(77)) == nullptr);
  // The levels of the other architecture families never exist together.
#if defined(__x86_64__) || defined(__i386__)
  CHECK(shuffle_kernels_for(simd_level::neon) == nullptr);
  CHECK(shuffle_kernels_for(simd_level::altivec) == nullptr);
  // AVX2 implies SSE2.
  if (shuffle_kernels_for(simd_level::avx2) != nullptr) CHECK(shuffle_kernels_for(simd_level::sse2) != nullptr);
#else
  CHECK(shuffle_kernels_for(simd_level::sse2) == nullptr);
  CHECK(shuffle_kernels_for(simd_level::avx2) == nullptr);
#endif
}

TESSERA_TEST(shuffle, force_caps_dispatch_and_refuses_unavailable_levels) {
  simd_level_unforce();
  const simd_level best = shuffle_kernels_active().level;
  // The default is the best available level (the highest of the family that exists here).
  for (simd_level level : kLevels) {
    const shuffle_kernels* k = shuffle_kernels_for(level);
    if (k != nullptr && level != simd_level::neon && level != simd_level::altivec && best != simd_level::neon &&
        best != simd_level::altivec)
      CHECK_LE(static_cast<int>(level), static_cast<int>(best));
  }
  CHECK(shuffle_kernels_for(best) == &shuffle_kernels_active());

  // Forcing each available level makes it the active one, and the inline entry points use it.
  static uint8_t in[515], out[515], back[515], scratch[515];
  for (size_t i = 0; i < sizeof in; ++i) in[i] = static_cast<uint8_t>(i * 37 + 11);
  static uint8_t expected[515];
  model_shuffle(4, sizeof in, in, expected);
  for (simd_level level : kLevels) {
    if (shuffle_kernels_for(level) == nullptr) {
      CHECK_ERR(simd_level_force(level), errc::unsupported);
      CHECK_EQ(shuffle_kernels_active().level, best);  // a refused force changes nothing
      continue;
    }
    REQUIRE_OK(simd_level_force(level));
    CHECK_EQ(shuffle_kernels_active().level, level);
    CHECK(&shuffle_kernels_active() == shuffle_kernels_for(level));
    tessera::shuffle(4, sizeof in, in, out);
    CHECK(std::memcmp(out, expected, sizeof out) == 0);
    tessera::unshuffle(4, sizeof in, out, back);
    CHECK(std::memcmp(back, in, sizeof in) == 0);
    if (has_bit_kernels(shuffle_kernels_active())) {
      tessera::bitshuffle(4, sizeof in, in, out, scratch);
      tessera::bitunshuffle(4, sizeof in, out, back, scratch);
      CHECK(std::memcmp(back, in, sizeof in) == 0);
    }
    simd_level_unforce();
  }
  CHECK_ERR(simd_level_force(static_cast<simd_level>(77)), errc::unsupported);

  REQUIRE_OK(simd_level_force(simd_level::scalar));
  CHECK_EQ(shuffle_kernels_active().level, simd_level::scalar);
  simd_level_unforce();
  CHECK_EQ(shuffle_kernels_active().level, best);
}
