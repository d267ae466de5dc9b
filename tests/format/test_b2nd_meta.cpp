// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/b2nd_meta.hpp"

#include <cstdio>
#include <cstring>

#include "tessera/msgpack.hpp"

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

// The layout of README_B2ND_METALAYER.rst, written byte by byte without the encoder or the msgpack writer:
// 0x90+N (N = 7, or 5 for the caterva form), version 0, ndim, then 0x90+ndim arrays of d3 int64 / d2 int32
// big-endian values, then the dtype_format fixint and 0xdb + 4-byte big-endian length + the dtype bytes.
size_t hand_encode(int ndim, const int64_t* shape, const int32_t* chunks, const int32_t* blocks, int dtype_format,
                   const char* dtype, size_t dtype_len, bool caterva, uint8_t* out) {
  size_t p = 0;
  auto be = [&](uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) out[p++] = static_cast<uint8_t>((v >> (8 * i)) & 0xff);
  };
  out[p++] = caterva ? 0x95 : 0x97;
  out[p++] = 0x00;
  out[p++] = static_cast<uint8_t>(ndim);
  out[p++] = static_cast<uint8_t>(0x90 + ndim);
  for (int i = 0; i < ndim; ++i) {
    out[p++] = 0xd3;
    be(static_cast<uint64_t>(shape[i]), 8);
  }
  out[p++] = static_cast<uint8_t>(0x90 + ndim);
  for (int i = 0; i < ndim; ++i) {
    out[p++] = 0xd2;
    be(static_cast<uint32_t>(chunks[i]), 4);
  }
  out[p++] = static_cast<uint8_t>(0x90 + ndim);
  for (int i = 0; i < ndim; ++i) {
    out[p++] = 0xd2;
    be(static_cast<uint32_t>(blocks[i]), 4);
  }
  if (!caterva) {
    out[p++] = static_cast<uint8_t>(dtype_format);
    out[p++] = 0xdb;
    be(dtype_len, 4);
    if (dtype_len > 0) std::memcpy(out + p, dtype, dtype_len);
    p += dtype_len;
  }
  return p;
}

struct heap_bytes {
  allocator a = test::system_allocator();
  uint8_t* p = nullptr;
  size_t n = 0;
  heap_bytes(const uint8_t* src, size_t size) : n(size) {
    if (n > 0) {
      p = static_cast<uint8_t*>(allocator_allocate(a, n, 1));
      std::memcpy(p, src, n);
    }
  }
  ~heap_bytes() { allocator_deallocate(a, p, n, 1); }
  heap_bytes(const heap_bytes&) = delete;
  heap_bytes& operator=(const heap_bytes&) = delete;
  bytes_view view() const { return bytes_view(p, n); }
};

const char kLongDtype[] =
    "[('a', '<i4'), ('b', '<f8'), ('c', 'S10'), ('d', '<U3'), ('e', [('x', '<f4'), ('y', '<f4')]), "
    "('f', '<M8[ns]'), ('g', '|b1'), ('h', '<c16'), ('i', '>u2'), ('j', '|V7'), ('k', '<i8'), ('l', '<f2'), "
    "('m', '<m8[us]'), ('n', '|u1'), ('o', '<i2'), ('p', '<u8'), ('q', '<f16')]";

const char* const kDtypes[] = {"<f8", "|u1", "<U10", "|S0", "", "[('a', '<i4'), ('b', '<f8')]", "O", kLongDtype};

int64_t random_extent(test::rng& rng) {
  switch (rng.range(0, 5)) {
    case 0: return 0;
    case 1: return rng.range(1, 10);
    case 2: return rng.range(1, 1000000);
    case 3: return INT64_MAX;
    case 4: return static_cast<int64_t>(rng.next() >> 1);
    default: return static_cast<int64_t>(rng.next() >> rng.range(1, 63));
  }
}

int32_t random_extent32(test::rng& rng) {
  switch (rng.range(0, 3)) {
    case 0: return static_cast<int32_t>(rng.range(1, 100));
    case 1: return INT32_MAX;
    default: return static_cast<int32_t>(rng.range(1, INT32_MAX));
  }
}

