// SPDX-License-Identifier: BSD-3-Clause
#include "tessera/msgpack.hpp"

#include <cstring>

#include "../support/check.hpp"
#include "../support/random.hpp"
#include "../support/test_allocators.hpp"

using namespace tessera;

namespace {

// Large documents live here, not on the (small, bare-metal) stack.
constexpr size_t kBig = 3 * 65536 + 64;
uint8_t g_buf[kBig];
uint8_t g_payload[kBig];

void fill_payload() {
  for (size_t i = 0; i < kBig; ++i) g_payload[i] = static_cast<uint8_t>(i * 7 + 3);
}

// An exact-size heap copy of a prefix, so AddressSanitizer catches a read past the end of the input.
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

// The big-endian bytes of v over width bytes, built independently of the writer.
void put_be(uint8_t* out, uint64_t v, size_t width) {
  uint8_t all[8];
  for (size_t i = 0; i < 8; ++i) all[i] = static_cast<uint8_t>(v >> (8 * (7 - i)));
  std::memcpy(out, all + 8 - width, width);  // width is 1..8
}

bool bytes_equal(const uint8_t* a, const uint8_t* b, size_t n) { return n == 0 || std::memcmp(a, b, n) == 0; }

// Every strict prefix of an encoded object must fail to read as truncated, for skip() and for the typed read.
enum class typed { none, int_, uint_, str, bin, ext, array, map, float_, boolean, nil };

void check_prefixes(test::context& t, const uint8_t* doc, size_t size, typed kind) {
  // For big documents every prefix would be slow: the first and last bytes and a stride in between.
  for (size_t len = 0; len < size; ++len) {
    if (size > 600 && len > 40 && len + 40 < size && len % 997 != 0) continue;
    heap_bytes copy(doc, len);
    msgpack_reader r(copy.view());
    r.skip();
    CHECK_EQ(r.err().code, errc::truncated);
    CHECK_LE(r.position(), len);
    msgpack_reader r2(copy.view());
    switch (kind) {
      case typed::int_: (void)r2.read_int(); break;
      case typed::uint_: (void)r2.read_uint(); break;
      case typed::str: (void)r2.read_str(); break;
      case typed::bin: (void)r2.read_bin(); break;
      case typed::ext: (void)r2.read_ext(); break;
      case typed::float_: (void)r2.read_float64(); break;
      case typed::boolean: (void)r2.read_bool(); break;
      case typed::nil: r2.read_nil(); break;
      case typed::array: {
        const uint32_t n = r2.read_array();
        for (uint32_t i = 0; i < n && r2.ok(); ++i) r2.skip();
        break;
      }
      case typed::map: {
        const uint32_t n = r2.read_map();
        for (uint32_t i = 0; i < 2 * n && r2.ok(); ++i) r2.skip();
        break;
      }
      case typed::none: r2.skip(); break;
    }
    CHECK_EQ(r2.err().code, errc::truncated);
  }
}

// Writes v with write_int, checks the bytes against the msgpack table, reads it back and checks every prefix.
void check_int(test::context& t, int64_t v) {
  uint8_t expect[9];
  size_t n = 0;
  const uint64_t u = static_cast<uint64_t>(v);
  if (v >= 0 && v <= 127) {
    expect[0] = static_cast<uint8_t>(v);
    n = 1;
  } else if (v >= -32 && v < 0) {
    expect[0] = static_cast<uint8_t>(0xe0 | (u & 0x1f));
    n = 1;
  } else if (v >= 0) {
    const size_t w = v <= 0xff ? 1 : v <= 0xffff ? 2 : v <= 0xffffffffll ? 4 : 8;
    expect[0] = w == 1 ? 0xcc : w == 2 ? 0xcd : w == 4 ? 0xce : 0xcf;
    put_be(expect + 1, u, w);
    n = 1 + w;
  } else {
    const size_t w = v >= -128 ? 1 : v >= -32768 ? 2 : v >= INT32_MIN ? 4 : 8;
    expect[0] = w == 1 ? 0xd0 : w == 2 ? 0xd1 : w == 4 ? 0xd2 : 0xd3;
    put_be(expect + 1, u, w);
    n = 1 + w;
  }
  uint8_t buf[16];
  msgpack_writer w(bytes_mut(buf, sizeof buf));
  w.write_int(v);
  REQUIRE_OK(w.err());
  REQUIRE_EQ(w.position(), n);
  CHECK(bytes_equal(buf, expect, n));
  msgpack_writer counter;
  counter.write_int(v);
  CHECK_EQ(counter.position(), n);

  heap_bytes copy(buf, n);
  msgpack_reader r(copy.view());
  CHECK(r.peek_type() == msgpack_type::integer);
  CHECK_EQ(r.peek_marker(), static_cast<int>(expect[0]));
  CHECK_EQ(r.read_int(), v);
  CHECK_OK(r.err());
  CHECK_EQ(r.position(), n);
  CHECK(r.peek_type() == msgpack_type::none);
  msgpack_reader ru(copy.view());
  const uint64_t got = ru.read_uint();
  if (v >= 0) {
    CHECK_OK(ru.err());
    CHECK_EQ(got, u);
  } else {
    CHECK_ERR(ru.err(), errc::overflow);
    CHECK_EQ(got, 0u);
  }
  msgpack_reader r32(copy.view());
  const int32_t got32 = r32.read_int32();
  if (v >= INT32_MIN && v <= INT32_MAX) {
    CHECK_OK(r32.err());
    CHECK_EQ(got32, v);
  } else {
    CHECK_ERR(r32.err(), errc::overflow);
  }
  check_prefixes(t, buf, n, typed::int_);
}

}  // namespace

TESSERA_TEST(msgpack, int_boundaries_round_trip) {
  const int64_t values[] = {0,
                            1,
                            126,
                            127,
                            128,
                            255,
                            256,
                            65535,
                            65536,
                            INT32_MAX,
                            int64_t{INT32_MAX} + 1,
                            int64_t{UINT32_MAX},
                            int64_t{UINT32_MAX} + 1,
                            INT64_MAX,
                            -1,
                            -31,
                            -32,
                            -33,
                            -127,
                            -128,
                            -129,
                            -32767,
                            -32768,
                            -32769,
                            INT32_MIN,
                            int64_t{INT32_MIN} - 1,
                            INT64_MIN + 1,
                            INT64_MIN};
  for (int64_t v : values) check_int(t, v);
  test::rng rng(1);
  for (int i = 0; i < 2000; ++i) {
    const int shift = static_cast<int>(rng.range(0, 63));
    int64_t v = static_cast<int64_t>(rng.next() >> shift);
    if (rng.chance(50)) v = -v - 1;
    check_int(t, v);
  }
}

