// SPDX-License-Identifier: BSD-3-Clause
// The non-shuffle filters against simple reference implementations written from their definitions.
#include <cstring>

#include "../../src/filters/filters.hpp"
#include "tessera/chunk.hpp"
#include "tessera/tessera.h"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"
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

// Small firmware compiles filters out (TESSERA_WITH_BITSHUFFLE, _DELTA, _BYTEDELTA, _TRUNC = 0): the codec
// then refuses them with unsupported both ways, except the truncations, which have nothing to undo.
TESSERA_TEST(chunk_filters, a_compiled_out_filter_is_unsupported_both_ways) {
  // Linked by their C anchors, as a C firmware links them (bare metal links only the filters it names).
  tessera_filter_link_bitshuffle();
  tessera_filter_link_delta();
  tessera_filter_link_bytedelta();
  tessera_filter_link_trunc();
  chunk_encoder e;
  chunk_decoder d;
  REQUIRE_OK(chunk_encoder_init(e, test::system_allocator()));
  REQUIRE_OK(chunk_decoder_init(d, test::system_allocator()));
  const size_t n = 4000;
  for (size_t i = 0; i < n; ++i) g_a[i] = static_cast<uint8_t>((i / 4) * 7 + (i % 4 == 0 ? i / 64 : 0));
  const filter_id all[] = {filter_id::bitshuffle, filter_id::delta, filter_id::bytedelta, filter_id::trunc_prec,
                           filter_id::int_trunc};
  for (const filter_id f : all) {
    chunk_encode_params p;
    p.typesize = 4;
    p.filters[4] = static_cast<uint8_t>(f);
    p.filters_meta[4] = f == filter_id::trunc_prec || f == filter_id::int_trunc ? 20 : 0;
    const result<size_t> enc = chunk_encode(e, p, bytes_view(g_a, n), bytes_mut(g_b, sizeof g_b));
    if (chunk_filter_available(f)) {
      REQUIRE_OK(enc);
      const result<size_t> dec = chunk_decode(d, bytes_view(g_b, *enc), bytes_mut(g_c, sizeof g_c));
      REQUIRE_OK(dec);
      CHECK_EQ(*dec, n);
      if (f != filter_id::trunc_prec && f != filter_id::int_trunc) CHECK(std::memcmp(g_a, g_c, n) == 0);
      continue;
    }
    CHECK_ERR(enc, errc::unsupported);
    // A chunk that names the filter (a shuffle chunk with the filter written into its header's empty slot 4):
    // decoding it needs the filter, except for the truncations.
    p.filters[4] = 0;
    const result<size_t> plain = chunk_encode(e, p, bytes_view(g_a, n), bytes_mut(g_b, sizeof g_b));
    REQUIRE_OK(plain);
    g_b[16 + 4] = static_cast<uint8_t>(f);
    const result<size_t> dec = chunk_decode(d, bytes_view(g_b, *plain), bytes_mut(g_c, sizeof g_c));
    if (f == filter_id::trunc_prec || f == filter_id::int_trunc) {
      REQUIRE_OK(dec);
      CHECK(std::memcmp(g_a, g_c, n) == 0);
    } else {
      CHECK_ERR(dec, errc::unsupported);
    }
  }
}