void random_meta(test::rng& rng, int ndim, b2nd_meta& m) {
  m = b2nd_meta{};
  m.ndim = static_cast<int8_t>(ndim);
  for (int i = 0; i < ndim; ++i) {
    m.shape[i] = random_extent(rng);
    m.chunkshape[i] = rng.chance(10) ? 0 : random_extent32(rng);
    m.blockshape[i] = (m.chunkshape[i] == 0 && rng.chance(50)) ? 0 : random_extent32(rng);
  }
  m.dtype_format = static_cast<int8_t>(rng.chance(80) ? 0 : rng.range(0, 127));
  const char* d = kDtypes[rng.range(0, sizeof kDtypes / sizeof kDtypes[0] - 1)];
  m.dtype = span<const char>(d, std::strlen(d));
  m.has_dtype = rng.chance(90);
}

bool same_meta(const b2nd_meta& a, const b2nd_meta& b) {
  if (a.version != b.version || a.ndim != b.ndim || a.dtype_format != b.dtype_format) return false;
  for (int i = 0; i < a.ndim; ++i) {
    if (a.shape[i] != b.shape[i] || a.chunkshape[i] != b.chunkshape[i] || a.blockshape[i] != b.blockshape[i]) {
      return false;
    }
  }
  const span<const char> da = b2nd_meta_dtype_or_default(a);
  const span<const char> db = b2nd_meta_dtype_or_default(b);
  return da.size() == db.size() && (da.empty() || std::memcmp(da.data(), db.data(), da.size()) == 0);
}

uint8_t g_enc[1024];
uint8_t g_hand[1024];

}  // namespace

TESSERA_TEST(b2nd_meta, round_trip_every_ndim_matches_the_spec_layout) {
  test::rng rng(2024);
  b2nd_meta m;
  for (int iter = 0; iter < 3000; ++iter) {
    const int ndim = iter % (kMaxDims + 1);
    random_meta(rng, ndim, m);
    const size_t size = b2nd_meta_encoded_size(m);
    const result<size_t> written = b2nd_meta_encode(m, bytes_mut(g_enc, sizeof g_enc));
    REQUIRE_OK(written);
    REQUIRE_EQ(*written, size);

    const span<const char> dtype = b2nd_meta_dtype_or_default(m);
    const size_t hand = hand_encode(ndim, m.shape, m.chunkshape, m.blockshape, m.dtype_format, dtype.data(),
                                    dtype.size(), false, g_hand);
    REQUIRE_EQ(hand, size);
    CHECK(std::memcmp(g_enc, g_hand, size) == 0);

    heap_bytes copy(g_enc, size);
    size_t consumed = 0;
    const result<b2nd_meta> back = b2nd_meta_decode(copy.view(), &consumed);
    REQUIRE_OK(back);
    CHECK_EQ(consumed, size);
    CHECK(back->has_dtype);
    CHECK(same_meta(m, *back));
    // The dtype is a view into the input.
    CHECK(back->dtype.data() == reinterpret_cast<const char*>(copy.p) + size - dtype.size());
  }
}

