// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/nd_copy.hpp"
#include "tessera/shuffle.hpp"

#include <cstdint>
#include <cstring>

#include "tessera/config.hpp"
#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
#include "layout_testing.hpp"

using namespace tessera;
using namespace tessera::test::layout;

namespace {

constexpr size_t kMaxBytes = 48 * 1024;

struct copy_case {
  int ndim = 0;
  int64_t itemsize = 1;
  int64_t src_shape[kMaxDims] = {}, dst_shape[kMaxDims] = {};
  int64_t src_start[kMaxDims] = {}, dst_start[kMaxDims] = {}, copy[kMaxDims] = {};
};

// Random shapes and regions, biased towards the ones the merging of dimensions treats specially: regions
// spanning whole trailing dimensions in one or both buffers, extents of 1, and empty regions.
copy_case random_case(tessera::test::rng& r) {
  static constexpr int64_t kMaxExtent[9] = {1, 60, 14, 8, 5, 4, 3, 3, 3};
  for (;;) {
    copy_case c;
    c.ndim = static_cast<int>(r.range(0, kMaxDims));
    c.itemsize = r.range(1, 16);
    const int64_t max_extent = c.ndim <= 8 ? kMaxExtent[c.ndim] : 2;
    const bool same_shapes = r.chance(30);
    const bool full_trailing = r.chance(40);
    const int full_from = static_cast<int>(r.range(0, c.ndim));
    for (int i = 0; i < c.ndim; ++i) {
      const int64_t s = r.chance(3) ? 0 : r.range(1, max_extent);
      const int64_t d = same_shapes ? s : r.range(0, max_extent);
      c.src_shape[i] = s;
      c.dst_shape[i] = d;
      const int64_t limit = s < d ? s : d;
      int64_t e = r.chance(15) ? 1 : r.range(0, limit);
      if (full_trailing && i >= full_from) e = limit;
      if (e > limit) e = limit;
      c.copy[i] = e;
      c.src_start[i] = r.range(0, s - e);
      c.dst_start[i] = r.range(0, d - e);
    }
    if (static_cast<uint64_t>(product(c.ndim, c.src_shape) * c.itemsize) <= kMaxBytes &&
        static_cast<uint64_t>(product(c.ndim, c.dst_shape) * c.itemsize) <= kMaxBytes)
      return c;
  }
}

// Element by element, byte by byte.
void brute_copy(const copy_case& c, const uint8_t* src, uint8_t* dst) {
  const int64_t n = product(c.ndim, c.copy);
  int64_t y[kMaxDims], xs[kMaxDims], xd[kMaxDims];
  for (int64_t k = 0; k < n; ++k) {
    c_coords(c.ndim, c.copy, k, y);
    for (int i = 0; i < c.ndim; ++i) {
      xs[i] = c.src_start[i] + y[i];
      xd[i] = c.dst_start[i] + y[i];
    }
    const int64_t si = c_index(c.ndim, c.src_shape, xs);
    const int64_t di = c_index(c.ndim, c.dst_shape, xd);
    for (int64_t b = 0; b < c.itemsize; ++b) dst[di * c.itemsize + b] = src[si * c.itemsize + b];
  }
}

}  // namespace

