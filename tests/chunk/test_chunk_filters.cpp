// The non-shuffle filters against simple reference implementations written from their definitions.
#include <cstring>

#include "../../src/filters/filters.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "chunk_builder.hpp"

using namespace tessera;

namespace {
uint8_t g_a[4096];
uint8_t g_b[4096];
uint8_t g_c[4096];
uint8_t g_block0[4096];
}  // namespace

TESSERA_TEST(chunk_filters, delta_backward_matches_reference) {
  test::rng r(3);
  for (int iter = 0; iter < 2000; ++iter) {
    const size_t ts = static_cast<size_t>(r.range(1, 24));
    const size_t n = static_cast<size_t>(r.range(0, 600));
    const bool block0 = r.chance(50);
    for (size_t i = 0; i < n; ++i) g_a[i] = static_cast<uint8_t>(r.next());
    for (size_t i = 0; i < n; ++i) g_block0[i] = static_cast<uint8_t>(r.next());
    // The reference forward, then our backward, gives the data back.
    chunk_test::delta_ref(ts, n, g_block0, block0, g_a, g_b);
    detail::delta_decode(g_block0, block0, ts, g_b, n);
    CHECK(std::memcmp(g_a, g_b, n) == 0);
    // Our forward equals the reference forward.
    detail::delta_encode(block0 ? g_a : g_block0, block0, ts, g_a, g_c, n);
    chunk_test::delta_ref(ts, n, g_block0, block0, g_a, g_b);
    CHECK(std::memcmp(g_c, g_b, n) == 0);
  }
}

TESSERA_TEST(chunk_filters, bytedelta_matches_reference) {
  test::rng r(4);
  for (int iter = 0; iter < 2000; ++iter) {
    const size_t ts = static_cast<size_t>(r.range(1, 20));
    const size_t n = static_cast<size_t>(r.range(0, 700));
    for (size_t i = 0; i < n; ++i) g_a[i] = static_cast<uint8_t>(r.next());
    chunk_test::bytedelta_ref(ts, n, g_a, g_b);
    detail::bytedelta_encode(ts, g_a, g_c, n);
    CHECK(std::memcmp(g_b, g_c, n) == 0);
    detail::bytedelta_decode(ts, g_b, g_c, n);
    CHECK(std::memcmp(g_a, g_c, n) == 0);
  }
}

TESSERA_TEST(chunk_filters, truncations_match_reference_masks) {
  test::rng r(5);
  for (int iter = 0; iter < 500; ++iter) {
    const size_t ts = r.chance(50) ? 4 : 8;
    const int mantissa = ts == 4 ? 23 : 52;
    const int bits = static_cast<int>(r.range(-60, 60));
    const size_t n = static_cast<size_t>(r.range(0, 300));
    for (size_t i = 0; i < n; ++i) g_a[i] = static_cast<uint8_t>(r.next());
    status s = detail::trunc_prec_encode(static_cast<int8_t>(bits), ts, g_a, g_b, n);
    const int zeroed = bits >= 0 ? mantissa - bits : -bits;
    const bool valid = bits <= mantissa && -bits <= mantissa && zeroed < mantissa;
    CHECK_EQ(s.ok(), valid);
    if (!valid) continue;
    for (size_t i = 0; i < n; ++i) {
      const size_t bit0 = (i % ts) * 8;  // bits of this byte within its little-endian element
      uint8_t keep = 0xff;
      for (int k = 0; k < 8; ++k)
        if (static_cast<int>(bit0) + k < zeroed) keep = static_cast<uint8_t>(keep & ~(1u << k));
      const uint8_t expect = i < n / ts * ts ? static_cast<uint8_t>(g_a[i] & keep) : g_a[i];
      CHECK_EQ(g_b[i], expect);
    }
  }
  CHECK_ERR(detail::trunc_prec_encode(10, 2, g_a, g_b, 8), errc::invalid_argument);
  for (int iter = 0; iter < 500; ++iter) {
    const size_t sizes[] = {1, 2, 4, 8};
    const size_t ts = sizes[r.range(0, 3)];
    const int bits = static_cast<int>(r.range(-70, 70));
    const size_t n = static_cast<size_t>(r.range(0, 300));
    for (size_t i = 0; i < n; ++i) g_a[i] = static_cast<uint8_t>(r.next());
    status s = detail::int_trunc_encode(static_cast<int8_t>(bits), ts, g_a, g_b, n);
    const int maxb = static_cast<int>(ts * 8);
    const int zeroed = bits >= 0 ? maxb - bits : -bits;
    const bool valid = zeroed >= 0 && zeroed < maxb;
    CHECK_EQ(s.ok(), valid);
    if (!valid) continue;
    for (size_t i = 0; i < n / ts * ts; ++i) {
      const int bit0 = static_cast<int>((i % ts) * 8);
      uint8_t keep = 0xff;
      for (int k = 0; k < 8; ++k)
        if (bit0 + k < zeroed) keep = static_cast<uint8_t>(keep & ~(1u << k));
      CHECK_EQ(g_b[i], static_cast<uint8_t>(g_a[i] & keep));
    }
  }
}