// The boundary of msgpack's fixarray (at most 15 elements): the spec says "fixarray with X=nd elements" and the
// reference writes the byte 0x90 + ndim whatever ndim is, so 15 dimensions give 0x9f and 16 (B2ND_MAX_DIM) give
// 0xa0. The encoder writes those exact bytes; the decoder takes them, and the standard array16 form
// (0xdc 0x00 0x10) that a msgpack library would write for 16 entries.
TESSERA_TEST(b2nd_meta, fixarray_boundary_at_15_and_16_dims) {
  for (int ndim = 15; ndim <= 16; ++ndim) {
    b2nd_meta m;
    m.ndim = static_cast<int8_t>(ndim);
    for (int d = 0; d < ndim && d < kMaxDims; ++d) {
      m.shape[d] = d + 2;
      m.chunkshape[d] = 1;
      m.blockshape[d] = 1;
    }
    m.dtype = span<const char>("<f4", 3);
    m.has_dtype = true;
    if (ndim > kMaxDims) {  // a build of fewer dimensions refuses to write it
      CHECK_ERR(b2nd_meta_encode(m, bytes_mut(g_enc, sizeof g_enc)), errc::invalid_argument);
      continue;
    }
    const result<size_t> n = b2nd_meta_encode(m, bytes_mut(g_enc, sizeof g_enc));
    REQUIRE_OK(n);
    const uint8_t marker = ndim == 15 ? 0x9f : 0xa0;
    REQUIRE_EQ(*n, static_cast<size_t>(3 + 3 + ndim * 19 + 1 + 5 + 3));
    CHECK_EQ(g_enc[0], 0x97);
    CHECK_EQ(g_enc[2], ndim);
    const size_t lists[3] = {3, static_cast<size_t>(4 + ndim * 9), static_cast<size_t>(5 + ndim * 14)};
    for (const size_t at : lists) CHECK_EQ(g_enc[at], marker);
    const size_t hand = hand_encode(ndim, m.shape, m.chunkshape, m.blockshape, 0, "<f4", 3, false, g_hand);
    REQUIRE_EQ(hand, *n);
    CHECK(std::memcmp(g_enc, g_hand, hand) == 0);
    heap_bytes copy(g_enc, *n);
    const result<b2nd_meta> back = b2nd_meta_decode(copy.view());
    REQUIRE_OK(back);
    CHECK(same_meta(m, *back));

    // The same lists as array16 (0xdc + 2-byte count): two bytes longer each.
    uint8_t wide[1024];
    size_t w = 0;
    for (size_t i = 0; i < *n; ++i) {
      if (i == lists[0] || i == lists[1] || i == lists[2]) {
        wide[w++] = 0xdc;
        wide[w++] = 0x00;
        wide[w++] = static_cast<uint8_t>(ndim);
      } else {
        wide[w++] = g_enc[i];
      }
    }
    heap_bytes wide_copy(wide, w);
    const result<b2nd_meta> back16 = b2nd_meta_decode(wide_copy.view());
    REQUIRE_OK(back16);
    CHECK(same_meta(m, *back16));
  }
}

TESSERA_TEST(b2nd_meta, known_bytes) {
  // [0, 2, [400, 3], [110, 3], [57, 3], 0, "|u1"]: the example_day_month_temp metalayer of README_CFRAME_FORMAT.
  b2nd_meta m;
  m.ndim = 2;
  m.shape[0] = 400;
  m.shape[1] = 3;
  m.chunkshape[0] = 110;
  m.chunkshape[1] = 3;
  m.blockshape[0] = 57;
  m.blockshape[1] = 3;
  const uint8_t expect[] = {0x97, 0x00, 0x02, 0x92, 0xd3, 0, 0, 0, 0, 0, 0, 0x01, 0x90, 0xd3, 0, 0, 0, 0, 0, 0, 0,
                            0x03, 0x92, 0xd2, 0, 0, 0, 0x6e, 0xd2, 0, 0, 0, 0x03, 0x92, 0xd2, 0, 0, 0, 0x39, 0xd2,
                            0, 0, 0, 0x03, 0x00, 0xdb, 0, 0, 0, 3, '|', 'u', '1'};
  uint8_t out[sizeof expect];
  // No dtype given: the default "|u1", as the reference writes.
  const result<size_t> n = b2nd_meta_encode(m, bytes_mut(out, sizeof out));
  REQUIRE_OK(n);
  REQUIRE_EQ(*n, sizeof expect);
  CHECK(std::memcmp(out, expect, sizeof expect) == 0);
  // ndim 0: empty arrays.
  b2nd_meta scalar;
  scalar.dtype = span<const char>("<f8", 3);
  scalar.has_dtype = true;
  const uint8_t expect0[] = {0x97, 0x00, 0x00, 0x90, 0x90, 0x90, 0x00, 0xdb, 0, 0, 0, 3, '<', 'f', '8'};
  uint8_t out0[sizeof expect0];
  const result<size_t> n0 = b2nd_meta_encode(scalar, bytes_mut(out0, sizeof out0));
  REQUIRE_OK(n0);
  REQUIRE_EQ(*n0, sizeof expect0);
  CHECK(std::memcmp(out0, expect0, sizeof expect0) == 0);
  const result<b2nd_meta> back = b2nd_meta_decode(bytes_view(expect0, sizeof expect0));
  REQUIRE_OK(back);
  CHECK_EQ(back->ndim, 0);
  CHECK_EQ(back->dtype.size(), 3u);
}