TESSERA_TEST(nd_copy, random_copies_match_brute_force) {
  const allocator a = tessera::test::system_allocator();
  owned_array<uint8_t> src, dst, want;
  REQUIRE_OK(src.allocate(a, kMaxBytes));
  REQUIRE_OK(dst.allocate(a, kMaxBytes));
  REQUIRE_OK(want.allocate(a, kMaxBytes));
  tessera::test::rng r(0xc0b1);
  const int failures_before = t.failures;
  for (int n = 0; n < 4000 && t.failures == failures_before; ++n) {
    const copy_case c = random_case(r);
    const size_t src_bytes = static_cast<size_t>(product(c.ndim, c.src_shape) * c.itemsize);
    const size_t dst_bytes = static_cast<size_t>(product(c.ndim, c.dst_shape) * c.itemsize);
    for (size_t i = 0; i < src_bytes; ++i) src[i] = static_cast<uint8_t>(r.next());
    const uint8_t fill = static_cast<uint8_t>(r.next());
    std::memset(dst.data(), fill, dst_bytes);
    std::memset(want.data(), fill, dst_bytes);
    brute_copy(c, src.data(), want.data());
    // Spans of exactly the buffers' sizes, so a copy reaching past them would be caught by ASan or the checks.
    REQUIRE_OK(nd_copy_region(c.ndim, c.itemsize, bytes_view(src.data(), src_bytes), c.src_shape, c.src_start,
                              bytes_mut(dst.data(), dst_bytes), c.dst_shape, c.dst_start, c.copy));
    CHECK(std::memcmp(dst.data(), want.data(), dst_bytes) == 0);

    // The [start, stop) form gives the same bytes.
    int64_t stop[kMaxDims];
    for (int i = 0; i < c.ndim; ++i) stop[i] = c.src_start[i] + c.copy[i];
    std::memset(dst.data(), static_cast<uint8_t>(fill + 1), dst_bytes);
    std::memset(want.data(), static_cast<uint8_t>(fill + 1), dst_bytes);
    brute_copy(c, src.data(), want.data());
    REQUIRE_OK(nd_copy(c.ndim, c.itemsize, bytes_view(src.data(), src_bytes), c.src_shape, c.src_start, stop,
                       bytes_mut(dst.data(), dst_bytes), c.dst_shape, c.dst_start));
    CHECK(std::memcmp(dst.data(), want.data(), dst_bytes) == 0);
  }
}