TESSERA_TEST(msgpack, uint_boundaries_round_trip) {
  const uint64_t values[] = {0, 127, 128, 255, 256, 65535, 65536, UINT32_MAX, uint64_t{UINT32_MAX} + 1,
                             uint64_t{INT64_MAX}, uint64_t{INT64_MAX} + 1, UINT64_MAX};
  for (uint64_t v : values) {
    uint8_t buf[16];
    msgpack_writer w(bytes_mut(buf, sizeof buf));
    w.write_uint(v);
    REQUIRE_OK(w.err());
    const size_t expect_size = v <= 127 ? 1 : v <= 0xff ? 2 : v <= 0xffff ? 3 : v <= 0xffffffffu ? 5 : 9;
    CHECK_EQ(w.position(), expect_size);
    msgpack_reader r(bytes_view(buf, w.position()));
    CHECK_EQ(r.read_uint(), v);
    CHECK_OK(r.err());
    msgpack_reader ri(bytes_view(buf, w.position()));
    const int64_t as_int = ri.read_int();
    if (v <= uint64_t{INT64_MAX}) {
      CHECK_OK(ri.err());
      CHECK_EQ(static_cast<uint64_t>(as_int), v);
    } else {
      CHECK_ERR(ri.err(), errc::overflow);
    }
    msgpack_reader r32(bytes_view(buf, w.position()));
    const uint32_t got32 = r32.read_uint32();
    if (v <= UINT32_MAX) {
      CHECK_EQ(got32, v);
      CHECK_OK(r32.err());
    } else {
      CHECK_ERR(r32.err(), errc::overflow);
    }
    check_prefixes(t, buf, w.position(), typed::uint_);
  }
  // uint64 max, byte by byte.
  uint8_t buf[9];
  msgpack_writer w(bytes_mut(buf, sizeof buf));
  w.write_uint(UINT64_MAX);
  const uint8_t expect[9] = {0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  CHECK(bytes_equal(buf, expect, 9));
}

TESSERA_TEST(msgpack, fixed_width_writers_pin_the_encoding) {
  uint8_t buf[128];
  msgpack_writer w(bytes_mut(buf, sizeof buf));
  w.write_int8(-2);
  w.write_int8(5);
  w.write_int16(0x0102);
  w.write_int32(0x01020304);
  w.write_int32(-1);
  w.write_int64(0x0102030405060708ll);
  w.write_int64(1);
  w.write_uint8(7);
  w.write_uint16(0xbeef);
  w.write_uint32(0xdeadbeefu);
  w.write_uint64(0x8000000000000001ull);
  w.write_fixint(-32);
  w.write_fixint(127);
  REQUIRE_OK(w.err());
  const uint8_t expect[] = {0xd0, 0xfe, 0xd0, 0x05, 0xd1, 0x01, 0x02, 0xd2, 0x01, 0x02, 0x03, 0x04,
                            0xd2, 0xff, 0xff, 0xff, 0xff, 0xd3, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                            0x07, 0x08, 0xd3, 0, 0, 0, 0, 0, 0, 0, 1, 0xcc, 0x07, 0xcd, 0xbe, 0xef,
                            0xce, 0xde, 0xad, 0xbe, 0xef, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0x01, 0xe0, 0x7f};
  REQUIRE_EQ(w.position(), sizeof expect);
  CHECK(bytes_equal(buf, expect, sizeof expect));

  // Any integer encoding reads back through the generic getters.
  msgpack_reader r(bytes_view(buf, w.position()));
  CHECK_EQ(r.read_int(), -2);
  CHECK_EQ(r.read_uint(), 5u);
  CHECK_EQ(r.read_int(), 0x0102);
  CHECK_EQ(r.read_int32(), 0x01020304);
  CHECK_EQ(r.read_int(), -1);
  CHECK_EQ(r.read_int(), 0x0102030405060708ll);
  CHECK_EQ(r.read_uint32(), 1u);
  CHECK_EQ(r.read_uint(), 7u);
  CHECK_EQ(r.read_uint(), 0xbeefu);
  CHECK_EQ(r.read_uint(), 0xdeadbeefu);
  CHECK_EQ(r.read_uint(), 0x8000000000000001ull);
  CHECK_EQ(r.read_int(), -32);
  CHECK_EQ(r.read_int(), 127);
  CHECK_OK(r.err());
  CHECK_EQ(r.position(), sizeof expect);

  msgpack_writer bad(bytes_mut(buf, sizeof buf));
  bad.write_fixint(-33);
  CHECK_ERR(bad.err(), errc::invalid_argument);
  CHECK_EQ(bad.position(), 0u);
}

TESSERA_TEST(msgpack, str_lengths_round_trip) {
  fill_payload();
  const size_t lengths[] = {0, 1, 31, 32, 255, 256, 65535, 65536, 70000};
  for (size_t len : lengths) {
    msgpack_writer w(bytes_mut(g_buf, kBig));
    w.write_str(span<const char>(reinterpret_cast<const char*>(g_payload), len));
    REQUIRE_OK(w.err());
    const size_t header = len <= 31 ? 1 : len <= 255 ? 2 : len <= 65535 ? 3 : 5;
    REQUIRE_EQ(w.position(), header + len);
    if (len <= 31) {
      CHECK_EQ(g_buf[0], 0xa0 + len);
    } else {
      CHECK_EQ(g_buf[0], header == 2 ? 0xd9 : header == 3 ? 0xda : 0xdb);
      uint8_t be[8] = {};
      put_be(be, len, header - 1);
      CHECK(bytes_equal(g_buf + 1, be, header - 1));
    }
    msgpack_reader r(bytes_view(g_buf, w.position()));
    CHECK(r.peek_type() == msgpack_type::str);
    const span<const char> s = r.read_str();
    CHECK_OK(r.err());
    CHECK_EQ(s.size(), len);
    // A view into the input, not a copy.
    CHECK(s.data() == reinterpret_cast<const char*>(g_buf + header));
    CHECK(bytes_equal(reinterpret_cast<const uint8_t*>(s.data()), g_payload, len));
    CHECK_EQ(r.position(), header + len);
    check_prefixes(t, g_buf, w.position(), typed::str);
  }
  // The fixed forms, even for short strings.
  uint8_t buf[64];
  msgpack_writer w(bytes_mut(buf, sizeof buf));
  const char text[] = "<f8";
  const span<const char> s(text, 3);
  w.write_fixstr(s);
  w.write_str8(s);
  w.write_str16(s);
  w.write_str32(s);
  REQUIRE_OK(w.err());
  const uint8_t expect[] = {0xa3, '<', 'f', '8', 0xd9, 3, '<', 'f', '8', 0xda, 0, 3, '<', 'f', '8',
                            0xdb, 0, 0, 0, 3, '<', 'f', '8'};
  REQUIRE_EQ(w.position(), sizeof expect);
  CHECK(bytes_equal(buf, expect, sizeof expect));
  msgpack_reader r(bytes_view(buf, w.position()));
  for (int i = 0; i < 4; ++i) {
    const span<const char> got = r.read_str();
    CHECK_EQ(got.size(), 3u);
    CHECK(std::memcmp(got.data(), text, 3) == 0);
  }
  CHECK_OK(r.err());
  // Lengths a fixed form cannot hold are refused, and nothing is written.
  msgpack_writer w2(bytes_mut(g_buf, kBig));
  w2.write_fixstr(span<const char>(reinterpret_cast<const char*>(g_payload), 32));
  CHECK_ERR(w2.err(), errc::invalid_argument);
  CHECK_EQ(w2.position(), 0u);
  msgpack_writer w3(bytes_mut(g_buf, kBig));
  w3.write_str8(span<const char>(reinterpret_cast<const char*>(g_payload), 256));
  CHECK_ERR(w3.err(), errc::invalid_argument);
  msgpack_writer w4(bytes_mut(g_buf, kBig));
  w4.write_str16(span<const char>(reinterpret_cast<const char*>(g_payload), 65536));
  CHECK_ERR(w4.err(), errc::invalid_argument);
}

TESSERA_TEST(msgpack, bin_lengths_round_trip) {
  fill_payload();
  const size_t lengths[] = {0, 1, 255, 256, 65535, 65536};
  for (size_t len : lengths) {
    msgpack_writer w(bytes_mut(g_buf, kBig));
    w.write_bin(bytes_view(g_payload, len));
    REQUIRE_OK(w.err());
    const size_t header = len <= 255 ? 2 : len <= 65535 ? 3 : 5;
    REQUIRE_EQ(w.position(), header + len);
    CHECK_EQ(g_buf[0], header == 2 ? 0xc4 : header == 3 ? 0xc5 : 0xc6);
    uint8_t be[8] = {};
    put_be(be, len, header - 1);
    CHECK(bytes_equal(g_buf + 1, be, header - 1));
    msgpack_reader r(bytes_view(g_buf, w.position()));
    CHECK(r.peek_type() == msgpack_type::bin);
    const bytes_view b = r.read_bin();
    CHECK_OK(r.err());
    CHECK_EQ(b.size(), len);
    CHECK(b.data() == g_buf + header);
    CHECK(bytes_equal(b.data(), g_payload, len));
    check_prefixes(t, g_buf, w.position(), typed::bin);
  }
  uint8_t buf[16];
  msgpack_writer w(bytes_mut(buf, sizeof buf));
  const uint8_t data[2] = {9, 8};
  w.write_bin8(bytes_view(data, 2));
  w.write_bin16(bytes_view(data, 2));
  w.write_bin32(bytes_view(data, 2));
  const uint8_t expect[] = {0xc4, 2, 9, 8, 0xc5, 0, 2, 9, 8, 0xc6, 0, 0, 0, 2, 9, 8};
  REQUIRE_EQ(w.position(), sizeof expect);
  CHECK(bytes_equal(buf, expect, sizeof expect));
}

TESSERA_TEST(msgpack, ext_sizes_round_trip) {
  fill_payload();
  const size_t lengths[] = {0, 1, 2, 3, 4, 5, 8, 16, 17, 255, 256, 65535, 65536};
  int8_t type = -128;
  for (size_t len : lengths) {
    type = static_cast<int8_t>(type + 37);
    msgpack_writer w(bytes_mut(g_buf, kBig));
    w.write_ext(type, bytes_view(g_payload, len));
    REQUIRE_OK(w.err());
    uint8_t marker = 0;
    size_t len_width = 0;
    switch (len) {
      case 1: marker = 0xd4; break;
      case 2: marker = 0xd5; break;
      case 4: marker = 0xd6; break;
      case 8: marker = 0xd7; break;
      case 16: marker = 0xd8; break;
      default:
        len_width = len <= 255 ? 1 : len <= 65535 ? 2 : 4;
        marker = len_width == 1 ? 0xc7 : len_width == 2 ? 0xc8 : 0xc9;
    }
    const size_t header = 1 + len_width + 1;
    REQUIRE_EQ(w.position(), header + len);
    CHECK_EQ(g_buf[0], marker);
    uint8_t be[8] = {};
    put_be(be, len, len_width);
    CHECK(bytes_equal(g_buf + 1, be, len_width));
    CHECK_EQ(g_buf[1 + len_width], static_cast<uint8_t>(type));
    msgpack_reader r(bytes_view(g_buf, w.position()));
    CHECK(r.peek_type() == msgpack_type::ext);
    const msgpack_ext e = r.read_ext();
    CHECK_OK(r.err());
    CHECK_EQ(e.type, type);
    CHECK_EQ(e.data.size(), len);
    CHECK(e.data.data() == g_buf + header);
    CHECK(bytes_equal(e.data.data(), g_payload, len));
    check_prefixes(t, g_buf, w.position(), typed::ext);
  }
}

TESSERA_TEST(msgpack, fixext16_writer_is_write_ext_of_16_bytes) {
  fill_payload();
  uint8_t generic[32] = {};
  msgpack_writer g(bytes_mut(generic, sizeof generic));
  g.write_ext(-7, bytes_view(g_payload, 16));
  REQUIRE_OK(g.err());
  uint8_t fixed[32] = {};
  msgpack_writer f(bytes_mut(fixed, sizeof fixed));
  f.write_fixext16(-7, bytes_view(g_payload, 16));
  REQUIRE_OK(f.err());
  REQUIRE_EQ(f.position(), size_t{18});
  REQUIRE_EQ(g.position(), f.position());
  CHECK(bytes_equal(generic, fixed, 18));
  msgpack_writer other_size(bytes_mut(fixed, sizeof fixed));
  other_size.write_fixext16(1, bytes_view(g_payload, 15));  // another size: refused, nothing written
  CHECK_EQ(other_size.err().code, errc::invalid_argument);
  CHECK_EQ(other_size.position(), size_t{0});
  msgpack_writer small(bytes_mut(fixed, 17));
  small.write_fixext16(1, bytes_view(g_payload, 16));
  CHECK_EQ(small.err().code, errc::buffer_too_small);
}

TESSERA_TEST(msgpack, nil_bool_float_round_trip) {
  uint8_t buf[64];
  msgpack_writer w(bytes_mut(buf, sizeof buf));
  w.write_nil();
  w.write_bool(true);
  w.write_bool(false);
  w.write_float32(1.5f);
  w.write_float64(-2.25);
  REQUIRE_OK(w.err());
  const uint8_t expect[] = {0xc0, 0xc3, 0xc2, 0xca, 0x3f, 0xc0, 0, 0, 0xcb, 0xc0, 0x02, 0, 0, 0, 0, 0, 0};
  REQUIRE_EQ(w.position(), sizeof expect);
  CHECK(bytes_equal(buf, expect, sizeof expect));
  msgpack_reader r(bytes_view(buf, w.position()));
  CHECK(r.peek_type() == msgpack_type::nil);
  r.read_nil();
  CHECK(r.peek_type() == msgpack_type::boolean);
  CHECK(r.read_bool());
  CHECK(!r.read_bool());
  CHECK(r.peek_type() == msgpack_type::float32);
  CHECK(r.read_float64() == 1.5);  // float32 widens
  CHECK(r.peek_type() == msgpack_type::float64);
  CHECK(r.read_float64() == -2.25);
  CHECK_OK(r.err());
  check_prefixes(t, buf + 3, 5, typed::float_);
  check_prefixes(t, buf + 8, 9, typed::float_);
  check_prefixes(t, buf, 1, typed::nil);
  check_prefixes(t, buf + 1, 1, typed::boolean);
  msgpack_reader r32(bytes_view(buf + 3, 5));
  CHECK(r32.read_float32() == 1.5f);
  msgpack_reader r64(bytes_view(buf + 8, 9));
  (void)r64.read_float32();
  CHECK_ERR(r64.err(), errc::malformed);
}

TESSERA_TEST(msgpack, array_and_map_headers_round_trip) {
  const uint32_t counts[] = {0, 1, 15, 16, 65535, 65536};
  for (int as_map = 0; as_map < 2; ++as_map) {
    for (uint32_t count : counts) {
      msgpack_writer w(bytes_mut(g_buf, kBig));
      if (as_map) w.write_map(count);
      else w.write_array(count);
      const size_t header = count <= 15 ? 1 : count <= 65535 ? 3 : 5;
      REQUIRE_EQ(w.position(), header);
      if (count <= 15) {
        CHECK_EQ(g_buf[0], (as_map ? 0x80u : 0x90u) + count);
      } else {
        CHECK_EQ(g_buf[0], as_map ? (header == 3 ? 0xde : 0xdf) : (header == 3 ? 0xdc : 0xdd));
        uint8_t be[8] = {};
        put_be(be, count, header - 1);
        CHECK(bytes_equal(g_buf + 1, be, header - 1));
      }
      // The elements: positive fixints, so every element is one byte.
      const uint64_t elements = as_map ? uint64_t{count} * 2 : count;
      for (uint64_t i = 0; i < elements; ++i) w.write_int(static_cast<int64_t>(i % 128));
      REQUIRE_OK(w.err());
      const size_t size = w.position();
      REQUIRE_EQ(size, header + elements);

      msgpack_reader r(bytes_view(g_buf, size));
      CHECK(r.peek_type() == (as_map ? msgpack_type::map : msgpack_type::array));
      CHECK_EQ(as_map ? r.read_map() : r.read_array(), count);
      uint64_t sum_ok = 0;
      for (uint64_t i = 0; i < elements; ++i) sum_ok += r.read_int() == static_cast<int64_t>(i % 128) ? 1 : 0;
      CHECK_EQ(sum_ok, elements);
      CHECK_OK(r.err());
      CHECK_EQ(r.position(), size);

      msgpack_reader rs(bytes_view(g_buf, size));
      rs.skip();
      CHECK_OK(rs.err());
      CHECK_EQ(rs.position(), size);
      check_prefixes(t, g_buf, size, as_map ? typed::map : typed::array);
    }
  }
  // The fixed header forms.
  uint8_t buf[32];
  msgpack_writer w(bytes_mut(buf, sizeof buf));
  w.write_fixarray(3);
  w.write_array16(3);
  w.write_array32(3);
  w.write_fixmap(1);
  w.write_map16(1);
  w.write_map32(1);
  const uint8_t expect[] = {0x93, 0xdc, 0, 3, 0xdd, 0, 0, 0, 3, 0x81, 0xde, 0, 1, 0xdf, 0, 0, 0, 1};
  REQUIRE_EQ(w.position(), sizeof expect);
  CHECK(bytes_equal(buf, expect, sizeof expect));
  w.write_fixarray(16);
  CHECK_ERR(w.err(), errc::invalid_argument);
  msgpack_writer w2(bytes_mut(buf, sizeof buf));
  w2.write_fixmap(16);
  CHECK_ERR(w2.err(), errc::invalid_argument);
}

TESSERA_TEST(msgpack, headers_announcing_more_than_the_input_holds) {
  // array32 of 2^32-1 elements in a 5-byte input: refused at once, not after a long loop.
  const uint8_t arr[] = {0xdd, 0xff, 0xff, 0xff, 0xff};
  msgpack_reader r(bytes_view(arr, sizeof arr));
  CHECK_EQ(r.read_array(), 0u);
  CHECK_ERR(r.err(), errc::truncated);
  const uint8_t map[] = {0xdf, 0xff, 0xff, 0xff, 0xff, 0x01};
  msgpack_reader rm(bytes_view(map, sizeof map));
  CHECK_EQ(rm.read_map(), 0u);
  CHECK_ERR(rm.err(), errc::truncated);
  const uint8_t str[] = {0xdb, 0xff, 0xff, 0xff, 0xff, 'a'};
  msgpack_reader rstr(bytes_view(str, sizeof str));
  CHECK(rstr.read_str().empty());
  CHECK_ERR(rstr.err(), errc::truncated);
  const uint8_t ext[] = {0xc9, 0xff, 0xff, 0xff, 0xff, 1, 2};
  msgpack_reader rext(bytes_view(ext, sizeof ext));
  CHECK(rext.read_ext().data.empty());
  CHECK_ERR(rext.err(), errc::truncated);
  msgpack_reader rskip(bytes_view(arr, sizeof arr));
  rskip.skip();
  CHECK_ERR(rskip.err(), errc::truncated);
  // An empty input.
  msgpack_reader empty(bytes_view{});
  CHECK(empty.peek_type() == msgpack_type::none);
  CHECK_EQ(empty.peek_marker(), -1);
  (void)empty.read_int();
  CHECK_ERR(empty.err(), errc::truncated);
}

TESSERA_TEST(msgpack, errors_are_sticky) {
  const uint8_t doc[] = {0xa2, 'h', 'i', 0x05, 0x93, 0x01, 0x02, 0x03};
  msgpack_reader r(bytes_view(doc, sizeof doc));
  CHECK_EQ(r.read_int(), 0);  // a str, not an integer
  CHECK_ERR(r.err(), errc::malformed);
  const size_t where = r.position();
  CHECK_EQ(where, 0u);
  // Every later read is neutral, and the first error stays.
  CHECK(r.read_str().empty());
  CHECK_EQ(r.read_uint(), 0u);
  CHECK_EQ(r.read_array(), 0u);
  CHECK(!r.read_bool());
  CHECK(r.read_bin().empty());
  CHECK(r.read_raw(1).empty());
  r.skip();
  r.fail(errc::corrupt, "another");
  CHECK(r.peek_type() == msgpack_type::none);
  CHECK_EQ(r.peek_marker(), -1);
  CHECK_ERR(r.err(), errc::malformed);
  CHECK_EQ(r.position(), where);

  // A truncation also sticks, and a later valid-looking read does not clear it.
  const uint8_t cut[] = {0xcd, 0x01};
  msgpack_reader rt(bytes_view(cut, sizeof cut));
  (void)rt.read_uint();
  CHECK_ERR(rt.err(), errc::truncated);
  (void)rt.read_uint();
  CHECK_ERR(rt.err(), errc::truncated);

  // The reserved marker.
  const uint8_t reserved[] = {0xc1};
  msgpack_reader rr(bytes_view(reserved, 1));
  CHECK(rr.peek_type() == msgpack_type::invalid);
  rr.skip();
  CHECK_ERR(rr.err(), errc::malformed);

  // The writer's error sticks too: nothing more is written after a refusal.
  uint8_t out[4];
  msgpack_writer w(bytes_mut(out, sizeof out));
  w.write_int(1);
  w.write_uint32(5);  // 5 bytes do not fit in the 3 left
  CHECK_ERR(w.err(), errc::buffer_too_small);
  CHECK_EQ(w.position(), 1u);
  w.write_nil();  // would fit, but the error is sticky
  CHECK_EQ(w.position(), 1u);
  CHECK_ERR(w.err(), errc::buffer_too_small);
}

TESSERA_TEST(msgpack, type_mismatches_are_malformed) {
  const uint8_t nil[] = {0xc0};
  msgpack_reader a(bytes_view(nil, 1));
  (void)a.read_str();
  CHECK_ERR(a.err(), errc::malformed);
  msgpack_reader b(bytes_view(nil, 1));
  (void)b.read_bool();
  CHECK_ERR(b.err(), errc::malformed);
  const uint8_t one[] = {0x01};
  msgpack_reader c(bytes_view(one, 1));
  c.read_nil();
  CHECK_ERR(c.err(), errc::malformed);
  msgpack_reader d(bytes_view(one, 1));
  (void)d.read_map();
  CHECK_ERR(d.err(), errc::malformed);
  msgpack_reader e(bytes_view(one, 1));
  (void)e.read_ext();
  CHECK_ERR(e.err(), errc::malformed);
  msgpack_reader f(bytes_view(one, 1));
  (void)f.read_float64();
  CHECK_ERR(f.err(), errc::malformed);
  msgpack_reader g(bytes_view(nil, 1));
  (void)g.read_array();
  CHECK_ERR(g.err(), errc::malformed);
  msgpack_reader h(bytes_view(nil, 1));
  (void)h.read_bin();
  CHECK_ERR(h.err(), errc::malformed);
}

TESSERA_TEST(msgpack, readers_refuse_markers_on_both_sides_of_their_range) {
  // read_bin below and above the bin markers; read_ext below the ext markers, between them and the fixexts, and
  // above the fixexts.
  const uint8_t ext8[] = {0xc7, 0x00, 0x01};
  msgpack_reader a(bytes_view(ext8, sizeof ext8));
  (void)a.read_bin();
  CHECK_ERR(a.err(), errc::malformed);
  const uint8_t bin8[] = {0xc4, 0x00};
  msgpack_reader b(bytes_view(bin8, sizeof bin8));
  (void)b.read_ext();
  CHECK_ERR(b.err(), errc::malformed);
  const uint8_t uint8[] = {0xcc, 0x01};
  msgpack_reader c(bytes_view(uint8, sizeof uint8));
  (void)c.read_ext();
  CHECK_ERR(c.err(), errc::malformed);
  const uint8_t str8[] = {0xd9, 0x00};
  msgpack_reader d(bytes_view(str8, sizeof str8));
  (void)d.read_ext();
  CHECK_ERR(d.err(), errc::malformed);
  // skip: the reserved marker is malformed; a float32 is skipped whole.
  const uint8_t reserved[] = {0xc1};
  msgpack_reader e(bytes_view(reserved, 1));
  e.skip();
  CHECK_ERR(e.err(), errc::malformed);
  const uint8_t float32[] = {0xca, 0x40, 0x40, 0x00, 0x00, 0x01};
  msgpack_reader f(bytes_view(float32, sizeof float32));
  f.skip();
  CHECK_OK(f.err());
  CHECK_EQ(f.read_uint(), 1u);
}

TESSERA_TEST(msgpack, skip_limits_past_the_maximum_are_the_maximum) {
  msgpack_writer w(bytes_mut(g_buf, kBig));
  for (int i = 0; i < kMsgpackMaxDepth + 1; ++i) w.write_array(1);
  w.write_nil();
  REQUIRE_OK(w.err());
  msgpack_reader r(bytes_view(g_buf, w.position()));
  r.skip(kMsgpackMaxDepth + 1000);
  CHECK_ERR(r.err(), errc::unsupported);
}

TESSERA_TEST(msgpack, writer_keeps_its_first_error) {
  uint8_t small[2];
  msgpack_writer w(bytes_mut(small, sizeof small));
  w.write_str(span<const char>("longer than two", 15));  // buffer_too_small
  const error first = w.err();
  CHECK(!first.ok());
  w.write_raw(bytes_view(g_payload, 1));  // nothing more is written, the error stays the first one
  w.write_uint(1ull << 40);
  CHECK(w.err().code == first.code);
  CHECK(w.err().message == first.message);
  CHECK_EQ(w.position(), 0u);
  // A refused fixed form after an error keeps the first error too.
  w.write_fixarray(16);
  CHECK(w.err().code == first.code);
  msgpack_writer v(bytes_mut(small, sizeof small));
  v.write_fixarray(16);
  CHECK_ERR(v.err(), errc::invalid_argument);
  v.write_fixint(-33);
  CHECK_ERR(v.err(), errc::invalid_argument);
  CHECK_EQ(v.position(), 0u);
  // An empty raw write writes nothing and is no error.
  msgpack_writer e(bytes_mut(small, sizeof small));
  e.write_raw(bytes_view{});
  CHECK_OK(e.err());
  CHECK_EQ(e.position(), 0u);
}

namespace {

// Writes a random nested document, containers nested at most depth deep.
void write_random_nested(test::rng& rng, msgpack_writer& w, int depth) {
  const int choice = static_cast<int>(rng.range(0, depth > 0 ? 9 : 6));
  switch (choice) {
    case 0: w.write_nil(); break;
    case 1: w.write_int(static_cast<int64_t>(rng.next())); break;
    case 2:
      w.write_str(span<const char>("abcdefghijklmnopqrstuvwxyz0123456789", static_cast<size_t>(rng.range(0, 36))));
      break;
    case 3: w.write_bin(bytes_view(g_payload, static_cast<size_t>(rng.range(0, 300)))); break;
    case 4: {
      const int8_t type = static_cast<int8_t>(rng.range(-128, 127));
      w.write_ext(type, bytes_view(g_payload, static_cast<size_t>(rng.range(0, 20))));
      break;
    }
    case 5: w.write_float64(0.5); break;
    case 6: w.write_bool(rng.chance(50)); break;
    case 7:
    case 8: {
      const uint32_t n = static_cast<uint32_t>(rng.range(0, 20));
      w.write_array(n);
      for (uint32_t i = 0; i < n; ++i) write_random_nested(rng, w, depth - 1);
      break;
    }
    default: {
      const uint32_t n = static_cast<uint32_t>(rng.range(0, 10));
      w.write_map(n);
      for (uint32_t i = 0; i < 2 * n; ++i) write_random_nested(rng, w, depth - 1);
      break;
    }
  }
}

}  // namespace

TESSERA_TEST(msgpack, skip_nested_structures) {
  fill_payload();
  test::rng rng(7);
  for (int iter = 0; iter < 300; ++iter) {
    msgpack_writer w(bytes_mut(g_buf, kBig));
    write_random_nested(rng, w, 4);
    w.write_uint(0xabcdef);  // a sentinel after the document: 5 bytes (uint32)
    REQUIRE_OK(w.err());
    const size_t size = w.position();
    msgpack_reader r(bytes_view(g_buf, size));
    r.skip();
    CHECK_OK(r.err());
    CHECK_EQ(r.read_uint(), 0xabcdefu);
    CHECK_EQ(r.position(), size);
    if (iter < 40) check_prefixes(t, g_buf, size - 5, typed::none);
  }
}

TESSERA_TEST(msgpack, skip_depth_limit) {
  // depth nested single-element arrays around a nil.
  auto build = [](int depth) {
    msgpack_writer w(bytes_mut(g_buf, kBig));
    for (int i = 0; i < depth; ++i) w.write_array(1);
    w.write_nil();
    return w.position();
  };
  size_t size = build(kMsgpackMaxDepth);
  msgpack_reader ok_reader(bytes_view(g_buf, size));
  ok_reader.skip();
  CHECK_OK(ok_reader.err());
  CHECK_EQ(ok_reader.position(), size);

  size = build(kMsgpackMaxDepth + 1);
  msgpack_reader deep(bytes_view(g_buf, size));
  deep.skip();
  CHECK_ERR(deep.err(), errc::unsupported);

  size = build(3);
  msgpack_reader limited(bytes_view(g_buf, size));
  limited.skip(2);
  CHECK_ERR(limited.err(), errc::unsupported);
  msgpack_reader enough(bytes_view(g_buf, size));
  enough.skip(3);
  CHECK_OK(enough.err());

  // Hostile nesting much deeper than the limit costs nothing: refused, no recursion.
  size = build(100000);
  msgpack_reader hostile(bytes_view(g_buf, size));
  hostile.skip();
  CHECK_ERR(hostile.err(), errc::unsupported);

  // Empty containers need no depth.
  const uint8_t empty[] = {0x90};
  msgpack_reader e(bytes_view(empty, 1));
  e.skip(0);
  CHECK_OK(e.err());
}

namespace {

// A document exercising every writer, for the buffer-size tests.
void write_everything(msgpack_writer& w) {
  w.write_array(13);
  w.write_int(-70000);
  w.write_uint(1ull << 40);
  w.write_str(span<const char>("b2frame", 8));
  w.write_bin(bytes_view(g_payload, 300));
  w.write_ext(6, bytes_view(g_payload, 16));
  w.write_fixext16(6, bytes_view(g_payload, 16));
  w.write_map(1);
  w.write_fixstr(span<const char>("b2nd", 4));
  w.write_int32(107);
  w.write_int64(-5);
  w.write_str32(span<const char>("<f8", 3));
  w.write_bool(false);
  w.write_nil();
  w.write_float32(3.0f);
  w.write_bin32(bytes_view(g_payload, 20));
  w.write_raw(bytes_view(g_payload, 7));
}

}  // namespace

TESSERA_TEST(msgpack, writer_refuses_every_too_small_buffer) {
  fill_payload();
  msgpack_writer counter;
  CHECK(counter.counting());
  write_everything(counter);
  REQUIRE_OK(counter.err());
  const size_t need = counter.position();
  CHECK_EQ(need, 1 + 5 + 9 + 9 + 303 + 18 + 18 + 1 + 5 + 5 + 9 + 8 + 1 + 1 + 5 + 25 + 7u);

  static uint8_t reference[1024];
  msgpack_writer full(bytes_mut(reference, sizeof reference));
  write_everything(full);
  REQUIRE_OK(full.err());
  REQUIRE_EQ(full.position(), need);

  allocator a = test::system_allocator();
  for (size_t size = 0; size <= need; ++size) {
    // Exact-size heap buffers: ASan catches a write past the end.
    uint8_t* p = static_cast<uint8_t*>(allocator_allocate(a, size == 0 ? 1 : size, 1));
    REQUIRE(p != nullptr);
    msgpack_writer w(bytes_mut(p, size));
    write_everything(w);
    if (size < need) {
      CHECK_ERR(w.err(), errc::buffer_too_small);
      CHECK_LE(w.position(), size);
      // What was written before the refusal is a correct prefix.
      CHECK(bytes_equal(p, reference, w.position()));
    } else {
      CHECK_OK(w.err());
      CHECK_EQ(w.position(), need);
      CHECK(bytes_equal(p, reference, need));
    }
    allocator_deallocate(a, p, size == 0 ? 1 : size, 1);
  }
  // A null buffer counts.
  msgpack_writer null_buffer(bytes_mut(nullptr, 0));
  CHECK(null_buffer.counting());
  write_everything(null_buffer);
  CHECK_EQ(null_buffer.position(), need);
}

namespace {

enum class item_kind : uint8_t { nil, boolean, int_, uint_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                 f32, f64, str, str8, str16, str32, bin, bin8, bin16, bin32, ext, count };

struct item {
  item_kind kind;
  uint64_t value;  // the integer bits, the bool, or the payload offset
  size_t len;      // the payload length
  int8_t ext_type;
};

constexpr int kItems = 64;

void make_items(test::rng& rng, item* items, int n) {
  for (int i = 0; i < n; ++i) {
    item& it = items[i];
    it.kind = static_cast<item_kind>(rng.range(0, static_cast<int64_t>(item_kind::count) - 1));
    it.value = rng.next() >> rng.range(0, 63);
    it.len = static_cast<size_t>(rng.chance(80) ? rng.range(0, 40) : rng.range(0, 300));
    it.ext_type = static_cast<int8_t>(rng.range(-128, 127));
    if (it.kind == item_kind::str8 || it.kind == item_kind::bin8) it.len %= 256;
  }
}

void write_item(msgpack_writer& w, const item& it) {
  const span<const char> s(reinterpret_cast<const char*>(g_payload) + it.value % 1024, it.len);
  const bytes_view b(g_payload + it.value % 1024, it.len);
  switch (it.kind) {
    case item_kind::nil: w.write_nil(); break;
    case item_kind::boolean: w.write_bool(it.value & 1); break;
    case item_kind::int_: w.write_int(static_cast<int64_t>(it.value)); break;
    case item_kind::uint_: w.write_uint(it.value); break;
    case item_kind::int8: w.write_int8(static_cast<int8_t>(it.value)); break;
    case item_kind::int16: w.write_int16(static_cast<int16_t>(it.value)); break;
    case item_kind::int32: w.write_int32(static_cast<int32_t>(it.value)); break;
    case item_kind::int64: w.write_int64(static_cast<int64_t>(it.value)); break;
    case item_kind::uint8: w.write_uint8(static_cast<uint8_t>(it.value)); break;
    case item_kind::uint16: w.write_uint16(static_cast<uint16_t>(it.value)); break;
    case item_kind::uint32: w.write_uint32(static_cast<uint32_t>(it.value)); break;
    case item_kind::uint64: w.write_uint64(it.value); break;
    case item_kind::f32: w.write_float32(static_cast<float>(it.value & 0xffff)); break;
    case item_kind::f64: w.write_float64(static_cast<double>(it.value & 0xffffffff)); break;
    case item_kind::str: w.write_str(s); break;
    case item_kind::str8: w.write_str8(s); break;
    case item_kind::str16: w.write_str16(s); break;
    case item_kind::str32: w.write_str32(s); break;
    case item_kind::bin: w.write_bin(b); break;
    case item_kind::bin8: w.write_bin8(b); break;
    case item_kind::bin16: w.write_bin16(b); break;
    case item_kind::bin32: w.write_bin32(b); break;
    case item_kind::ext: w.write_ext(it.ext_type, b); break;
    case item_kind::count: break;
  }
}

bool read_item_matches(msgpack_reader& r, const item& it) {
  const uint8_t* payload = g_payload + it.value % 1024;
  switch (it.kind) {
    case item_kind::nil: r.read_nil(); return r.ok();
    case item_kind::boolean: return r.read_bool() == static_cast<bool>(it.value & 1);
    case item_kind::int_:
    case item_kind::int64: return r.read_int() == static_cast<int64_t>(it.value);
    case item_kind::uint_:
    case item_kind::uint64: return r.read_uint() == it.value;
    case item_kind::int8: return r.read_int() == static_cast<int8_t>(it.value);
    case item_kind::int16: return r.read_int() == static_cast<int16_t>(it.value);
    case item_kind::int32: return r.read_int32() == static_cast<int32_t>(it.value);
    case item_kind::uint8: return r.read_uint() == static_cast<uint8_t>(it.value);
    case item_kind::uint16: return r.read_uint() == static_cast<uint16_t>(it.value);
    case item_kind::uint32: return r.read_uint32() == static_cast<uint32_t>(it.value);
    case item_kind::f32: return r.read_float32() == static_cast<float>(it.value & 0xffff);
    case item_kind::f64: return r.read_float64() == static_cast<double>(it.value & 0xffffffff);
    case item_kind::str:
    case item_kind::str8:
    case item_kind::str16:
    case item_kind::str32: {
      const span<const char> s = r.read_str();
      return s.size() == it.len && bytes_equal(reinterpret_cast<const uint8_t*>(s.data()), payload, it.len);
    }
    case item_kind::bin:
    case item_kind::bin8:
    case item_kind::bin16:
    case item_kind::bin32: {
      const bytes_view b = r.read_bin();
      return b.size() == it.len && bytes_equal(b.data(), payload, it.len);
    }
    case item_kind::ext: {
      const msgpack_ext e = r.read_ext();
      return e.type == it.ext_type && e.data.size() == it.len && bytes_equal(e.data.data(), payload, it.len);
    }
    case item_kind::count: break;
  }
  return false;
}

}  // namespace

TESSERA_TEST(msgpack, random_documents_round_trip) {
  fill_payload();
  static item items[kItems];
  test::rng rng(12345);
  for (int doc = 0; doc < 1500; ++doc) {
    const int n = static_cast<int>(rng.range(0, kItems));
    make_items(rng, items, n);
    msgpack_writer counter;
    counter.write_array(static_cast<uint32_t>(n));
    for (int i = 0; i < n; ++i) write_item(counter, items[i]);
    REQUIRE_OK(counter.err());

    msgpack_writer w(bytes_mut(g_buf, counter.position()));  // exactly the counted size
    w.write_array(static_cast<uint32_t>(n));
    for (int i = 0; i < n; ++i) write_item(w, items[i]);
    REQUIRE_OK(w.err());
    REQUIRE_EQ(w.position(), counter.position());

    heap_bytes copy(g_buf, w.position());
    msgpack_reader r(copy.view());
    REQUIRE_EQ(r.read_array(), static_cast<uint32_t>(n));
    int matches = 0;
    for (int i = 0; i < n; ++i) matches += read_item_matches(r, items[i]) ? 1 : 0;
    CHECK_EQ(matches, n);
    CHECK_OK(r.err());
    CHECK_EQ(r.position(), w.position());

    msgpack_reader rs(copy.view());
    rs.skip();
    CHECK_OK(rs.err());
    CHECK_EQ(rs.position(), w.position());

    // A random cut is always a clean truncation.
    if (w.position() > 0) {
      const size_t cut = static_cast<size_t>(rng.range(0, static_cast<int64_t>(w.position()) - 1));
      heap_bytes prefix(g_buf, cut);
      msgpack_reader rc(prefix.view());
      rc.skip();
      CHECK_ERR(rc.err(), errc::truncated);
    }
  }
}

TESSERA_TEST(msgpack, random_bytes_never_read_out_of_bounds) {
  test::rng rng(99);
  static uint8_t junk[256];
  for (int iter = 0; iter < 5000; ++iter) {
    const size_t n = static_cast<size_t>(rng.range(0, 64));
    for (size_t i = 0; i < n; ++i) junk[i] = static_cast<uint8_t>(rng.next());
    heap_bytes copy(junk, n);
    msgpack_reader r(copy.view());
    while (r.ok() && r.remaining() > 0) r.skip();
    CHECK_LE(r.position(), n);
    if (r.ok()) CHECK_EQ(r.position(), n);
  }
}

// The exact-form readers take the encodings the fixed-width writers give, and refuse the others.
TESSERA_TEST(msgpack, exact_form_readers_take_only_their_encoding) {
  uint8_t buf[128];
  const uint8_t content[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  msgpack_writer w(bytes_mut(buf, sizeof buf));
  w.write_fixarray(14);
  w.write_fixstr(span<const char>("b2frame", 8));
  w.write_int16(-2);
  w.write_int32(-70000);
  w.write_int64(INT64_MIN);
  w.write_uint16(0xbeef);
  w.write_uint32(0xdeadbeefu);
  w.write_uint64(0x8000000000000001ull);
  w.write_map16(3);
  w.write_bin32(bytes_view(content, 5));
  w.write_ext(6, bytes_view(content, 16));
  REQUIRE_OK(w.err());
  const size_t n = w.position();

  heap_bytes copy(buf, n);
  msgpack_reader r(copy.view());
  CHECK_EQ(r.read_fixarray(), 14u);
  const span<const char> magic = r.read_fixstr();
  CHECK_EQ(magic.size(), 8u);
  CHECK(std::memcmp(magic.data(), "b2frame", 8) == 0);
  CHECK_EQ(r.read_int16_fixed(), -2);
  CHECK_EQ(r.read_int32_fixed(), -70000);
  CHECK_EQ(r.read_int64_fixed(), INT64_MIN);
  CHECK_EQ(r.read_uint16_fixed(), 0xbeefu);
  CHECK_EQ(r.read_uint32_fixed(), 0xdeadbeefu);
  CHECK_EQ(r.read_uint64_fixed(), 0x8000000000000001ull);
  CHECK_EQ(r.read_map16(), 3u);  // as written: not checked against the bytes left
  const bytes_view bin = r.read_bin32();
  CHECK_EQ(bin.size(), 5u);
  CHECK(bytes_equal(bin.data(), content, 5));
  const msgpack_ext ext = r.read_fixext16();
  CHECK_EQ(ext.type, 6);
  CHECK_EQ(ext.data.size(), 16u);
  CHECK(bytes_equal(ext.data.data(), content, 16));
  CHECK_OK(r.err());
  CHECK_EQ(r.position(), n);

  // Every strict prefix fails as truncated, within the input.
  for (size_t len = 0; len < n; ++len) {
    heap_bytes prefix(buf, len);
    msgpack_reader rp(prefix.view());
    (void)rp.read_fixarray();
    (void)rp.read_fixstr();
    (void)rp.read_int16_fixed();
    (void)rp.read_int32_fixed();
    (void)rp.read_int64_fixed();
    (void)rp.read_uint16_fixed();
    (void)rp.read_uint32_fixed();
    (void)rp.read_uint64_fixed();
    (void)rp.read_map16();
    (void)rp.read_bin32();
    (void)rp.read_fixext16();
    CHECK_ERR(rp.err(), errc::truncated);
    CHECK_LE(rp.position(), len);
  }
}

TESSERA_TEST(msgpack, exact_form_readers_refuse_other_encodings) {
  // Each value in an encoding that holds it but is not the pinned one: malformed, nothing consumed, sticky.
  struct refused {
    uint8_t bytes[8];
    size_t size;
    int which;
  };
  const refused cases[] = {
      {{0x01}, 1, 0},                    // int16 as a fixint
      {{0xd0, 0xfe}, 2, 0},              // int16 as int8
      {{0xd3, 0, 0, 0, 0, 0, 0, 0}, 8, 1},  // int32 as a (cut) int64
      {{0xd2, 0, 0, 0, 1}, 5, 2},        // int64 as int32
      {{0xcc, 7}, 2, 3},                 // uint16 as uint8
      {{0xd2, 0, 0, 0, 1}, 5, 4},        // uint32 as int32
      {{0xce, 0, 0, 0, 1}, 5, 5},        // uint64 as uint32
      {{0xdc, 0, 1, 0xc0}, 4, 6},        // fixarray as array16
      {{0x83}, 1, 7},                    // map16 as fixmap
      {{0xd9, 1, 'x'}, 3, 8},            // fixstr as str8
      {{0xc4, 1, 7}, 3, 9},              // bin32 as bin8
      {{0xc7, 1, 6, 7}, 4, 10},          // fixext16 as ext8
      {{0xc1}, 1, 2},                    // the reserved marker
  };
  for (const refused& c : cases) {
    msgpack_reader r(bytes_view(c.bytes, c.size));
    switch (c.which) {
      case 0: CHECK_EQ(r.read_int16_fixed(), 0); break;
      case 1: CHECK_EQ(r.read_int32_fixed(), 0); break;
      case 2: CHECK_EQ(r.read_int64_fixed(), 0); break;
      case 3: CHECK_EQ(r.read_uint16_fixed(), 0u); break;
      case 4: CHECK_EQ(r.read_uint32_fixed(), 0u); break;
      case 5: CHECK_EQ(r.read_uint64_fixed(), 0u); break;
      case 6: CHECK_EQ(r.read_fixarray(), 0u); break;
      case 7: CHECK_EQ(r.read_map16(), 0u); break;
      case 8: CHECK_EQ(r.read_fixstr().size(), 0u); break;
      case 9: CHECK_EQ(r.read_bin32().size(), 0u); break;
      default: CHECK_EQ(r.read_fixext16().data.size(), 0u); break;
    }
    CHECK_ERR(r.err(), errc::malformed);
    CHECK_EQ(r.position(), 0u);
    // The first error sticks: a later read that would succeed on its own does nothing.
    CHECK_EQ(r.read_raw(1).size(), 0u);
    CHECK_ERR(r.err(), errc::malformed);
  }

  // A bin32 whose length outruns the input is truncated, as with read_bin.
  const uint8_t long_bin[] = {0xc6, 0, 0, 1, 0, 1, 2};
  msgpack_reader rb(bytes_view(long_bin, sizeof long_bin));
  CHECK_EQ(rb.read_bin32().size(), 0u);
  CHECK_ERR(rb.err(), errc::truncated);
}

TESSERA_TEST(msgpack, lengths_past_what_the_format_or_size_t_holds_are_refused_unread) {
  // Counting mode reads nothing: the lengths alone decide (one valid byte stands for the claimed span).
  static const uint8_t one[1] = {0};
  msgpack_writer w;
  if constexpr (sizeof(size_t) > 4) {
    // An ext payload's length is a u32.
    w.write_ext(1, bytes_view(one, static_cast<size_t>(UINT32_MAX) + 1));
    CHECK_ERR(w.err(), errc::invalid_argument);
    CHECK_EQ(w.position(), 0u);
  } else {
    // Where size_t is 32 bits, a bin32 of 2^32-1 bytes and its head do not fit it.
    w.write_bin32(bytes_view(one, UINT32_MAX));
    CHECK_ERR(w.err(), errc::overflow);
    CHECK_EQ(w.position(), 0u);
  }
}