TESSERA_TEST(b2nd_meta, buffer_too_small_at_every_size) {
  test::rng rng(5);
  b2nd_meta m;
  random_meta(rng, 5, m);
  const size_t size = b2nd_meta_encoded_size(m);
  REQUIRE(size > 0);
  allocator a = test::system_allocator();
  for (size_t n = 0; n < size; ++n) {
    uint8_t* p = static_cast<uint8_t*>(allocator_allocate(a, n == 0 ? 1 : n, 1));
    CHECK_ERR(b2nd_meta_encode(m, bytes_mut(p, n)), errc::buffer_too_small);
    allocator_deallocate(a, p, n == 0 ? 1 : n, 1);
  }
  CHECK_ERR(b2nd_meta_encode(m, bytes_mut()), errc::buffer_too_small);
}

TESSERA_TEST(b2nd_meta, legacy_caterva_form_decodes_without_dtype) {
  const int64_t shape[3] = {10, 0, 1ll << 40};
  const int32_t chunks[3] = {5, 0, 1 << 20};
  const int32_t blocks[3] = {2, 0, 1 << 10};
  const size_t n = hand_encode(3, shape, chunks, blocks, 0, nullptr, 0, true, g_hand);
  heap_bytes copy(g_hand, n);
  size_t consumed = 0;
  const result<b2nd_meta> m = b2nd_meta_decode(copy.view(), &consumed);
  REQUIRE_OK(m);
  CHECK_EQ(consumed, n);
  CHECK(!m->has_dtype);
  CHECK_EQ(m->dtype.size(), 0u);
  CHECK_EQ(m->ndim, 3);
  for (int i = 0; i < 3; ++i) {
    CHECK_EQ(m->shape[i], shape[i]);
    CHECK_EQ(m->chunkshape[i], chunks[i]);
    CHECK_EQ(m->blockshape[i], blocks[i]);
  }
  const span<const char> d = b2nd_meta_dtype_or_default(*m);
  CHECK_EQ(d.size(), 3u);
  CHECK(std::memcmp(d.data(), "|u1", 3) == 0);
  // Re-encoding writes the b2nd form with the default dtype.
  uint8_t out[256];
  const result<size_t> w = b2nd_meta_encode(*m, bytes_mut(out, sizeof out));
  REQUIRE_OK(w);
  const size_t hand = hand_encode(3, shape, chunks, blocks, 0, "|u1", 3, false, g_hand);
  REQUIRE_EQ(*w, hand);
  CHECK(std::memcmp(out, g_hand, hand) == 0);
  // Every truncation of the caterva form fails cleanly too.
  const size_t cn = hand_encode(3, shape, chunks, blocks, 0, nullptr, 0, true, g_hand);
  for (size_t len = 0; len < cn; ++len) {
    heap_bytes prefix(g_hand, len);
    CHECK_ERR(b2nd_meta_decode(prefix.view()), errc::truncated);
  }
}

TESSERA_TEST(b2nd_meta, decoder_accepts_any_integer_array_and_str_encoding) {
  test::rng rng(77);
  b2nd_meta m;
  for (int iter = 0; iter < 1000; ++iter) {
    random_meta(rng, static_cast<int>(rng.range(0, kMaxDims)), m);
    m.has_dtype = true;
    msgpack_writer w(bytes_mut(g_enc, sizeof g_enc));
    w.write_array16(7);
    w.write_int(m.version);
    w.write_uint8(static_cast<uint8_t>(m.ndim));
    for (int part = 0; part < 3; ++part) {
      if (rng.chance(50)) w.write_array32(static_cast<uint32_t>(m.ndim));
      else w.write_array(static_cast<uint32_t>(m.ndim));
      for (int i = 0; i < m.ndim; ++i) {
        const int64_t v = part == 0 ? m.shape[i] : part == 1 ? m.chunkshape[i] : m.blockshape[i];
        if (rng.chance(50)) w.write_int(v);
        else w.write_uint64(static_cast<uint64_t>(v));
      }
    }
    w.write_int16(m.dtype_format);
    w.write_str(m.dtype);
    REQUIRE_OK(w.err());
    const result<b2nd_meta> back = b2nd_meta_decode(bytes_view(g_enc, w.position()));
    REQUIRE_OK(back);
    CHECK(same_meta(m, *back));
  }
}