TESSERA_TEST(nd_copy, runs_of_every_length_between_rows_touch_only_their_bytes) {
  // Rows of 1 - 300 bytes (the fixed-size moves of 4 and 8 bytes, the AVX2 moves of 33 - 128 where the CPU has
  // them, and the library copy around them), 3 of them out of a 5 x 310 source into a 4 x 320 destination, each at
  // an offset inside its row: first at SSE2 level where there is one (the library copy for 33 - 128), then at the
  // CPU's best.
  static uint8_t src[5 * 310];  // static: off a bare-metal test's stack
  static uint8_t dst[4 * 320], want[4 * 320];
  for (size_t i = 0; i < sizeof src; ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  const int64_t src_shape[] = {5, 310}, dst_shape[] = {4, 320};
  const int64_t src_start[] = {1, 5}, dst_start[] = {1, 11};
  const bool sse2 = simd_level_force(simd_level::sse2).ok();
  for (int64_t k = 0; k < (sse2 ? 600 : 300); ++k) {
    if (k == 300) simd_level_unforce();
    const int64_t run = k % 300 + 1;
    std::memset(dst, 0xEE, sizeof dst);
    std::memset(want, 0xEE, sizeof want);
    for (int64_t y = 0; y < 3; ++y)
      std::memcpy(want + (1 + y) * 320 + 11, src + (1 + y) * 310 + 5, static_cast<size_t>(run));
    const int64_t copy[] = {3, run};
    REQUIRE_OK(nd_copy_region(2, 1, bytes_view(src, sizeof src), src_shape, src_start, bytes_mut(dst, sizeof dst),
                              dst_shape, dst_start, copy));
    CHECK(std::memcmp(dst, want, sizeof dst) == 0);
  }
}

TESSERA_TEST(nd_copy, scalar_copies_one_item) {
  const uint8_t src[3] = {1, 2, 3};
  uint8_t dst[4] = {9, 9, 9, 9};
  REQUIRE_OK(nd_copy_region(0, 3, bytes_view(src, 3), nullptr, nullptr, bytes_mut(dst, 4), nullptr, nullptr, nullptr));
  CHECK_EQ(dst[0], 1);
  CHECK_EQ(dst[2], 3);
  CHECK_EQ(dst[3], 9);
  CHECK_ERR(nd_copy_region(0, 4, bytes_view(src, 3), nullptr, nullptr, bytes_mut(dst, 4), nullptr, nullptr, nullptr),
            errc::buffer_too_small);
}

TESSERA_TEST(nd_copy, a_known_copy) {
  // A 3 x 4 source of bytes 0..11; copy rows 1..2, columns 1..2 into a 2 x 3 destination at (0, 1).
  uint8_t src[12];
  for (int i = 0; i < 12; ++i) src[i] = static_cast<uint8_t>(i);
  uint8_t dst[6] = {};
  const int64_t src_shape[] = {3, 4}, src_start[] = {1, 1}, src_stop[] = {3, 3};
  const int64_t dst_shape[] = {2, 3}, dst_start[] = {0, 1};
  REQUIRE_OK(nd_copy(2, 1, bytes_view(src, 12), src_shape, src_start, src_stop, bytes_mut(dst, 6), dst_shape,
                     dst_start));
  const uint8_t want[6] = {0, 5, 6, 0, 9, 10};
  CHECK(std::memcmp(dst, want, 6) == 0);
}

TESSERA_TEST(nd_copy, invalid_arguments_are_errors) {
  uint8_t src[64] = {};
  uint8_t dst[64] = {};
  const bytes_view s(src, 64);
  const bytes_mut d(dst, 64);
  const int64_t shape[] = {4, 4};
  const int64_t zero[] = {0, 0};
  const int64_t two[] = {2, 2};
  const int64_t four[] = {4, 4};
  CHECK_OK(nd_copy_region(2, 4, s, shape, zero, d, shape, zero, four));
  CHECK_ERR(nd_copy_region(2, 0, s, shape, zero, d, shape, zero, two), errc::invalid_argument);
  CHECK_ERR(nd_copy_region(-1, 4, s, shape, zero, d, shape, zero, two), errc::invalid_argument);
  CHECK_ERR(nd_copy_region(kMaxDims + 1, 4, s, shape, zero, d, shape, zero, two), errc::invalid_argument);
  CHECK_ERR(nd_copy_region(2, 4, s, nullptr, zero, d, shape, zero, two), errc::invalid_argument);
  const int64_t neg[] = {0, -1};
  CHECK_ERR(nd_copy_region(2, 4, s, shape, neg, d, shape, zero, two), errc::invalid_argument);
  CHECK_ERR(nd_copy_region(2, 4, s, shape, zero, d, shape, neg, two), errc::invalid_argument);
  CHECK_ERR(nd_copy_region(2, 4, s, neg, zero, d, shape, zero, zero), errc::invalid_argument);
  CHECK_ERR(nd_copy_region(2, 4, s, shape, zero, d, shape, zero, neg), errc::invalid_argument);
  const int64_t three[] = {3, 3};
  CHECK_ERR(nd_copy_region(2, 4, s, shape, three, d, shape, zero, two), errc::out_of_range);
  CHECK_ERR(nd_copy_region(2, 4, s, shape, zero, d, shape, three, two), errc::out_of_range);
  const int64_t far[] = {0, 5};
  CHECK_ERR(nd_copy_region(2, 4, s, shape, far, d, shape, zero, zero), errc::out_of_range);
  const int64_t huge_start[] = {0, INT64_MAX};
  CHECK_ERR(nd_copy_region(2, 4, s, shape, huge_start, d, shape, zero, two), errc::out_of_range);
  CHECK_ERR(nd_copy_region(2, 4, s, shape, zero, d, shape, zero, huge_start), errc::out_of_range);
  // Buffers smaller than their shapes, even for an empty region.
  CHECK_ERR(nd_copy_region(2, 4, bytes_view(src, 63), shape, zero, d, shape, zero, two), errc::buffer_too_small);
  CHECK_ERR(nd_copy_region(2, 4, s, shape, zero, bytes_mut(dst, 63), shape, zero, zero), errc::buffer_too_small);
  const int64_t big[] = {INT64_MAX / 2, 4};
  CHECK_ERR(nd_copy_region(2, 4, s, big, zero, d, shape, zero, two), errc::overflow);
  // Overlap.
  CHECK_ERR(nd_copy_region(2, 1, bytes_view(src, 16), shape, zero, bytes_mut(src + 8, 16), shape, zero, two),
            errc::invalid_argument);
  CHECK_OK(nd_copy_region(2, 1, bytes_view(src, 16), shape, zero, bytes_mut(src + 16, 16), shape, zero, two));
  // The [start, stop) form: stop before start.
  const int64_t stop_early[] = {2, 0};
  const int64_t start_one[] = {1, 1};
  CHECK_ERR(nd_copy(2, 4, s, shape, start_one, stop_early, d, shape, zero), errc::out_of_range);
  CHECK_ERR(nd_copy(2, 4, s, shape, neg, two, d, shape, zero), errc::invalid_argument);
  // Nothing was written by any failed call.
  bool untouched = true;
  for (int i = 0; i < 64; ++i) untouched &= dst[i] == 0;
  CHECK(untouched);
}