TESSERA_TEST(b2nd_meta, trailing_bytes_are_ignored) {
  b2nd_meta m;
  m.ndim = 1;
  m.shape[0] = 7;
  m.chunkshape[0] = 4;
  m.blockshape[0] = 2;
  const result<size_t> n = b2nd_meta_encode(m, bytes_mut(g_enc, sizeof g_enc));
  REQUIRE_OK(n);
  // What an in-place update with shorter content leaves behind.
  std::memset(g_enc + *n, 0xd3, 9);
  size_t consumed = 0;
  const result<b2nd_meta> back = b2nd_meta_decode(bytes_view(g_enc, *n + 9), &consumed);
  REQUIRE_OK(back);
  CHECK_EQ(consumed, *n);
  CHECK_EQ(back->shape[0], 7);
}

TESSERA_TEST(b2nd_meta, every_truncation_fails_cleanly) {
  test::rng rng(31);
  b2nd_meta m;
  for (int ndim = 0; ndim <= kMaxDims; ++ndim) {
    random_meta(rng, ndim, m);
    const result<size_t> n = b2nd_meta_encode(m, bytes_mut(g_enc, sizeof g_enc));
    REQUIRE_OK(n);
    for (size_t len = 0; len < *n; ++len) {
      heap_bytes prefix(g_enc, len);
      const result<b2nd_meta> r = b2nd_meta_decode(prefix.view());
      CHECK_ERR(r, errc::truncated);
    }
  }
}

namespace {

// Decodes bytes built by hand and expects the error code and a message naming the field.
void expect_error(test::context& t, const uint8_t* bytes, size_t n, errc code, const char* field) {
  heap_bytes copy(bytes, n);
  const result<b2nd_meta> r = b2nd_meta_decode(copy.view());
  const bool code_ok = !r.ok() && r.err().code == code;
#if TESSERA_ERROR_MESSAGES
  const bool named = !r.ok() && std::strstr(r.err().message, field) != nullptr;
#else  // messages compiled out: the message is the code's name
  const bool named = !r.ok() && std::strcmp(r.err().message, errc_name(code)) == 0;
  (void)field;
#endif
  if (!code_ok || !named) {
    char text[256];
    std::snprintf(text, sizeof text, "expected %s (%s) naming '%s', got %s (%s)", errc_name(code),
                  "decode", field, r.ok() ? "ok" : errc_name(r.err().code), r.ok() ? "" : r.err().message);
    test::report_failure(t, __FILE__, __LINE__, text);
  }
}

}  // namespace

TESSERA_TEST(b2nd_meta, malformed_values_are_refused_with_the_field) {
  const int64_t shape[2] = {10, 20};
  const int32_t chunks[2] = {5, 10};
  const int32_t blocks[2] = {2, 5};
  uint8_t b[128];
  const size_t n = hand_encode(2, shape, chunks, blocks, 0, "<f4", 3, false, b);
  REQUIRE_OK(b2nd_meta_decode(bytes_view(b, n)));
  // Offsets in the layout: 0 array, 1 version, 2 ndim, 3 shape array, 4.. shape items (9 bytes each),
  // 22 chunk array, 23.. chunk items (5 bytes each), 33 block array, 34.. block items, 44 dtype_format, 45 dtype.
  uint8_t c[128];
  auto mutate = [&](size_t at, uint8_t v) {
    std::memcpy(c, b, n);
    c[at] = v;
  };
  mutate(0, 0x96);
  expect_error(t, c, n, errc::malformed, "top-level");
  mutate(0, 0xa7);
  expect_error(t, c, n, errc::malformed, "array");
  mutate(1, 0xc0);
  expect_error(t, c, n, errc::malformed, "version");
  if (kMaxDims < 127) {
    mutate(2, static_cast<uint8_t>(kMaxDims + 1));  // valid up to the reference's 16, but not in this build
    expect_error(t, c, n, errc::unsupported, "ndim");
  }
  mutate(2, 0xff);  // negative fixint -1
  expect_error(t, c, n, errc::malformed, "ndim");
  mutate(2, 3);
  expect_error(t, c, n, errc::malformed, "shape");
  mutate(3, 0x93);
  expect_error(t, c, n, errc::malformed, "shape");
  mutate(5, 0x80);  // shape[0] negative
  expect_error(t, c, n, errc::malformed, "shape");
  mutate(4, 0xc0);
  expect_error(t, c, n, errc::malformed, "shape");
  mutate(24, 0x80);  // chunkshape[0] negative
  expect_error(t, c, n, errc::malformed, "chunkshape");
  mutate(22, 0x91);
  expect_error(t, c, n, errc::malformed, "chunkshape");
  mutate(35, 0x80);  // blockshape[0] negative
  expect_error(t, c, n, errc::malformed, "blockshape");
  mutate(44, 0xcc);  // dtype_format as uint8, swallowing the str marker: 0xdb = 219 is out of range
  expect_error(t, c, n, errc::malformed, "dtype");
  mutate(44, 0xf0);  // negative dtype_format
  expect_error(t, c, n, errc::malformed, "dtype_format");
  mutate(45, 0xc6);  // bin32, not str32
  expect_error(t, c, n, errc::malformed, "dtype");

  // blockshape 0 with chunkshape non-zero.
  const int32_t zero_blocks[2] = {0, 5};
  size_t m = hand_encode(2, shape, chunks, zero_blocks, 0, "<f4", 3, false, c);
  expect_error(t, c, m, errc::malformed, "blockshape");
  // ...but both zero is accepted (the reference keeps it for empty slices).
  const int32_t zero_chunks[2] = {0, 10};
  m = hand_encode(2, shape, zero_chunks, zero_blocks, 0, "<f4", 3, false, c);
  CHECK_OK(b2nd_meta_decode(bytes_view(c, m)));

  // A chunkshape wider than int32, written as int64.
  msgpack_writer w(bytes_mut(c, sizeof c));
  w.write_fixarray(7);
  w.write_fixint(0);
  w.write_fixint(1);
  w.write_fixarray(1);
  w.write_int64(10);
  w.write_fixarray(1);
  w.write_int64(int64_t{INT32_MAX} + 1);
  w.write_fixarray(1);
  w.write_int32(1);
  w.write_fixint(0);
  w.write_str32(span<const char>("<f4", 3));
  REQUIRE_OK(w.err());
  expect_error(t, c, w.position(), errc::malformed, "chunkshape");
  // A shape above int64 as uint64.
  msgpack_writer w2(bytes_mut(c, sizeof c));
  w2.write_fixarray(5);
  w2.write_fixint(0);
  w2.write_fixint(1);
  w2.write_fixarray(1);
  w2.write_uint64(UINT64_MAX);
  w2.write_fixarray(1);
  w2.write_int32(1);
  w2.write_fixarray(1);
  w2.write_int32(1);
  expect_error(t, c, w2.position(), errc::malformed, "shape");
  // ndim 200 (uint8): not a positive fixnum. Padded so the 7 announced elements could fit.
  const uint8_t big_ndim[] = {0x97, 0x00, 0xcc, 200, 0, 0, 0, 0, 0, 0, 0, 0};
  expect_error(t, big_ndim, sizeof big_ndim, errc::malformed, "ndim");
}

TESSERA_TEST(b2nd_meta, encoder_refuses_what_it_cannot_write) {
  uint8_t out[512];
  b2nd_meta m;
  m.ndim = kMaxDims + 1;
  CHECK_ERR(b2nd_meta_encode(m, bytes_mut(out, sizeof out)), errc::invalid_argument);
  CHECK_EQ(b2nd_meta_encoded_size(m), 0u);
  m.ndim = -1;
  CHECK_ERR(b2nd_meta_encode(m, bytes_mut(out, sizeof out)), errc::invalid_argument);
  m = b2nd_meta{};
  m.ndim = 1;
  m.shape[0] = -1;
  m.chunkshape[0] = 1;
  m.blockshape[0] = 1;
  CHECK_ERR(b2nd_meta_encode(m, bytes_mut(out, sizeof out)), errc::invalid_argument);
  m.shape[0] = 1;
  m.blockshape[0] = -2;
  CHECK_ERR(b2nd_meta_encode(m, bytes_mut(out, sizeof out)), errc::invalid_argument);
  m.blockshape[0] = 0;
  CHECK_ERR(b2nd_meta_encode(m, bytes_mut(out, sizeof out)), errc::invalid_argument);
  m.blockshape[0] = 1;
  m.chunkshape[0] = -3;
  CHECK_ERR(b2nd_meta_encode(m, bytes_mut(out, sizeof out)), errc::invalid_argument);
  m.chunkshape[0] = 1;
  m.dtype_format = -1;
  CHECK_ERR(b2nd_meta_encode(m, bytes_mut(out, sizeof out)), errc::invalid_argument);
  m.dtype_format = 0;
  m.version = 1;
  CHECK_ERR(b2nd_meta_encode(m, bytes_mut(out, sizeof out)), errc::unsupported);
  m.version = 0;
  CHECK_OK(b2nd_meta_encode(m, bytes_mut(out, sizeof out)));
}

TESSERA_TEST(b2nd_meta, random_mutations_never_crash) {
  test::rng rng(4242);
  b2nd_meta m;
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    random_meta(rng, static_cast<int>(rng.range(0, kMaxDims)), m);
    const result<size_t> n = b2nd_meta_encode(m, bytes_mut(g_enc, sizeof g_enc));
    REQUIRE_OK(n);
    size_t len = *n;
    const int flips = static_cast<int>(rng.range(1, 4));
    for (int f = 0; f < flips; ++f) {
      const size_t at = static_cast<size_t>(rng.range(0, static_cast<int64_t>(len) - 1));
      if (rng.chance(50)) g_enc[at] = static_cast<uint8_t>(rng.next());
      else g_enc[at] ^= static_cast<uint8_t>(1u << rng.range(0, 7));
    }
    if (rng.chance(20)) len = static_cast<size_t>(rng.range(0, static_cast<int64_t>(len)));
    heap_bytes copy(g_enc, len);
    size_t consumed = 0;
    const result<b2nd_meta> r = b2nd_meta_decode(copy.view(), &consumed);
    if (!r.ok()) {
      const errc e = r.err().code;
      CHECK(e == errc::truncated || e == errc::malformed || e == errc::unsupported);
      continue;
    }
    ++accepted;
    // Whatever is accepted is valid and re-encodes.
    CHECK_LE(consumed, len);
    CHECK(r->ndim >= 0 && r->ndim <= kMaxDims);
    for (int i = 0; i < r->ndim; ++i) {
      CHECK(r->shape[i] >= 0 && r->chunkshape[i] >= 0 && r->blockshape[i] >= 0);
      CHECK(!(r->blockshape[i] == 0 && r->chunkshape[i] != 0));
    }
    if (r->has_dtype && !r->dtype.empty()) {
      CHECK(r->dtype.data() >= reinterpret_cast<const char*>(copy.p));
      CHECK(r->dtype.data() + r->dtype.size() <= reinterpret_cast<const char*>(copy.p) + len);
    }
    b2nd_meta again = *r;
    again.version = 0;
    CHECK_OK(b2nd_meta_encode(again, bytes_mut(g_hand, sizeof g_hand)));
  }
  CHECK_LT(0, accepted);
}

TESSERA_TEST(b2nd_meta, a_dtype_with_a_size_but_no_bytes_is_refused) {
  b2nd_meta m;
  m.ndim = 1;
  m.shape[0] = 10;
  m.chunkshape[0] = 5;
  m.blockshape[0] = 5;
  m.has_dtype = true;
  m.dtype = span<const char>(nullptr, 3);
  static uint8_t out[256];
  CHECK_ERR(b2nd_meta_encode(m, bytes_mut(out, sizeof out)), errc::invalid_argument);
  // The reference stores the dtype's length as an int32: a longer one is refused before a byte of it is read.
  static const char one = 'x';
  m.dtype = span<const char>(&one, size_t{INT32_MAX} + 1);
  CHECK_ERR(b2nd_meta_encode(m, bytes_mut(out, sizeof out)), errc::invalid_argument);
  m.dtype = span<const char>("<f4", 3);
  CHECK_OK(b2nd_meta_encode(m, bytes_mut(out, sizeof out)));
}
